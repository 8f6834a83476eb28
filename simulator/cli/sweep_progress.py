"""Sweep progress: a rich bar in a terminal, a plain line every few seconds otherwise."""

from __future__ import annotations

import sys
import time

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from simulator.domain.plural import count
from simulator.engine.sweep_runner import SweepProgress
from simulator.llm.retry import EndpointPool
from simulator.logs import redact


def describe(p: SweepProgress) -> str:
    """One progress line, kept short so that a small sweep's fits 80 columns (failures are
    named only once there are some)."""
    eta = p.eta_s
    eta_text = f"{eta:,.0f} s" if eta is not None else "?"
    failed = f", {p.failed:,} failed" if p.failed else ""
    return (
        f"{p.done:,}/{p.total:,} done, {p.running_here} running{failed}, {p.remaining:,} left · "
        f"{p.calls_per_s:,.0f} calls/s, {p.tokens_per_s:,.0f} tok/s · ETA {eta_text}"
    )


POOL_SOURCES = {
    "--pool": "set by --pool",
    "--concurrency": "follows --concurrency",
    "default": "this provider's fixed size",
}


def pool_line(pool: EndpointPool) -> str:
    why = POOL_SOURCES.get(pool.source, pool.source)
    where = redact(pool.key)  # a base URL may carry a password
    return f"pool {where}: up to {count(pool.size, 'call')} at once ({why})"


class SweepDisplay:
    def __init__(self, console: Console, quiet: bool, plain_every_s: float = 5.0):
        self.quiet = quiet
        self.rich = not quiet and sys.stdout.isatty()
        self.console = console
        self.plain_every_s = plain_every_s
        self._last_plain = 0.0
        self._progress: Progress | None = None
        self._task = None

    def __enter__(self) -> SweepDisplay:
        if self.rich:
            self._progress = Progress(
                TextColumn("[bold]sweep"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("{task.description}"),
                console=self.console,
            )
            self._progress.start()
            self._task = self._progress.add_task("", total=None)
        return self

    def pool_opened(self, pool: EndpointPool) -> None:
        """Name an endpoint's pool when the sweep first uses it: its size and where it came from."""
        if self.quiet:
            return
        line = pool_line(pool)
        if self._progress is not None:
            self._progress.console.print(line, markup=False, highlight=False)
        else:  # beside the run's header line, on stderr
            sys.stderr.write(line + "\n")
            sys.stderr.flush()

    def __call__(self, p: SweepProgress) -> None:
        if self.quiet or p is None:
            return
        if self._progress is not None:
            self._progress.update(
                self._task, total=p.total, completed=p.done + p.failed, description=describe(p)
            )
            return
        moment = time.monotonic()
        # the last state is printed once, by the command, when the sweep has finished
        if moment - self._last_plain >= self.plain_every_s and p.remaining:
            self._last_plain = moment
            sys.stdout.write(describe(p) + "\n")
            sys.stdout.flush()

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()
