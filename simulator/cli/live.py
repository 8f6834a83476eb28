"""Showing a running conversation: rich in a terminal, plain lines otherwise, nothing for --json."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markup import escape
from rich.rule import Rule

from simulator.engine import events as ev

if TYPE_CHECKING:  # the model access loads with a run, not with every screen showing roles
    from simulator.llm.access import LLMAccess

ROLE_COLOURS = (
    "cyan",
    "magenta",
    "green",
    "yellow",
    "blue",
    "red",
    "bright_cyan",
    "bright_magenta",
)


def role_colour(role: str, roles: list[str]) -> str:
    if role not in roles:
        roles.append(role)
    return ROLE_COLOURS[roles.index(role) % len(ROLE_COLOURS)]


class LiveView:
    """An engine event sink. `mode` is 'rich', 'plain' or 'quiet'."""

    def __init__(self, console: Console, mode: str):
        self.console = console
        self.mode = mode
        self.roles: list[str] = []
        self._status = None

    @classmethod
    def for_output(cls, console: Console, as_json: bool) -> LiveView:
        if as_json:
            return cls(console, "quiet")
        return cls(console, "rich" if sys.stdout.isatty() else "plain")

    def __call__(self, event: ev.Event) -> None:
        if self.mode == "quiet":
            return
        handler: Callable[[ev.Event], None] | None = getattr(
            self, f"_on_{type(event).__name__}", None
        )
        if handler:
            handler(event)

    def _plain(self, text: str) -> None:
        sys.stdout.write(text + "\n")
        sys.stdout.flush()

    def _on_DaysPlanned(self, event: ev.DaysPlanned) -> None:
        split = ", ".join(f"day {i + 1}: {n}" for i, n in enumerate(event.split))
        agents = ", ".join(f"{name} ({model})" for name, _, model in event.agents)
        for _, role, _ in event.agents:
            role_colour(role, self.roles)
        if self.mode == "plain":
            self._plain(f"{event.conversation_id}: agent turns per day: {split}; agents: {agents}")
        else:
            self.console.print(f"[bold]{event.conversation_id}[/bold] agent turns per day: {split}")
            self.console.print(f"agents: {escape(agents)}")

    def _on_DayStarted(self, event: ev.DayStarted) -> None:
        if self.mode == "plain":
            self._plain(f"--- day {event.day} ---")
        else:
            self.console.print(Rule(f"Day {event.day}"))

    def _on_TurnStarted(self, event: ev.TurnStarted) -> None:
        if self.mode == "rich":
            self._stop_status()
            self._status = self.console.status(f"{event.speaker} is writing…")
            self._status.start()

    def _on_MessageStored(self, event: ev.MessageStored) -> None:
        flags = "".join(
            f" [{flag}]"
            for flag, on in (
                ("trimmed", event.trimmed),
                ("empty", event.empty),
                ("fallback pick", event.fallback),
            )
            if on
        )
        place = f"[{event.day}:{event.index}]"  # as `conversation show` prints it, and `--at` takes
        if self.mode == "plain":
            self._plain(f"{place} {event.speaker}: {event.text}{flags}")
            return
        self._stop_status()
        colour = role_colour(event.role, self.roles)
        self.console.print(
            f"[dim]{escape(place)}[/] [bold {colour}]{escape(event.speaker)}[/]: "
            f"{escape(event.text)}[dim]{escape(flags)}[/]"
        )

    def _on_DaySummarised(self, event: ev.DaySummarised) -> None:
        if self.mode == "plain":
            self._plain(f"[day {event.day} summary] {event.summary}")
        else:
            self.console.print(
                f"[italic dim]Summary of day {event.day}: {escape(event.summary)}[/]"
            )

    def _on_ConversationFinished(self, event: ev.ConversationFinished) -> None:
        self._stop_status()
        text = f"{event.conversation_id} {event.status}" + (
            f": {event.error}" if event.error else ""
        )
        if self.mode == "plain":
            self._plain(text)
        else:
            self.console.print(f"[bold]{escape(text)}[/bold]")

    def _stop_status(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None

    def close(self) -> None:
        self._stop_status()


def pull_progress(console: Console) -> Callable[[str, int | None, int | None], None]:
    """Ollama pull progress: a rich bar in a terminal, else a line per 10% step on stderr."""
    if console.is_terminal:
        return _PullBar(console)
    last: dict[str, int] = {}

    def report(status: str, completed: int | None, total: int | None) -> None:
        if total:
            step = int(100 * (completed or 0) / total) // 10
            if last.get(status) == step:
                return
            last[status] = step
            console.print(f"pulling: {status} {step * 10}%", highlight=False)
        elif last.get(status) is None:
            last[status] = -1
            console.print(f"pulling: {status}", highlight=False)

    return report


class _PullBar:
    """One bar per layer being downloaded; plain status lines for the other steps."""

    def __init__(self, console: Console):
        from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn

        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            DownloadColumn(),
            console=console,
            transient=True,
        )
        self._tasks: dict[str, object] = {}

    def __call__(self, status: str, completed: int | None, total: int | None) -> None:
        if not total:
            self._progress.console.print(f"pulling: {status}", highlight=False)
            if status == "success":
                self._progress.stop()
            return
        if not self._tasks:
            self._progress.start()
        if status not in self._tasks:
            self._tasks[status] = self._progress.add_task(status, total=total)
        self._progress.update(self._tasks[status], completed=completed or 0, total=total)


def run_access(err: Console, as_json: bool, pools: dict[str, int] | None = None) -> LLMAccess:
    """The model access of one `llm-sim run`: pull progress on stderr unless --json, and the
    user's `--pool` sizes (the providers' defaults otherwise)."""
    from simulator.llm.access import LLMAccess
    from simulator.llm.retry import PoolRegistry

    return LLMAccess(
        pools=PoolRegistry(sizes=pools) if pools else None,
        on_pull_progress=None if as_json else pull_progress(err),
    )
