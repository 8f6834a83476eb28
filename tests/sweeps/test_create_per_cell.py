"""`sweep create` builds what a cell's repetitions share once per cell: every stored
conversation must still hold exactly what building it on its own gives."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from simulator.domain.yaml_io import load_model
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.chat.domain.sweep import SweepSpec
from simulator.worlds.chat.services import sweep_documents

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "prompts" / "experiments" / "prison_paper.yaml"
PAPER_SWEEP = REPO / "prompts" / "sweeps" / "prison_paper.yaml"


@pytest.fixture
def store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_per_cell"))
    yield opened
    opened.close()


@pytest.mark.parametrize("seed", [2024, None], ids=["seeded", "unseeded"])
def test_every_conversation_equals_one_built_on_its_own(store, seed):
    view = exp_service.import_yaml(store, PAPER, "ana")
    spec = load_model(PAPER_SWEEP, SweepSpec, "sweep").model_copy(
        update={"repetitions": 3, "llms": ["mock:a", "mock:b"], "seed": seed}
    )
    sweep, added = sweep_service.create(store, view, spec, "ana")
    plan = sweep_service.plan(store, view, spec, "ana")
    assert added == len(plan.planned) == 40 * 2 * 3
    stored = {d["order"]: d for d in store.sweeps.conversations(sweep["_id"])}
    seeds = set()
    for order, planned in enumerate(plan.planned):
        alone = sweep_documents.conversation_document(
            view, spec, sweep["_id"], planned, order, "ana"
        )
        got = stored[order]
        for field in ("key", "cell", "cell_key", "cell_label", "repetition", "spec", "agents"):
            assert got[field] == alone[field], (order, field)
        assert got["day_split"] == alone["day_split"]
        seeds.add(got["spec"]["seed"])
    # repetitions of a cell differ in their seed (or all have none)
    assert seeds == {None} if seed is None else len(seeds) == len(plan.planned)


def test_documents_of_one_cell_share_no_mutable_parts(store):
    view = exp_service.import_yaml(store, PAPER, "ana")
    spec = load_model(PAPER_SWEEP, SweepSpec, "sweep").model_copy(update={"repetitions": 2})
    plan = sweep_service.plan(store, view, spec, "ana")
    cache: dict = {}
    first, second = (
        sweep_documents.conversation_document(view, spec, "s", p, i, "ana", cache)
        for i, p in enumerate(plan.planned[:2])
    )
    assert first["cell_key"] == second["cell_key"]
    first["agents"][0]["name"] = "changed"
    first["day_split"].append(99)
    assert second["agents"][0]["name"] != "changed" and 99 not in second["day_split"]
