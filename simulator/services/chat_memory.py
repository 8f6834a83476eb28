"""A chat experiment's `memory:` block made into a run's: resolved, checked, noted.

Shared by `llm-sim run` (conversations.build_spec) and chat sweeps (sweep_documents), so a
single run and a sweep's cell run with the same block and the same notes.
"""

from __future__ import annotations

from simulator.domain.experiment import Experiment
from simulator.domain.memory.settings import MemorySettings
from simulator.errors import UserError
from simulator.llm.embeddings import Embedder, create_embedder

NONE_NOTE = (
    "memory: none, so later days open with the starting message alone (the day summaries are "
    "still written, and shown to no agent)"
)


def resolve(experiment: Experiment, memory_model: str) -> tuple[MemorySettings, list[str]]:
    """The block with every stream value fixed (a chat plans nothing), and a note for each
    value filled in; a bad block is a UserError naming its field, before anything is stored.
    `memory_model` names the model a stream's ratings and reflections go to."""
    try:
        memory, notes = experiment.memory.resolved(world_plans=False)
    except ValueError as exc:
        raise UserError(
            str(exc).removeprefix("memory.planning: "),
            field="memory.planning",
            fix="leave planning out of the chat experiment's memory block, or set it to false",
        ) from None
    if memory.is_stream:
        create_embedder(memory.embedder, cached=False)  # a bad name: a UserError, nothing stored
        notes.append(
            f"memory calls (ratings, reflections): {memory_model} (the summarizer's model)"
        )
    if memory.kind == "none":
        notes.append(NONE_NOTE)
    return memory, notes


def embedder_for(memory: MemorySettings) -> Embedder | None:
    """The embedder a stored run's stream uses (None without a stream)."""
    return create_embedder(memory.embedder) if memory.is_stream else None
