"""Opinion-network runs as the analysis reads them: the run document and its round rows.

Measures, exports and the report all read the same `OpinionRun`, so they agree on which rounds
are complete (every agent answered; a run in progress or cut short ends early), on the
opinions and decisions of each, on the graph each round was answered on and on the sweep cell
a run belongs to. `TwinBook` finds each LLM run's theory twin among the experiment's runs
(twins.py says how) and reads a twin's rows once, however many runs it stands beside.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import cached_property
from typing import Any

import networkx as nx

from simulator.analysis.stored_run import StoredRun, load_stored_runs
from simulator.worlds.network.analysis.twins import Twin, TwinIndex, is_theory_run
from simulator.worlds.network.domain.experiment import THEORY
from simulator.worlds.network.domain.graphs import snapshot_graphs as graphs_from_edges

BATCH = 50  # runs per read: a 1,000-agent run of 10 rounds holds 11,000 rows


def snapshot_graphs(spec: dict) -> list[nx.Graph]:
    """A stored run's snapshots as graphs on the agents' indexes."""
    return graphs_from_edges(spec.get("snapshots") or [[]], len(spec.get("agents") or []))


@dataclass
class OpinionRun(StoredRun):
    """One stored run: `doc` from `conversations`, `rows` from `network_rounds`."""

    @property
    def settings(self) -> dict:
        return self.spec.get("settings") or {}

    @property
    def is_theory(self) -> bool:
        return is_theory_run(self.doc)

    @property
    def model(self) -> str:
        """The model string, or "theory"."""
        return THEORY if self.is_theory else str((self.spec.get("llm") or {}).get("model"))

    @property
    def seed(self) -> int | None:
        return self.spec.get("seed")

    @cached_property
    def names(self) -> list[str]:
        return [str(a.get("name")) for a in self.spec.get("agents") or []]

    @property
    def planned_rounds(self) -> int:
        return int(self.settings.get("rounds") or 0)

    @property
    def counters(self) -> dict:
        return self.doc.get("counters") or {}

    @cached_property
    def by_round(self) -> list[list[dict]]:
        """The complete rounds from 0 on, each its rows in agent order (a round missing an
        agent's row, and every round after it, is left out)."""
        n = len(self.names)
        grouped: dict[int, dict[int, dict]] = {}
        for row in self.rows:
            grouped.setdefault(int(row["round"]), {})[int(row["agent_index"])] = row
        complete: list[list[dict]] = []
        while n and len(grouped.get(len(complete), {})) == n:
            found = grouped[len(complete)]
            complete.append([found[i] for i in range(n)])
        return complete

    @property
    def last_round(self) -> int:
        """The last complete round (-1: not even round 0 is stored)."""
        return len(self.by_round) - 1

    @cached_property
    def opinions(self) -> list[list[int]]:
        return [[int(r["opinion"]) for r in rows] for rows in self.by_round]

    @cached_property
    def decisions(self) -> list[list[bool]]:
        return [[r["decision"] == "Yes" for r in rows] for rows in self.by_round]

    @cached_property
    def graphs(self) -> list[nx.Graph]:
        return snapshot_graphs(self.spec)

    @property
    def cell(self) -> dict:
        """The sweep cell, or the same factors read from a single run's spec."""
        if self.doc.get("cell"):
            return dict(self.doc["cell"])
        llm = self.spec.get("llm") or {}
        cell = {
            "llm": THEORY if self.is_theory else llm.get("key") or llm.get("model"),
            "graph": self.settings.get("graph"),
            "scenario": self.settings.get("scenario"),
            "agents": self.settings.get("agents"),
            "rounds": self.planned_rounds,
        }
        if self.settings.get("group") is not None:  # as a sweep cell names it
            cell["group"] = self.settings["group"]
        return cell

    @property
    def cell_label(self) -> str:
        label = self.doc.get("cell_label")
        if label:
            return str(label)
        cell = self.cell
        graph = cell.get("graph") or {}
        shape = ",".join(
            f"{k}={v}" for k, v in graph.items() if k != "type" and not isinstance(v, list | dict)
        )
        keys = ("scenario", "agents", *(["group"] if "group" in cell else []), "rounds")
        rest = " ".join(f"{k}={cell.get(k)}" for k in keys)
        return f"llm={cell.get('llm')} graph={graph.get('type')}({shape}) {rest}"


def load_runs(store: Any, run_ids: list[str], batch: int = BATCH) -> Iterator[OpinionRun]:
    """The runs in the order given, `batch` at a time; a fork is read as the whole run it is
    (analysis/stored_run.py)."""
    return load_stored_runs(store, run_ids, store.network_rounds, OpinionRun, batch)


def theory_docs(store: Any, experiment_id: str, batch: int = BATCH) -> list[dict]:
    """Every theory run of the experiment (documents only), wherever it was stored: a twin
    may sit outside the scope (a sweep of LLM runs, one conversation)."""
    ids = store.conversations.ids(experiment_id)
    found: list[dict] = []
    # read and filtered a few runs at a time: a run's document (its agents, graph and
    # settings) can take 200 KB in memory, and an experiment may hold thousands of runs
    for start in range(0, len(ids), batch):
        docs = store.conversations.get_many(ids[start : start + batch])
        found += [d for d in docs if is_theory_run(d)]
    return found


class TwinBook:
    """The experiment's theory runs, indexed once; twins' rows read on first use, then kept."""

    def __init__(self, store: Any, experiment_id: str):
        self._store = store
        self._index = TwinIndex(theory_docs(store, experiment_id))
        self._runs: dict[str, OpinionRun] = {}

    def twin_of(self, run: OpinionRun) -> Twin | None:
        return None if run.is_theory else self._index.match(run.doc)

    def run(self, twin: Twin | None) -> OpinionRun | None:
        if twin is None:
            return None
        if twin.id not in self._runs:
            self._runs.update((r.id, r) for r in load_runs(self._store, [twin.id]))
        return self._runs.get(twin.id)
