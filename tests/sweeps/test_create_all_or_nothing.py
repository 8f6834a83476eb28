"""`sweep create` at scale keeps its promise: a create that fails writes nothing half-done.

On the embedded store every conversation of a create is one SQLite transaction, so a process
killed while they are written leaves none (a re-create then stores them all); a cell that cannot
be built is found before the sweep is written; the plan the command already made is reused."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import uuid

import pytest

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.worlds.chat.services import sweep_documents

SPEC = {
    "repetitions": 2000,
    "llms": ["local:smollm2"],
    "total_messages": 4,
    "agents": {"Guard": 1, "Prisoner": 1},
    "seed": 3,
}

# Runs in its own process: SIGKILL while the 1,500th conversation is being written.
KILLED_CREATE = """
import os, signal, sys
from simulator.store.derived_docs import DerivedEncoder
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store

db, experiment, spec = sys.argv[1], sys.argv[2], sys.argv[3]
store = open_store(open_database(db, "crash"))
view = exp_service.import_yaml(store, experiment, "ana")
written = 0
encode = DerivedEncoder.encode  # each conversation's document, as it is staged

def encode_then_die(self, doc):
    global written
    if "cell_key" in doc:
        written += 1
        if written == 1500:
            os.kill(os.getpid(), signal.SIGKILL)
    return encode(self, doc)

DerivedEncoder.encode = encode_then_die
sweep_service.create(store, view, SweepSpec.model_validate_json(spec), "ana")
"""


def test_a_create_killed_while_writing_leaves_no_conversation(tmp_path, prison_path):
    db = str(tmp_path / "store")
    spec = SweepSpec.model_validate(SPEC)
    script = textwrap.dedent(KILLED_CREATE)
    args = [sys.executable, "-c", script, db, str(prison_path), spec.model_dump_json()]
    done = subprocess.run(args, capture_output=True, text=True, timeout=300)
    assert done.returncode == -9, done.stderr
    store = open_store(open_database(db, "crash"))
    try:
        assert store.db.conversations.count_documents({}) == 0
        (sweep,) = store.sweeps.list()  # written first; a re-create finds it and fills it
        view = exp_service.get(store, sweep["experiment_id"], "ana")
        again, added = sweep_service.create(store, view, spec, "ana")
        assert again["_id"] == sweep["_id"] and added == 2000
        orders = sorted(d["order"] for d in store.sweeps.conversations(sweep["_id"]))
        assert orders == list(range(2000))
    finally:
        store.close()


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_create"))
    yield opened
    opened.close()


def test_a_cell_that_cannot_be_built_leaves_no_sweep(mock_store, prison_path, monkeypatch):
    view = exp_service.import_yaml(mock_store, prison_path, "ana")
    spec = SweepSpec.model_validate({**SPEC, "repetitions": 3, "llms": ["mock:a", "mock:b"]})
    real = sweep_documents.build_agents

    def refuse_b(experiment, conv_spec):
        if conv_spec.role_llms["Guard"].model == "mock:b":
            raise RuntimeError("cannot build mock:b's agents")
        return real(experiment, conv_spec)

    monkeypatch.setattr(sweep_documents, "build_agents", refuse_b)
    with pytest.raises(RuntimeError, match="mock:b"):
        sweep_service.create(mock_store, view, spec, "ana")
    assert mock_store.sweeps.list() == []
    assert mock_store.db.conversations.count_documents({}) == 0


def test_create_reuses_the_plan_it_is_given(mock_store, prison_path, monkeypatch):
    view = exp_service.import_yaml(mock_store, prison_path, "ana")
    spec = SweepSpec.model_validate({**SPEC, "repetitions": 5})
    made = sweep_service.plan(mock_store, view, spec, "ana")

    def no_second_plan(*args, **kwargs):
        raise AssertionError("planned twice")

    monkeypatch.setattr(sweep_service, "plan", no_second_plan)
    sweep, added = sweep_service.create(mock_store, view, spec, "ana", made)
    assert added == 5
    keys = [d["key"] for d in mock_store.sweeps.conversations(sweep["_id"])]
    assert keys == [p.key for p in made.planned]


def test_a_sweeps_conversations_get_consecutive_ids_and_a_taken_one_is_replaced(
    tmp_path, prison_path, monkeypatch
):
    """One run of ids per create (domain/ids.py id_run), in the sweep's order; an id of the run
    that a stored conversation holds is replaced by a random one, and nothing else moves."""
    from simulator.domain import ids

    store = open_store(open_database(str(tmp_path / "store"), "ids"))
    try:
        view = exp_service.import_yaml(store, prison_path, "ana")
        spec = SweepSpec.model_validate({**SPEC, "repetitions": 50})
        monkeypatch.setattr(ids.secrets, "randbelow", lambda n: 0x1000)  # the run's start
        store.db.conversations.insert_one({"_id": "conv_00001005", "note": "stored before"})
        sweep, added = sweep_service.create(store, view, spec, "ana")
        assert added == 50
        convs = sorted(store.sweeps.conversations(sweep["_id"]), key=lambda d: d["order"])
        expected = [f"conv_{n:08x}" for n in range(0x1000, 0x1000 + 50)]
        got = [d["_id"] for d in convs]
        assert got[:5] + got[6:] == expected[:5] + expected[6:]
        assert got[5] not in expected and len(set(got)) == 50  # conv_00001005 was taken
        assert store.db.conversations.find_one({"_id": "conv_00001005"})["note"] == "stored before"
    finally:
        store.close()
