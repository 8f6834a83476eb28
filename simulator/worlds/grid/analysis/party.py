"""The party's measures (Park et al. 2023, section 7.1): who knew of it, who knew whom, who came.

Read from a grid run with a `probe` (domain/probe.py): its stored interviews, its rows and each
agent's memory. A "yes" counts as knowing only when the agent's memory backs it: a stream
record (or, for a summary memory, its last summary) naming one of the news keywords, or the
other agent's name; a yes with no such memory is counted apart (`unbacked`), as the paper
checked answers against the agents' memory streams to avoid hallucinated knowledge. A
relationship is an edge when both agents know each other (backed), and density is
2|E| / (n (n - 1)). Attendance needs no call: an agent attended when, at a step starting in the
gathering's hours, it stood within the radius of the place (the grid's distance). How the news
spread is read over steps: agents who had heard a message naming it, and agents whose memory
named it, by the end of each step.

Section 7's figures are read the same way at both ends: the news known at the start is what the
seed memories name (the paper knew its start by construction: one agent was told), the density
at the start is the pairs whose seed memories name each other (the paper's came from the seeded
relationships), a hallucinated answer is a yes with no memory behind it over all interview
answers, and an agent was invited when it heard a message naming the news at a step that
started before the gathering (the host, who knew at the start, invites rather than is invited).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from simulator.memory.domain.settings import DAY_START_HOUR
from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.probe import Probe, mentions, minutes_of
from simulator.worlds.grid.domain.rules import distance

MINUTES_PER_DAY = 24 * 60


@dataclass(frozen=True)
class Remembered:
    """One thing an agent remembered, and from which step on (0: before the first)."""

    step: int
    text: str


def agent_memories(store: Any, run: GridRun) -> list[list[Remembered]]:
    """Each agent's memory as the probe checks it: a stream's records, a summary memory's
    text after every step (seed memories at step 0), or nothing (`memory: none`)."""
    memory = run.spec.get("memory") or {}
    kind, n = memory.get("kind", "summary"), len(run.names)
    if kind == "none":
        return [[] for _ in range(n)]
    if kind == "stream":
        per_step = int(memory.get("minutes_per_step") or 1)
        return [
            [
                Remembered(-(-r.created // per_step), r.text)
                for r in store.memories.stream(run.id, i)
            ]
            for i in range(n)
        ]
    personas = run.spec.get("personas") or []
    first = (run.spec.get("world") or {}).get("initial_memory", "")
    found: list[list[Remembered]] = [
        [Remembered(0, "\n".join(personas[i].get("memories") or []) if personas else first)]
        for i in range(n)
    ]
    for row in run.rows:
        found[int(row["agent_index"])].append(Remembered(int(row["step"]), str(row["memory"])))
    return found


def party_measures(store: Any, run: GridRun) -> dict | None:
    """Every measure the run's probe asks for; None when the run has no probe."""
    if not run.spec.get("probe"):
        return None
    probe = Probe.model_validate(run.spec["probe"])
    memories = agent_memories(store, run)
    interviews = list(run.doc.get("interviews") or [])
    found: dict[str, Any] = {"interviewed": bool(interviews)}
    if probe.news is not None:
        found["news"] = news_measures(run, probe, memories, interviews)
    if probe.relationships:
        found["relationships"] = relationship_measures(run, memories, interviews)
    if probe.attendance is not None:
        found["attendance"] = attendance_measures(run, probe, found.get("news"))
    if interviews:
        found["hallucination"] = hallucination(found.get("news"), found.get("relationships"))
    return found


def hallucination(news: dict | None, relationships: dict | None) -> dict:
    """Interview answers that said yes with no memory behind them, over every answer (Park et
    al.: 6 of 453)."""
    parts = [p for p in (news, relationships) if p]
    answers = sum(p["asked"] for p in parts)
    unbacked = sum(p["unbacked_yes"] for p in parts)
    return {
        "answers": answers,
        "unbacked_yes": unbacked,
        "share": unbacked / answers if answers else None,
    }


def news_measures(
    run: GridRun, probe: Probe, memories: list[list[Remembered]], interviews: list[dict]
) -> dict:
    assert probe.news is not None
    words, names, n = probe.news.keywords, run.names, len(run.names)
    answers = {int(a["agent_index"]): a for a in interviews if a.get("about") == "news"}
    per_agent = []
    for i in range(n):
        backed = any(mentions(m.text, words) for m in memories[i])
        answer = answers.get(i)
        said = bool(answer and answer.get("says_yes"))
        per_agent.append(
            {
                "agent": names[i],
                "said_yes": said if answer else None,
                "unclear": bool(answer and answer.get("answer_fallback")),  # neither yes nor no
                "memory_mentions": backed,
                "knows": said and backed,
                "knew_at_start": any(mentions(m.text, words) for m in memories[i] if m.step == 0),
                "answer": answer.get("answer") if answer else None,
            }
        )
    heard = heard_by_step(run, words)
    remembered = remembered_by_step(run, memories, words)
    asked = len(answers)
    knows = sum(a["knows"] for a in per_agent)
    return {
        "keywords": words,
        "asked": asked,
        "said_yes": sum(bool(a["said_yes"]) for a in per_agent),
        "unclear": sum(a["unclear"] for a in per_agent),  # read as no, and counted
        "knows": knows,
        "unbacked_yes": sum(bool(a["said_yes"]) and not a["memory_mentions"] for a in per_agent),
        "known_share": knows / n if asked else None,
        "knew_at_start": sum(a["knew_at_start"] for a in per_agent),
        "heard_by_step": heard,
        "remembered_by_step": remembered,
        "per_agent": per_agent,
    }


def first_heard(run: GridRun, words: list[str], said: bool = True) -> dict[int, int]:
    """Each agent's first step at which it received (or, with `said`, wrote) a message naming
    the news."""
    first: dict[int, int] = {}
    for row in sorted(run.rows, key=lambda r: r["step"]):
        i = int(row["agent_index"])
        if i not in first and (
            mentions(str(row.get("received") or ""), words)
            or (said and mentions(str(row.get("message") or ""), words))
        ):
            first[i] = int(row["step"])
    return first


def heard_by_step(run: GridRun, words: list[str]) -> list[int]:
    """Agents who had heard (or said) a message naming the news by the end of each step
    (index 0: before the first step)."""
    first = first_heard(run, words)
    return [sum(s <= t for s in first.values()) for t in range(run.last_step + 1)]


def remembered_by_step(
    run: GridRun, memories: list[list[Remembered]], words: list[str]
) -> list[int]:
    """Agents whose memory named the news by the end of each step (index 0: the start)."""
    first = [
        min((m.step for m in mine if mentions(m.text, words)), default=None) for mine in memories
    ]
    return [sum(s is not None and s <= t for s in first) for t in range(run.last_step + 1)]


def relationship_measures(
    run: GridRun, memories: list[list[Remembered]], interviews: list[dict]
) -> dict:
    names, n = run.names, len(run.names)
    index = {name: j for j, name in enumerate(names)}
    yes: set[tuple[int, int]] = set()
    backed: set[tuple[int, int]] = set()
    asked = 0
    for a in interviews:
        j = index.get(str(a.get("about")))
        if j is None:
            continue
        i = int(a["agent_index"])
        asked += 1
        if a.get("says_yes"):
            yes.add((i, j))
            if any(mentions(m.text, [names[j]]) for m in memories[i]):
                backed.add((i, j))
    pairs = n * (n - 1) // 2
    seeded = {
        (i, j)
        for i in range(n)
        for j in range(n)
        if i != j and any(mentions(m.text, [names[j]]) for m in memories[i] if m.step == 0)
    }
    at_start = [(i, j) for i, j in seeded if i < j and (j, i) in seeded]
    edges = sorted((i, j) for i, j in backed if i < j and (j, i) in backed)
    either = {(min(i, j), max(i, j)) for i, j in backed}
    return {
        "asked": asked,
        "said_yes": len(yes),
        "backed_yes": len(backed),
        "unbacked_yes": len(yes - backed),
        "edges": [[names[i], names[j]] for i, j in edges],
        "density": len(edges) / pairs if asked and pairs else None,
        "one_way_density": len(either) / pairs if asked and pairs else None,
        # pairs whose seed memories name each other (read without a call, as the end is checked)
        "start_density": len(at_start) / pairs if pairs else None,
    }


def attendance_measures(run: GridRun, probe: Probe, news: dict | None) -> dict:
    """Who stood within the radius of the place at a step starting in the hours; with the
    news asked about, who was invited (heard of it at a step starting before the hours, not
    knowing it at the start) and which of them came."""
    a = probe.attendance
    assert a is not None
    per_step = int((run.spec.get("memory") or {}).get("minutes_per_step") or 0)
    start = (a.day - 1) * MINUTES_PER_DAY + minutes_of(a.start) - DAY_START_HOUR * 60
    end = (a.day - 1) * MINUTES_PER_DAY + minutes_of(a.end) - DAY_START_HOUR * 60
    steps = (
        [s for s in range(1, run.last_step + 1) if start <= (s - 1) * per_step < end]
        if per_step
        else []
    )
    frames = run.positions
    came = [
        i
        for i in range(len(run.names))
        if any(
            distance(frames[s - 1][i], a.place, run.width, run.height, run.torus) <= a.radius
            for s in steps
        )
    ]
    knew = {p["agent"] for p in (news or {}).get("per_agent", []) if p["knows"]}
    invited = invited_before(run, probe, news, start, per_step)
    came_names = {run.names[i] for i in came}
    return {
        "invited": invited,  # None without the news question
        "invited_attended": None
        if invited is None
        else [name for name in invited if name in came_names],
        "steps": steps,
        "attended": [run.names[i] for i in came],
        "count": len(came),
        "knew_and_came": sum(run.names[i] in knew for i in came) if news else None,
        "reached": bool(steps) and run.last_step >= steps[-1],
    }


def invited_before(
    run: GridRun, probe: Probe, news: dict | None, start: int, per_step: int
) -> list[str] | None:
    """Agents who received a message naming the news at a step that started before the
    gathering and did not know of it at the start (None without the news question)."""
    if not news or probe.news is None:
        return None
    knew = {p["agent"] for p in news["per_agent"] if p["knew_at_start"]}
    heard = first_heard(run, probe.news.keywords, said=False)
    return [
        run.names[i]
        for i in sorted(heard)
        if run.names[i] not in knew and (not per_step or (heard[i] - 1) * per_step < start)
    ]
