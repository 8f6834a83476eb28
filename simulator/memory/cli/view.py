"""A run's memory streams on screen (`llm-sim conversation memory`, the menu's 'Browse
memories'): each agent's stream as a table, each thought over its evidence as a tree, and what
one step's prompts showed."""

from __future__ import annotations

from rich.console import Console
from rich.rule import Rule
from rich.table import Table
from rich.tree import Tree

from simulator.cli.transcript_view import natural_width, shown
from simulator.memory.analysis.browser import (
    AgentMemories,
    EvidenceNode,
    MemoryBrowse,
    StepRetrieval,
)
from simulator.memory.domain.records import MemoryRecord

FALLBACK = "[yellow](fallback)[/]"
FALLBACK_NOTE = "(fallback): the model's importance rating did not parse, so the default was stored"
TYPE_STYLE = {"observation": "cyan", "chat": "green", "thought": "magenta", "plan": "blue"}
_JUSTIFY = {"#": "right", "depth": "right"}
MAX_STEPS_LISTED = 8  # a record retrieved more often shows its first steps and a count


def show_memories(
    console: Console, browse: MemoryBrowse, *, tree: bool = False, stream: bool | None = None
) -> None:
    """The stream of each agent (unless a step was asked for, or `stream` says otherwise),
    the evidence trees with `tree`, and a step's retrievals when the browse has a step."""
    if stream is None:
        stream = browse.step is None
    when = (
        f"times as day hh:mm (minute 0 is {browse.clock.render(0)})"
        if browse.clock
        else "times in simulated minutes since the run's start"
    )
    kept = f"; {browse.type} records only" if browse.type else ""
    console.print(
        f"[bold]{browse.run_id}[/bold] — memory streams ({browse.kind} run); {when}{kept}"
    )
    fell_back = False
    for agent in browse.agents:
        console.print(Rule(f"{shown(agent.name)} (agent {agent.index}) · {_count(agent, browse)}"))
        if stream:
            fell_back |= _stream(console, browse, agent)
        if tree:
            fell_back |= _trees(console, browse, agent)
        if browse.step is not None:
            fell_back |= _retrieved(console, browse, agent)
    if fell_back:
        console.print(f"[dim]{FALLBACK_NOTE}[/]")


def _count(agent: AgentMemories, browse: MemoryBrowse) -> str:
    stored = f"{len(agent.stream)} memor{'y' if len(agent.stream) == 1 else 'ies'}"
    if not browse.type:
        return stored
    kept = len(agent.records)
    return f"{stored}, {kept} {browse.type}{'' if kept == 1 else 's'}"


def _importance(record: MemoryRecord) -> str:
    return f"{record.importance}{' ' + FALLBACK if record.importance_fallback else ''}"


def _type(record: MemoryRecord) -> str:
    return f"[{TYPE_STYLE.get(record.type, 'white')}]{record.type}[/]"


def _steps(numbers: list[int]) -> str:
    listed = ", ".join(str(n) for n in numbers[:MAX_STEPS_LISTED])
    more = len(numbers) - MAX_STEPS_LISTED
    return f"{listed} (+{more} more)" if more > 0 else listed


def _stream(console: Console, browse: MemoryBrowse, agent: AgentMemories) -> bool:
    """The table when it fits the screen, else two lines per record (a squeezed table
    wraps every memory into a narrow column)."""
    if not agent.records:
        what = f"no {browse.type} records" if browse.type else "no memories stored"
        console.print(f"  [dim]{what}[/]")
        return False
    seqs = {r.id: r.seq for r in agent.stream}
    steps = browse.minutes_per_step is not None  # the step each record was made at
    columns = ["#", "time", *([browse.step_word] if steps else []), "type", "importance"]
    table = Table(show_edge=False, pad_edge=False)
    for column in (*columns, "depth", "memory", f"retrieved at {browse.step_word}"):
        table.add_column(column, no_wrap=column in columns, justify=_JUSTIFY.get(column))
    rows = []
    for r in agent.records:
        cites = ", ".join(f"#{seqs[e]}" if e in seqs else e for e in r.evidence)
        text = shown(r.text) + (f" [dim](because of {cites})[/]" if cites else "")
        when = _steps(agent.retrieved_at.get(r.id, []))
        rows.append((r, text, when))
        made = [_made_at(browse, r)] if steps else []
        cells = [str(r.seq), browse.time(r.created), *made, _type(r), _importance(r)]
        table.add_row(*cells, str(r.depth), text, when)
    if natural_width(console, table) <= console.width:
        console.print(table)
    else:
        for r, text, when in rows:
            seen = f" · retrieved at {browse.step_word} {when}" if when else ""
            console.print(
                f"[bold]#{r.seq}[/] {_type(r)} · {_when(browse, r)} · importance "
                f"{_importance(r)} · depth {r.depth}{seen}"
            )
            console.print(f"    {text}")
    return any(r.importance_fallback for r in agent.records)


def _made_at(browse: MemoryBrowse, r: MemoryRecord) -> str:
    step = browse.step_of(r)
    return "" if step is None else str(step)


def _when(browse: MemoryBrowse, r: MemoryRecord) -> str:
    """'minute 30 (step 3)', or the time alone when the run's minutes per step are unknown."""
    step = browse.step_of(r)
    made = "" if step is None else f" ({browse.step_word} {step})"
    return f"{browse.time(r.created)}{made}"


def _line(browse: MemoryBrowse, r: MemoryRecord) -> str:
    return (
        f"#{r.seq} {_type(r)} · {_when(browse, r)} · importance {_importance(r)}"
        f" · depth {r.depth}: {shown(r.text)}"
    )


def _branch(parent: Tree, browse: MemoryBrowse, node: EvidenceNode) -> bool:
    if node.record is None:
        parent.add(f"[red]{shown(node.id)}: not stored[/]")
        return False
    if node.repeated:
        parent.add(f"#{node.record.seq} [dim](already above: a cycle)[/]")
        return False
    branch = parent.add(_line(browse, node.record))
    fell_back = node.record.importance_fallback
    for child in node.evidence:
        fell_back |= _branch(branch, browse, child)
    return fell_back


def _trees(console: Console, browse: MemoryBrowse, agent: AgentMemories) -> bool:
    trees = agent.trees()
    if not trees:
        console.print("  [dim]no thoughts: nothing rests on evidence[/]")
        return False
    fell_back = False
    for node in trees:
        assert node.record is not None
        root = Tree(_line(browse, node.record))
        fell_back |= node.record.importance_fallback
        for child in node.evidence:
            fell_back |= _branch(root, browse, child)
        if not node.evidence:
            root.add("[dim]cites no evidence[/]")
        console.print(root)
    return fell_back


def _retrieved(console: Console, browse: MemoryBrowse, agent: AgentMemories) -> bool:
    word = browse.step_word
    if not agent.steps:
        console.print(f"  [dim]no row at {word} {browse.step}[/]")
        return False
    fell_back = False
    for found in agent.steps:
        fell_back |= _one_step(console, browse, word, found)
    return fell_back


def _one_step(console: Console, browse: MemoryBrowse, word: str, found: StepRetrieval) -> bool:
    if not found.recorded:
        console.print(f"  [dim]{word} {found.step}: what the prompt showed is not recorded[/]")
        return False
    total = len(found.records) + len(found.missing)
    console.print(
        f"[bold]{word} {found.step}[/]: the prompt showed {total} "
        f"memor{'y' if total == 1 else 'ies'}"
    )
    for r in found.records:
        console.print(f"  {_line(browse, r)}")
    for record_id in found.missing:
        console.print(f"  [red]{shown(record_id)}: not stored[/]")
    return any(r.importance_fallback for r in found.records)
