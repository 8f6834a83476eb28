"""Prompt variants: which sections can vary, and an experiment with a choice applied (pure)."""

from __future__ import annotations

from simulator.worlds.chat.domain.experiment import Experiment, Section

SHARED = "shared"


def variant_slots(experiment: Experiment) -> dict[str, list[str]]:
    """`Role/Title` or `shared/Title` -> the variant names that section offers."""
    slots: dict[str, list[str]] = {}
    for role in experiment.roles:
        for section in role.sections:
            if section.variants:
                slots[f"{role.name}/{section.title}"] = section.variant_names()
    for section in experiment.shared_sections:
        if section.variants:
            slots[f"{SHARED}/{section.title}"] = section.variant_names()
    return slots


def apply_variants(experiment: Experiment, choice: dict[str, str]) -> Experiment:
    """The experiment as one cell of a sweep sees it: chosen contents, blank sections left out.

    Sections with variants that the choice does not name keep their own content.
    """
    slots = variant_slots(experiment)
    for slot in choice:
        if slot not in slots:
            known = ", ".join(slots) or "none"
            raise KeyError(f"no section {slot!r} with variants; sections with variants: {known}")
    roles = []
    for role in experiment.roles:
        sections = _choose(role.sections, role.name, choice)
        roles.append(role.model_copy(update={"sections": sections}))
    shared = _choose(experiment.shared_sections, SHARED, choice)
    return experiment.model_copy(update={"roles": roles, "shared_sections": shared})


def _choose(sections: list[Section], owner: str, choice: dict[str, str]) -> list[Section]:
    chosen: list[Section] = []
    for section in sections:
        name = choice.get(f"{owner}/{section.title}")
        if name is None:
            chosen.append(section.model_copy(update={"variants": None, "default_variant": None}))
            continue
        picked = section.with_variant(name)
        if picked is not None:
            chosen.append(picked)
    return chosen
