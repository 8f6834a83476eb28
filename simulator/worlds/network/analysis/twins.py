"""Which theory run an LLM run is compared with: its twin (pure; documents in, ids out).

A twin plays the coevolution theory on what the LLM run played on: the same experiment, the
same graph spec, agents table, scenario and rounds (the theory's own parameters may differ) and
the same stored snapshots' edges. Among those, one with the LLM run's seed is preferred, so
a seeded sweep pairs run for run; failing that the oldest with any seed stands in (a run
without a seed, or a theory run that drew its own), and the match says which it was.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import NamedTuple

from simulator.domain.clock import as_datetime
from simulator.domain.ids import content_hash
from simulator.worlds.network.domain.experiment import THEORY

TWIN_SETTINGS = ("graph", "agents", "scenario", "rounds")  # what the theory plays on too
SAME_SEED = "same seed"
OTHER_SEED = "other seed"


class Twin(NamedTuple):
    id: str
    match: str  # SAME_SEED or OTHER_SEED


def is_theory_run(doc: dict) -> bool:
    return (doc.get("spec") or {}).get("model") == THEORY


def twin_key(doc: dict) -> str:
    """What a run and its twin share: experiment, the settings the theory plays on too (not
    its own parameters, nor what only a model does, such as free-chat rounds) and snapshots."""
    spec = doc.get("spec") or {}
    settings = {k: (spec.get("settings") or {}).get(k) for k in TWIN_SETTINGS}
    group = (spec.get("settings") or {}).get("group")
    if group is not None:  # the table's rows that played (absent before groups existed)
        settings["group"] = group
    shared = {
        "experiment": doc.get("experiment_id"),
        "settings": settings,
        "snapshots": spec.get("snapshots"),
    }
    return content_hash(shared, 24)


def _age(doc: dict) -> tuple:
    moment = as_datetime(doc.get("created_at"))
    return (moment.timestamp() if moment is not None else float("inf"), str(doc.get("_id")))


class TwinIndex:
    """Theory runs by what they share with an LLM run, the oldest first, then by seed."""

    def __init__(self, theory_docs: Iterable[dict]):
        self._by_key: dict[str, list[dict]] = {}
        for doc in sorted((d for d in theory_docs if is_theory_run(d)), key=_age):
            self._by_key.setdefault(twin_key(doc), []).append(doc)

    def __len__(self) -> int:
        return sum(len(docs) for docs in self._by_key.values())

    def match(self, llm_doc: dict) -> Twin | None:
        """The LLM run's twin, or None when no theory run shares its graph and settings."""
        found = self._by_key.get(twin_key(llm_doc))
        if not found:
            return None
        seed = (llm_doc.get("spec") or {}).get("seed")
        if seed is not None:
            for doc in found:
                if doc["spec"].get("seed") == seed:
                    return Twin(str(doc["_id"]), SAME_SEED)
        return Twin(str(found[0]["_id"]), OTHER_SEED)


def find_twins(llm_docs: Iterable[dict], theory_docs: Iterable[dict]) -> dict[str, Twin | None]:
    """For each LLM run (theory runs among `llm_docs` are skipped), its twin or None."""
    index = TwinIndex(theory_docs)
    return {str(d["_id"]): index.match(d) for d in llm_docs if not is_theory_run(d)}


def twin_command(doc: dict) -> str:
    """The command that stores the run's missing twin (flags for settings that differ from
    the experiment's; a graph cannot be given on the command line, a sweep's runs can)."""
    spec = doc.get("spec") or {}
    seed = spec.get("seed")
    command = f"llm-sim run {doc.get('experiment_id', 'EXP_ID')} --theory"
    command += f" --seed {seed}" if seed is not None else " [--seed N]"
    settings = spec.get("settings") or {}
    base = (doc.get("experiment") or {}).get("network") or {}
    for key, flag in (
        ("rounds", "--rounds"),
        ("scenario", "--scenario"),
        ("agents", "--agents-table"),
    ):
        if base and settings.get(key) != base.get(key):
            command += f" {flag} {settings.get(key)}"
    if base and settings.get("graph") != base.get("graph"):
        command += (
            " (its graph is not the experiment's: a network sweep with theory: true adds twins)"
        )
    return command


def describe(twin: Twin | None, doc: dict) -> str:
    """One line for a reader: the twin and how it matched, or how to get one."""
    if twin is None:
        return f"no theory twin; store one with: {twin_command(doc)}"
    return f"theory twin {twin.id} ({twin.match})"
