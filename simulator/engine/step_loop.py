"""One step loop for every world: the group chat, the 2D community, and the worlds to come.

A world owns its rules (who acts, what each actor observes, how a reply becomes an action, how
the actions change the state) and its memory; the loop owns what every run shares: announcing
the plan, the status written at each change, the user's stop between steps, and a failure or
cancellation written as such instead of leaving a run `running` behind.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from simulator.engine import events as ev
from simulator.engine.budget import CapReached, stop_reason
from simulator.engine.ports import Recorder, TranscriptTaken
from simulator.llm.access import LLMAccess
from simulator.llm.embeddings import Embedder


class StepFailed(Exception):
    """A call failed after every retry; the run is marked failed with this message."""


class World(Protocol):
    """A world's rules as the loop drives them; see DESIGN.md, "Worlds and memories"."""

    async def prepare(self) -> None:
        """Read what the run already stored (a resume) and announce the plan as an event."""

    async def advance(self) -> bool:
        """Bring the world to its next due step (a chat closes a finished day with its
        summary and opens the next); False when nothing is left to do."""

    async def step(self) -> None:
        """One step: the actors' calls, the actions parsed, the state changed and stored."""

    def done_fields(self) -> dict:
        """Fields written with the final `done` status (a chat's whole summary list)."""


@dataclass
class RunContext:
    """Everything one run of a world needs besides its rules: its spec, the models, where it
    writes (the recorder port) and reports, the user's stop; the store and the backends arrive
    from outside. A world's run context adds what its rules read besides the spec."""

    run_id: str
    spec: Any
    llms: LLMAccess
    recorder: Recorder
    on_event: Callable[[ev.Event], None] = lambda event: None
    stop: asyncio.Event = field(default_factory=asyncio.Event)
    embedder: Embedder | None = None  # a memory stream's (spec.memory.kind == "stream")


@dataclass
class StepRun:
    """What the loop needs besides the world: where to write status and where to report."""

    run_id: str
    recorder: Recorder
    on_event: Callable[[ev.Event], None] = lambda event: None
    stop: asyncio.Event = field(default_factory=asyncio.Event)


async def run_world(run: StepRun, world: World) -> str:
    """Run (or resume) a world to the end; return the final status."""
    recorder = run.recorder
    try:
        await world.prepare()
        recorder.mark("running")
        while await world.advance():
            if run.stop.is_set():
                return _finished(run, "interrupted", stop_reason("stopped by the user"))
            await world.step()
        recorder.mark("done", **world.done_fields())
        run.on_event(ev.ConversationFinished(run.run_id, "done", None, recorder.counters))
        return "done"
    except StepFailed as exc:
        return _finished(run, "failed", str(exc))
    except CapReached as exc:  # before a call left: what was in flight finished, resumable
        return _finished(run, "interrupted", str(exc))
    except (asyncio.CancelledError, KeyboardInterrupt) as exc:
        _interrupted(run, _why_cancelled(exc))
        raise
    except TranscriptTaken:
        raise  # another worker owns the run now: nothing of ours to write
    except Exception as exc:
        outage = recorder.outage(exc)
        if outage is not None:  # a full disk, a server gone: not the run's fault
            _interrupted(run, f"stopped: {outage.what}")
            if outage is exc:
                raise
            raise outage from exc
        # never leave a run `running` behind an unexpected error
        recorder.mark("failed", f"unexpected error: {type(exc).__name__}: {exc}")
        raise


def _why_cancelled(exc: BaseException) -> str:
    """The reason a canceller gave (a sweep stopped by its store: `task.cancel(why)`), else
    the user's stop."""
    given = exc.args[0] if isinstance(exc, asyncio.CancelledError) and exc.args else None
    return given if isinstance(given, str) and given else "stopped by the user"


def _interrupted(run: StepRun, why: str) -> None:
    """Mark the run `interrupted` if the store still takes the write; when it does not (its
    disk full, its server gone), the run stays `running` with its lease, which a resume takes
    over as it takes over a killed run's."""
    recorder = run.recorder
    if recorder.unreachable is None:
        try:
            recorder.mark("interrupted", why)
        except Exception as exc:
            if recorder.outage(exc) is None:
                raise
    run.on_event(ev.ConversationFinished(run.run_id, "interrupted", None, run.recorder.counters))


def _finished(run: StepRun, status: str, why: str) -> str:
    run.recorder.mark(status, why)
    shown = why if status == "failed" else None  # an interruption is no error to display
    run.on_event(ev.ConversationFinished(run.run_id, status, shown, run.recorder.counters))
    return status
