"""Ctrl-C and SIGTERM (what `docker stop`, systemd and batch schedulers send) stop a run at once
and alike: the request in flight is cancelled (its HTTP stream closed, so the server stops
generating), its ledger row says so, a sweep's leases are released, and the run is marked
`interrupted`, resumable from its last stored message. Then one line says how to resume, and
the process exits 130 (Ctrl-C) or 143 (SIGTERM)."""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Awaitable, Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol, TypeVar

from simulator.errors import StoreUnavailable
from simulator.logs import keep_session_logs

if TYPE_CHECKING:  # every command's start imports this module: asyncio and rich come with a run
    import asyncio

    from rich.console import Console

    from simulator.engine import events as ev

T = TypeVar("T")
SIGNALS = (signal.SIGINT, signal.SIGTERM)


class Stopped(KeyboardInterrupt):
    """Ctrl-C stopped a run and its line was printed: the CLI says nothing more (exit 130)."""


class Terminated(SystemExit):
    """SIGTERM stopped the command, after the same cleanup as Ctrl-C: exit status 143.

    A SystemExit rather than a KeyboardInterrupt, so that no menu or prompt that treats Ctrl-C
    as "go back" keeps the process alive when it was told to end. `announced`: whether the line
    saying what stopped was printed already."""

    def __init__(self, announced: bool = False) -> None:
        super().__init__(128 + signal.SIGTERM)
        self.announced = announced


class StopNote(Protocol):
    """What a command tells after it stopped early."""

    def line(self) -> str | None:
        """After Ctrl-C or SIGTERM: what stopped and how to resume it."""

    def resume(self) -> str | None:
        """After a store outage: the command that continues, as "run `llm-sim …`"."""


@dataclass(frozen=True)
class FixedNote:
    """A StopNote known in advance (a scoring pass: run it again)."""

    stopped: str
    again: str | None = None

    def line(self) -> str:
        return self.stopped

    def resume(self) -> str | None:
        return self.again


def run_until_stopped(
    make: Callable[[asyncio.Event], Awaitable[T]], err: Console, note: StopNote | None = None
) -> T:
    """Run `make(stop)` on a fresh event loop; Ctrl-C or SIGTERM sets `stop` and cancels it.

    Once what it started has unwound (statuses written, leases released), the `note`'s line
    is printed: what stopped and how to resume it. A StoreUnavailable leaves with the
    note's resume command."""
    import asyncio

    keep_session_logs()  # a run's records are worth a log folder (help and lists leave none)
    received: list[int] = []

    async def main() -> T:
        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        task = asyncio.current_task()

        def on_signal(signum: int) -> None:
            if not stop.is_set():
                err.print("Stopping: cancelling the request in flight…")
            received.append(signum)
            stop.set()
            if task is not None:
                task.cancel()

        for signum in SIGNALS:
            with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                loop.add_signal_handler(signum, on_signal, signum)
        try:
            return await make(stop)
        finally:
            for signum in SIGNALS:
                with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
                    loop.remove_signal_handler(signum)

    with _kept_sigterm_handler():
        try:
            return asyncio.run(main())
        except asyncio.CancelledError:
            pass
        except StoreUnavailable as exc:
            again = note.resume() if note is not None else None
            if again:
                exc.resume = again
            raise
    line = note.line() if note is not None else None
    if line:
        err.print(line, markup=False, highlight=False)
    if signal.SIGTERM in received:
        raise Terminated(announced=bool(line))
    raise Stopped() if line else KeyboardInterrupt()


class StoppedRuns:
    """The runs a command stored, so that its stop line names what to resume: an event sink
    (wrapping the command's own) that notes each run it hears of, less those that finished."""

    def __init__(self, on_event: Callable[[ev.Event], None] = lambda event: None) -> None:
        self._on_event = on_event
        self._runs: dict[str, None] = {}  # in the order they were stored or heard of
        self._finished: set[str] = set()

    def add(self, run_id: str) -> None:
        """A run stored and not started yet (a fork's later continuations)."""
        self._runs.setdefault(run_id)

    def __call__(self, event: ev.Event) -> None:
        from simulator.engine import events as ev

        run_id = getattr(event, "conversation_id", None)
        if run_id is not None:
            self._runs.setdefault(run_id)
            if isinstance(event, ev.ConversationFinished) and event.status != "interrupted":
                self._finished.add(run_id)
        self._on_event(event)

    def line(self) -> str:
        left = [run_id for run_id in self._runs if run_id not in self._finished]
        if not left:
            return "Stopped before a run was stored; nothing to resume."
        if len(left) == 1:
            return (
                f"Stopped: {left[0]} is kept and resumable; continue it with "
                f"llm-sim conversation resume {left[0]}"
            )
        return (
            f"Stopped: {', '.join(left)} are kept and resumable; continue each with "
            "llm-sim conversation resume ID"
        )

    def resume(self) -> str | None:
        left = [run_id for run_id in self._runs if run_id not in self._finished]
        if not left:
            return None
        if len(left) == 1:
            return f"run `llm-sim conversation resume {left[0]}`"
        return f"run `llm-sim conversation resume ID` for each of {', '.join(left)}"


_terminating: list[bool] = []


def terminate_on_sigterm(signum: int, frame: object) -> None:
    """The process's SIGTERM handler outside a run (reading the store, a prompt, an import):
    unwinds the command as Ctrl-C would, so what it holds is closed before exit status 143.
    Only the first signal raises: a second must not break off the cleanup the first began."""
    if not _terminating:
        _terminating.append(True)
        raise Terminated()


@contextlib.contextmanager
def sigterm_ends_the_command() -> Iterator[None]:
    """While the CLI runs, SIGTERM raises Terminated instead of killing the process outright."""
    _terminating.clear()
    try:
        previous = signal.signal(signal.SIGTERM, terminate_on_sigterm)
    except ValueError:  # not the main thread (an embedding application): leave it alone
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


@contextlib.contextmanager
def _kept_sigterm_handler() -> Iterator[None]:
    """The event loop resets SIGTERM to the default when it lets go of it; put ours back."""
    try:
        previous = signal.getsignal(signal.SIGTERM)
    except ValueError:
        previous = None
    try:
        yield
    finally:
        if previous is not None:
            with contextlib.suppress(ValueError):
                signal.signal(signal.SIGTERM, previous)
