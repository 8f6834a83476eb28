"""A chat experiment's `memory:` block made into a run's: resolved, checked, noted.

Shared by `llm-sim run` (conversations.build_spec) and chat sweeps (sweep_documents), so a
single run and a sweep's cell run with the same block and the same notes.
"""

from __future__ import annotations

from simulator.errors import UserError
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.services.blocks import resolve_memory
from simulator.worlds.chat.domain.experiment import Experiment

NONE_NOTE = (
    "memory: none, so later days open with the starting message alone (the day summaries are "
    "still written, and shown to no agent)"
)


def resolve(experiment: Experiment, memory_model: str) -> tuple[MemorySettings, list[str]]:
    """The block with every stream value fixed (a chat plans nothing), and a note for each
    value filled in; a bad block is a UserError naming its field, before anything is stored.
    `memory_model` names the model a stream's ratings and reflections go to."""
    block = experiment.memory
    summaries = block.day_summaries
    if summaries is not None and not block.is_stream:
        raise UserError(
            f"memory.day_summaries applies to a memory stream, and this block's kind is "
            f"{block.kind} (summary shows the day summaries, none shows none)",
            field="memory.day_summaries",
            fix="leave day_summaries out, or set memory.kind to stream",
        )
    memory, notes = resolve_memory(block.model_copy(update={"day_summaries": None}), False)
    if memory.is_stream:
        memory = memory.model_copy(update={"day_summaries": summaries is not False})
        if summaries is None:
            notes.append(
                "memory.day_summaries: true (not given; later days open with the day "
                "summaries beside the stream)"
            )
        notes.append(
            f"memory calls (ratings, reflections): {memory_model} (the summarizer's model)"
        )
    if memory.kind == "none":
        notes.append(NONE_NOTE)
    return memory, notes
