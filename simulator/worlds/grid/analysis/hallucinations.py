"""Hallucinations: messages naming objects the world does not contain, and how they spread.

Takata et al. (2024) report agents talking of things their empty field lacks and those
mentions spreading between neighbours (their Fig. 1B follows "trees"). They publish no word
list, so the list is the experiment's `measures.hallucination_words`, stored on each new run's
spec; a run stored without one is read with our default (domain/grid_measures.py).

Our rules where the paper is silent: a message hallucinates when it names any listed word or
its plural (inflect's plural, so "cave" also finds "caves"), as a whole word in any case
("tree" finds "Trees" and "tree's", not "street"); only messages are read (what others hear).
A message counts once however many words it names. "In a cluster" means the sender was in a
DBSCAN cluster (clusters.py) where it stood when it spoke, time t = step - 1; a word "shared in
a cluster" was named by two or more agents of one cluster in one step.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache

from simulator.worlds.grid.analysis.runs import GridRun
from simulator.worlds.grid.domain.measures import words_of_spec


@lru_cache(maxsize=64)
def _pattern(words: tuple[str, ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex over every word and plural (longest first) and each form's base word."""
    import inflect

    engine = inflect.engine()
    base: dict[str, str] = {}
    for word in words:
        for form in (word, engine.plural_noun(word) or word):
            base.setdefault(form.lower(), word)
    forms = sorted(base, key=len, reverse=True)
    body = "|".join(r"\s+".join(map(re.escape, form.split())) for form in forms)
    return re.compile(rf"(?<![A-Za-z])(?:{body})(?![A-Za-z])", re.IGNORECASE), base


def named_in(text: str | None, words: Sequence[str]) -> list[str]:
    """The listed words a text names (plurals read as their word), in order of first mention."""
    if not text or not words:
        return []
    pattern, base = _pattern(tuple(words))
    found = (base[" ".join(m.group(0).lower().split())] for m in pattern.finditer(text))
    return list(dict.fromkeys(found))


@dataclass
class Word:
    word: str
    first_step: int
    first_user: str
    users: dict[str, None] = field(default_factory=dict)
    steps: set[int] = field(default_factory=set)
    uses: int = 0
    shared_steps: set[int] = field(default_factory=set)  # named by 2+ agents of one cluster

    def as_dict(self) -> dict:
        return {
            "word": self.word,
            "first_step": self.first_step,
            "first_user": self.first_user,
            "agents": len(self.users),
            "users": list(self.users),
            "uses": self.uses,
            "steps": sorted(self.steps),
            "shared_in_cluster_steps": sorted(self.shared_steps),
        }


def hallucination_measures(run: GridRun, clusters: dict | None) -> dict:
    """Per stored step (index 0 is step 1): `per_step` messages naming a listed word,
    `in_clusters_per_step` those sent from inside a cluster, `by_cluster` cluster label ->
    such messages; `per_agent` counts; `words`: one entry per word found; and the run's totals.
    Without `clusters` (no scikit-learn) the cluster figures are None."""
    words = words_of_spec(run.spec)
    labels = (clusters or {}).get("labels")
    per_agent = dict.fromkeys(run.names, 0)
    found: dict[str, Word] = {}
    per_step: list[int] = []
    in_clusters: list[int] = []
    by_cluster: list[dict[str, int]] = []
    messages = 0
    for step in range(1, run.last_step + 1):
        frame = labels[step - 1] if labels and step - 1 < len(labels) else None
        hits = inside = 0
        counts: dict[str, int] = {}
        namers: dict[tuple[int, str], set[str]] = {}  # (cluster, word) -> agents
        for row in run.by_step.get(step) or []:
            if row is None:
                continue
            messages += 1
            named = named_in(str(row.get("message") or ""), words)
            if not named:
                continue
            agent, index = str(row["agent"]), int(row["agent_index"])
            hits += 1
            per_agent[agent] = per_agent.get(agent, 0) + 1
            label = frame[index] if frame is not None and index < len(frame) else -1
            if label >= 0:
                inside += 1
                counts[str(label)] = counts.get(str(label), 0) + 1
            for word in named:
                entry = found.setdefault(word, Word(word, step, agent))
                entry.users.setdefault(agent, None)
                entry.steps.add(step)
                entry.uses += 1
                if label >= 0:
                    namers.setdefault((label, word), set()).add(agent)
        for (_, word), agents in namers.items():
            if len(agents) >= 2:
                found[word].shared_steps.add(step)
        per_step.append(hits)
        in_clusters.append(inside)
        by_cluster.append(counts)
    total = sum(per_step)
    clustered = labels is not None
    listed = [w.as_dict() for w in sorted(found.values(), key=lambda w: w.first_step)]
    return {
        "words_list": list(words),
        "per_step": per_step,
        "in_clusters_per_step": in_clusters if clustered else None,
        "by_cluster": by_cluster if clustered else None,
        "per_agent": per_agent,
        "words": listed,
        "messages": messages,
        "hallucinated": total,
        "share": total / messages if messages else None,
        "in_clusters_share": (sum(in_clusters) / total if total else None) if clustered else None,
        "words_found": len(listed),
        "shared_in_clusters": sum(1 for w in listed if w["shared_in_cluster_steps"])
        if clustered
        else None,
    }
