"""What a chat fork changes from its fork point on (`conversation fork --llm/--llm-for/--speaker/
--variant`): each change checked against the parent and the experiment, and said in a sentence
(`notes`: what the fork changes; `defaults`: what it chose because nobody said)."""

from __future__ import annotations

from collections.abc import Sequence

from simulator.domain.vocabulary import SPEAKER_METHODS
from simulator.errors import UserError
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.variants import variant_slots
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services import runs as conversations
from simulator.worlds.chat.services.runs import choose_llm


def variants(experiment: Experiment, pairs: Sequence[str], current: dict) -> dict[str, str]:
    slots = variant_slots(experiment)
    chosen = dict(current)
    for pair in pairs:
        section, sep, name = pair.partition("=")
        section, name = section.strip(), name.strip()
        if not sep or not name:
            raise UserError(
                f"{pair!r} is not SECTION=NAME",
                field="--variant",
                fix="write e.g. --variant 'Guard/Personality=kind'",
            )
        if section not in slots:
            known = ", ".join(slots) or "none"
            raise UserError(
                f"no section {section!r} with variants (sections with variants: {known})",
                field="--variant",
                fix="name a section as Role/Title or shared/Title",
            )
        if name not in slots[section]:
            raise UserError(
                f"{section} has no variant {name!r} (it offers {', '.join(slots[section])})",
                field="--variant",
                fix="pick one of those",
            )
        chosen[section] = name
    return chosen


def changed_models(
    experiment: Experiment,
    spec: ConversationSpec,
    llm: str | None,
    llm_for: Sequence[str],
    notes: list[str],
    defaults: list[str],
) -> dict:
    update: dict = {}
    if not llm and not llm_for:
        return update
    role_llms = dict(spec.role_llms)
    if llm:
        every = choose_llm(experiment, llm, "--llm", defaults)
        role_llms = dict.fromkeys(role_llms, every)
    for role, model in conversations.parse_role_models(tuple(llm_for), experiment).items():
        role_llms[role] = choose_llm(experiment, model, "--llm-for", defaults)
    update["role_llms"] = role_llms
    changed = [f"{r}: {llm_name(c)}" for r, c in role_llms.items()]
    notes.append(f"agents' models from the fork point: {', '.join(changed)}")
    kept = [
        f"{name} {llm_name(choice)}"
        for name, choice in (("manager", spec.manager_llm), ("summarizer", spec.summarizer_llm))
        if choice is not None
    ]
    if kept:
        defaults.append(f"kept from the parent: {', '.join(kept)} (--llm changes the agents only)")
    return update


def changed_speaker(
    spec: ConversationSpec, speaker: str | None, notes: list[str], defaults: list[str]
) -> dict:
    if speaker is None or speaker == spec.speaker_method:
        return {}
    if speaker not in SPEAKER_METHODS or speaker == "manual":
        offered = ", ".join(m for m in SPEAKER_METHODS if m != "manual")
        raise UserError(
            f"{speaker!r} is not a speaker method a fork can run unattended",
            field="--speaker",
            fix=f"use one of {offered}",
        )
    update: dict = {"speaker_method": speaker}
    notes.append(
        f"speaker method from the fork point: {speaker} (the parent's: {spec.speaker_method})"
    )
    if speaker == "auto" and spec.manager_llm is None:
        first = next(iter(spec.role_llms.values()))
        update["manager_llm"] = first
        defaults.append(f"manager_llm: {llm_name(first)} (not given; the first role's model)")
    return update
