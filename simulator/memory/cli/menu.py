"""A conversation's 'Browse memories' entry: pick an agent, then its stream over time, its
reflection trees or what one step's prompt showed: the views of `llm-sim conversation memory`,
from the same function."""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.errors import UserError
from simulator.memory.analysis.browser import browse_memories, memory_agents, stored_steps
from simulator.memory.analysis.runs import declared_memory
from simulator.memory.cli.view import show_memories

PAGE_RECORDS = 40  # a longer stream is shown in a pager


def offered(app: AppContext, doc: dict) -> bool:
    """Whether a run has memories to browse: only a memory stream keeps them (a chat's
    transcript and day summaries, a grid's rolling summary are what View shows). A run that
    names no memory kind has the default, the world's own summary. Read from the run and its
    experiment only: the menu asks this every time it is drawn."""
    return declared_memory(app.store, doc) == "stream"


def browse(app: AppContext, run_id: str) -> None:
    """Until Back: whose memories (asked when several agents have some), then which view."""
    try:
        run = memory_agents(app.store, run_id)
    except UserError as exc:
        ask.show_error(exc)
        return
    while True:
        if len(run.agents) == 1:
            agent = 0
        else:
            choices = [
                (f"{name} — {n} memor{'y' if n == 1 else 'ies'}", str(k))
                for k, (_, name, n) in enumerate(run.agents)
            ]
            picked = ask.select("Whose memories?", [*choices, ("Back", "")])
            if not picked:
                return
            agent = int(picked)
        index, name, _ = run.agents[agent]
        if not _views(app, run_id, index, name, run.step_word, several=len(run.agents) > 1):
            return


def _views(app: AppContext, run_id: str, agent: int, name: str, word: str, several: bool) -> bool:
    """One agent's views until Back (False) or 'Another agent' (True)."""
    choices = [
        ("Stream over time", "stream"),
        ("Reflection trees (thought -> evidence)", "tree"),
        (f"What one {word}'s prompt showed", "step"),
    ]
    if several:
        choices.append(("Another agent", "agent"))
    while True:
        picked = ask.select(f"Memories of {name}", [*choices, ("Back", "back")])
        if picked in ("back", "agent"):
            return picked == "agent"
        step = None
        if picked == "step":
            step = _ask_step(app, run_id, word)
            if step is None:
                continue
        try:
            browsed = browse_memories(app.store, run_id, agent=agent, step=step)
        except UserError as exc:  # a step inside the range that the run did not store
            ask.show_error(exc)
            continue
        long = len(browsed.agents[0].records) > PAGE_RECORDS and app.console.is_terminal
        if picked == "stream" and long:
            with app.console.pager(styles=False):
                show_memories(app.console, browsed)
        else:
            show_memories(app.console, browsed, tree=picked == "tree", stream=picked == "stream")


def _ask_step(app: AppContext, run_id: str, word: str) -> int | None:
    """A step whose rows record what their prompts showed; None when no step does."""
    steps = stored_steps(app.store, run_id)
    if not steps:
        app.console.print(
            f"No {word} of this run records which memories its prompts showed.", markup=False
        )
        return None
    return ask.ask_int(f"Which {word}?", steps[0], steps[-1], default=steps[-1])
