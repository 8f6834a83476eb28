"""What the memory browser needs to know about a run beyond its memories: its agents' names,
what its rows are called and which memories each row's prompt showed, and, for a run with no
memory stream, what its agents remember instead."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.analysis.world_parts import WorldAnalysis, analysis_of
from simulator.domain.plural import nouns
from simulator.domain.world import domain_of
from simulator.errors import UserError
from simulator.store.store import Store
from simulator.worlds import kind_of

LISTED_NAMES = 20  # an unknown agent's error lists this many names
MINUTES_PER_DAY = 24 * 60


@dataclass(frozen=True)
class SimClock:
    """Simulated minutes as a time of day: minute 0 is `start` minutes after midnight of
    day `first_day`."""

    start: int = 0
    first_day: int = 1

    def render(self, minute: int) -> str:
        day, rest = divmod(self.start + minute, MINUTES_PER_DAY)
        return f"day {self.first_day + day} {rest // 60:02d}:{rest % 60:02d}"

    @classmethod
    def from_stored(cls, value: Any) -> SimClock | None:
        """A clock stored on a run: "HH:MM", minutes after midnight, or a mapping with
        `start` (either form) and optionally `first_day`. None when there is none or it is
        unreadable (times are then shown as minutes)."""
        if isinstance(value, dict):
            start, first = value.get("start", 0), value.get("first_day", 1)
        else:
            start, first = value, 1
        if isinstance(start, str):
            hours, sep, minutes = start.partition(":")
            if not (sep and hours.strip().isdigit() and minutes.strip().isdigit()):
                return None
            start = int(hours) * 60 + int(minutes)
        if value is None or not isinstance(start, int) or not isinstance(first, int):
            return None
        return cls(start % MINUTES_PER_DAY, first)


def clock_of(doc: dict) -> SimClock | None:
    """The run's simulated clock, where its spec keeps one (`clock`, under the spec, its
    world, settings or memory); a grid's memory stream runs on the day clock its plans use
    (minute 0 is DAY_START_HOUR of day 1); else None (times shown as minutes: a chat's or a
    network's minutes count turns and rounds, not hours of a day): a world's analysis part says
    where its streams' day starts (STREAM_DAY_START)."""
    spec = doc.get("spec") or {}
    for holder in (spec, spec.get("memory"), spec.get("world"), spec.get("settings")):
        if isinstance(holder, dict) and holder.get("clock") is not None:
            return SimClock.from_stored(holder["clock"])
    memory = spec.get("memory")
    start = _world(doc).STREAM_DAY_START
    if start is not None and isinstance(memory, dict) and memory.get("kind") == "stream":
        return SimClock(start, 1)
    return None


def _world(doc: dict) -> WorldAnalysis:
    return analysis_of(kind_of(doc))


def step_word(doc: dict) -> str:
    """What one row of the run is called: its world's RUN_UNIT ("step", "round", "message")."""
    return domain_of(kind_of(doc)).RUN_UNIT


def agent_names(doc: dict, at_least: int = 0) -> list[str]:
    """The run's agents' names by index: its `agents` entries, else its spec's (a grid's are
    agent0, agent1, …); `at_least` long, an unnamed index shown as 'agent N'."""
    entries = doc.get("agents") or []
    if entries:
        order = sorted(enumerate(entries), key=lambda p: p[1].get("index", p[0]))
        names = [str(e.get("name", f"agent {i}")) for i, e in order]
    else:
        names = _world(doc).agent_names(doc)
    return names + [f"agent {i}" for i in range(len(names), at_least)]


def pick_agent(doc: dict, names: list[str], wanted: str | int) -> int:
    """The index of the agent `wanted` names: its exact name, its name in any case when only
    one agent has it, or its index from 0; UserError listing the names otherwise."""
    text = str(wanted).strip()
    if text in names:
        return names.index(text)
    folded = [i for i, n in enumerate(names) if n.casefold() == text.casefold()]
    if len(folded) == 1:
        return folded[0]
    if text.isdigit() and int(text) < len(names):
        return int(text)
    shown = ", ".join(names[:LISTED_NAMES])
    more = f" and {len(names) - LISTED_NAMES} more" if len(names) > LISTED_NAMES else ""
    raise UserError(
        f"run {doc['_id']} has no agent {text!r}; its agents are {shown}{more}",
        field="--agent",
        fix="give one of those names, or an agent's index from 0",
    )


def step_rows(
    store: Store, doc: dict, names: list[str]
) -> dict[int, list[tuple[int, list | None]]]:
    """agent index -> [(step, the memory ids its prompt showed, or None when the row keeps
    no `retrieved` list)] by step: a grid's steps, a network's rounds, a chat's messages
    (numbered from 1, each its speaker's): the world's analysis part reads them."""
    found: dict[int, list[tuple[int, list | None]]] = {}
    for number, agent, row in _world(doc).memory_rows(store, doc, names):
        retrieved = row.get("retrieved")
        ids = None if retrieved is None else [str(i) for i in retrieved]
        found.setdefault(int(agent), []).append((int(number), ids))
    for steps in found.values():
        steps.sort(key=lambda s: s[0])
    return found


def _memory_block(store: Store, doc: dict) -> dict | str | None:
    """The run's `memory` block: on its spec (resolved when the run was made), else on its
    experiment's snapshot (the run's own, or its sweep's)."""
    spec = doc.get("spec") or {}
    if spec.get("memory") is not None:
        return spec["memory"]
    experiment = doc.get("experiment")
    if experiment is None and doc.get("sweep_id"):
        experiment = (store.sweeps.get(doc["sweep_id"]) or {}).get("experiment")
    return (experiment or {}).get("memory")


def declared_memory(store: Store, doc: dict) -> str | None:
    """The kind of memory the run names (`summary`, `stream`, `none`), if it names one."""
    block = _memory_block(store, doc)
    kind = block.get("kind") if isinstance(block, dict) else block
    return kind.strip() if isinstance(kind, str) and kind.strip() else None


def minutes_per_step(doc: dict) -> int | None:
    """Simulated minutes per step of a memory-stream run (records made at step s are made
    at minute s x this), when its spec says."""
    block = (doc.get("spec") or {}).get("memory")
    value = block.get("minutes_per_step") if isinstance(block, dict) else None
    return value if isinstance(value, int) and value > 0 else None


def _memory_phrase(kind: str, carried: str) -> str:
    if kind == "summary":
        return f"summary ({carried})"
    if kind == "none":
        return "none (its agents carry nothing from one step to the next)"
    return kind


def no_stream_error(store: Store, doc: dict) -> UserError:
    """Why a run with no stored memories has none to browse: its memory is another kind, or
    its stream has stored nothing yet."""
    run_id, kind = doc["_id"], kind_of(doc)
    carried = _world(doc).MEMORY_CARRIED
    declared = declared_memory(store, doc)
    if declared == "stream":
        return UserError(
            f"run {run_id} has a memory stream but no memory is stored yet "
            f"(status {doc.get('status')})",
            fix=f"look again once its first {step_word(doc)} is stored",
        )
    memory = _memory_phrase(declared, carried) if declared else carried
    return UserError(
        f"run {run_id} has no memory stream: its experiment's memory is {memory}, so there "
        "are no memories to browse",
        fix=f"'llm-sim conversation show {run_id}' shows its {nouns(2, step_word(doc))}; "
        f"a {kind} experiment with `memory: {{kind: stream}}` makes runs "
        "with memories to browse",
    )
