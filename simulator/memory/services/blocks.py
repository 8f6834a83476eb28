"""An experiment's `memory:` block made ready for a run, in every world: each stream value
fixed (with a note per default), the embedder's name checked before anything is stored, and a
block that asks what its world cannot do refused as a UserError naming the field."""

from __future__ import annotations

from simulator.errors import UserError
from simulator.llm.base import FatalBackendError
from simulator.llm.embeddings import Embedder, create_embedder, require_available
from simulator.memory.domain.settings import MemorySettings


def resolve_memory(
    block: MemorySettings, world_plans: bool = True
) -> tuple[MemorySettings, list[str]]:
    """The resolved block and its notes (planning refused where the world has no hours;
    `day_summaries` refused outside the chat, whose resolve calls this with it left out)."""
    if block.day_summaries is not None:
        raise UserError(
            "memory.day_summaries decides whether a chat's later days open with the day "
            "summaries; this world has no day summaries",
            field="memory.day_summaries",
            fix="leave memory.day_summaries out of this experiment's memory block",
        )
    try:
        memory, notes = block.resolved(world_plans=world_plans)
    except ValueError as exc:  # planning in a world without simulated hours
        raise UserError(
            str(exc).removeprefix("memory.planning: "),
            field="memory.planning",
            fix="leave memory.planning out of the experiment's memory block, or set it to false",
        ) from None
    if memory.is_stream:
        check_embedder(memory.embedder)
    return memory, notes


def check_embedder(spec: str | None) -> None:
    """Refuse, before anything is stored, an embedder that cannot work here: a bad name, a
    library not installed, an unset key or `${VAR}` (each a UserError naming what to do)."""
    require_available(spec)
    try:
        create_embedder(spec, cached=False)
    except FatalBackendError as exc:
        raise UserError(str(exc), field="memory.embedder") from None


def embedder_for(memory: MemorySettings) -> Embedder | None:
    """The embedder a stored run's stream uses (None without a stream); a library missing on
    this machine is refused before the run starts, so a resume leaves the run resumable."""
    if not memory.is_stream:
        return None
    require_available(memory.embedder)
    return create_embedder(memory.embedder)
