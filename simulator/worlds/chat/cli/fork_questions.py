"""The browser's questions of what a chat fork changes from its message on (one model for every
agent, the speaker method, the sections' variants): cli/forking.py's `ask_changes`."""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.domain.vocabulary import SPEAKER_METHODS
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.domain.variants import variant_slots
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services.runs import experiment_snapshot

KEEP = "\x00keep"  # "keep the parent's" in a picker (no model, method or variant starts with NUL)
TYPE = "\x00type"  # "type a model string"


def ask_changes(app: AppContext, doc: dict, spec: ConversationSpec) -> dict:
    """The model, the speaker method and the variants from the fork point (`forks.plan`'s
    llm, speaker and variants; None and [] keep the parent's)."""
    experiment = Experiment.from_stored(experiment_snapshot(app.store, doc))
    return {
        "llm": _ask_model(app, spec, experiment),
        "speaker": _ask_speaker(spec),
        "variants": _ask_variants(spec, experiment),
    }


def _ask_model(app: AppContext, spec: ConversationSpec, experiment: Experiment) -> str | None:
    """One model for every agent from the fork point (--llm), or None to keep the parent's."""
    current = ", ".join(f"{role}: {llm_name(c)}" for role, c in spec.role_llms.items())
    choices = [(f"keep the parent's ({current})", KEEP)]
    choices += [(f"every agent on {llm_name(m)}", m.key) for m in experiment.llms]
    choices.append(("type a model string (e.g. ollama:llama3)", TYPE))
    picked = ask.select("Model for the agents from the fork point", choices, default=KEEP)
    if picked == KEEP:
        return None
    if picked == TYPE:
        return ask.ask_required("Model string (every agent uses it)")
    return picked


def _ask_speaker(spec: ConversationSpec) -> str | None:
    """The speaker method from the fork point, or None to keep the parent's. A fork runs
    unattended, so manual is not offered (a manual parent's fork must pick another)."""
    from simulator.worlds.chat.cli.perform_menu import SPEAKER_HELP

    methods = [m for m in SPEAKER_METHODS if m != "manual"]
    choices = [(f"{m} — {SPEAKER_HELP[m]}", m) for m in methods]
    if spec.speaker_method != "manual":
        choices.insert(0, (f"keep the parent's ({spec.speaker_method})", KEEP))
    default = KEEP if spec.speaker_method != "manual" else "round_robin"
    picked = ask.select("How is the next speaker chosen from the fork point?", choices, default)
    return None if picked == KEEP else picked


def _ask_variants(spec: ConversationSpec, experiment: Experiment) -> list[str]:
    """SECTION=NAME for each section whose variant changes (asked only when some have any)."""
    slots = variant_slots(experiment)
    if not slots or not ask.confirm("Change the variants of sections?", default=False):
        return []
    chosen = []
    for section, names in slots.items():
        current = spec.variant.get(section)
        keep = f"keep ({current})" if current else "keep (the section's own content)"
        picked = ask.select(
            f"Variant of {section}", [(keep, KEEP), *((n, n) for n in names)], default=KEEP
        )
        if picked != KEEP:
            chosen.append(f"{section}={picked}")
    return chosen
