"""Real sweep processes for the crash tests: the CLI as a user starts it, a sweep to run, and
the check that a resumed sweep finished exactly (every transcript whole, nothing twice)."""

from __future__ import annotations

import itertools
from pathlib import Path

from process_waits import cli as cli

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
MESSAGES, DAYS = 8, 2


def make_sweep(db: str, prison_path: Path, repetitions: int, db_name: str = "llm_simulator") -> str:
    store = open_store(open_database(db, db_name))
    try:
        view = exp_service.import_yaml(store, prison_path, "alice")
        spec = SweepSpec(
            total_messages=MESSAGES,
            days=DAYS,
            agents={"Guard": 1, "Prisoner": 2},
            llms=["openai:stub"],
            speaker_methods=["random"],
            repetitions=repetitions,
            seed=9,
        )
        sweep, _ = sweep_service.create(store, view, spec, "alice")
        return sweep["_id"]
    finally:
        store.close()


def check_exact_finish(db: str, sweep_id: str, db_name: str = "llm_simulator") -> list[dict]:
    store = open_store(open_database(db, db_name))
    try:
        conversations = store.sweeps.conversations(sweep_id)
        assert {c["status"] for c in conversations} == {"done"}
        for conv in conversations:
            messages = store.messages.for_conversation(conv["_id"])
            assert [m["seq"] for m in messages] == list(range(MESSAGES))
            assert [(m["day"], m["index"]) for m in messages] == [(1, i) for i in range(4)] + [
                (2, i) for i in range(4)
            ]
            assert len({m["_id"] for m in messages}) == MESSAGES
            assert [s["day"] for s in store.conversations.summaries(conv["_id"])] == [1, 2]
            assert all(
                a != b
                for a, b in itertools.pairwise(messages)
                if a["day"] == b["day"] and a["speaker"] == b["speaker"]
            )  # random: no immediate repeat, even across a crash
        return conversations
    finally:
        store.close()
