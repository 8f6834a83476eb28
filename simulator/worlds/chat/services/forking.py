"""The group chat's replays and forks (simulator/services/fork_parts.py).

A chat forks at a message (`--at DAY:INDEX`, services/forks.py), optionally with the
researcher's text there, and changes from that point on the agents' models, the speaker method
and the variants (fork_changes.py); a replay puts every call (the agents', the manager's, the
summarizer's) on another model under `--llm`."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from simulator.domain.llm_choice import LLMChoice
from simulator.errors import UserError
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.services import fork_changes as changes

HELPERS = ("manager_llm", "summarizer_llm")  # the calls beside the agents', when set


def with_models(
    spec: ConversationSpec, replace: Callable[[LLMChoice], LLMChoice]
) -> ConversationSpec:
    update: dict = {"role_llms": {r: replace(c) for r, c in spec.role_llms.items()}}
    for name in HELPERS:
        choice = getattr(spec, name)
        if choice is not None:
            update[name] = replace(choice)
    return spec.model_copy(update=update)


def replay_refusal(doc: dict, spec: ConversationSpec, llm: str | None) -> UserError | None:
    if spec.speaker_method != "manual":
        return None
    return UserError(
        f"{doc['_id']} chose its speakers by hand (speaker method manual), and a replay "
        "cannot ask you again",
        fix="replay a run whose speakers the engine chose",
    )


def fork_changes(
    doc: dict,
    experiment: Experiment,
    spec: ConversationSpec,
    *,
    llm: str | None,
    llm_for: Sequence[str],
    variants: Sequence[str],
    speaker: str | None,
    notes: list[str],
    defaults: list[str],
) -> dict:
    """The spec's changes from the fork point on (the seed aside), each said in `notes`."""
    update = changes.changed_models(experiment, spec, llm, llm_for, notes, defaults)
    update.update(changes.changed_speaker(spec, speaker, notes, defaults))
    if update.get("speaker_method", spec.speaker_method) == "manual":
        raise UserError(
            f"{doc['_id']} chose its speakers by hand (speaker method manual), and a fork runs "
            "unattended",
            field="--speaker",
            fix="give the continuations a method, e.g. --speaker round_robin",
        )
    if variants:
        update["variant"] = changes.variants(experiment, variants, spec.variant)
        notes.append(f"variants from the fork point: {update['variant']}")
    return update
