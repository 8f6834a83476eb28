"""A world added later gets replays and forks from its own part modules alone: the house reads
its domain part (ROWS_COLLECTION, ROW_UNIT), its runs part's models and its fork part
(services/fork_parts.py), with the house's defaults for what it leaves out (one model under the
spec's `llm` swapped by a replay's --llm)."""

from __future__ import annotations

import sys
from types import ModuleType

import pytest
from pydantic import BaseModel

from simulator import worlds
from simulator.domain.fork import StepPoint, point_of
from simulator.domain.llm_choice import LLMChoice
from simulator.errors import UserError
from simulator.services import fork_parts
from simulator.store import lineage


class TickSpec(BaseModel):
    llm: LLMChoice | None = None
    seed: int | None = None


@pytest.fixture
def toy(monkeypatch):
    """A world "toy" whose runs store rows counted in ticks, with a fork part that names only
    what the house cannot guess (how a run is stored and run, its last complete tick)."""
    domain = ModuleType("toy_world.domain.kind")
    domain.KIND, domain.Spec, domain.ROWS_COLLECTION, domain.ROW_UNIT = (
        "toy",
        TickSpec,
        "toy_ticks",
        "tick",
    )
    forking = ModuleType("toy_world.services.forking")
    forking.last_complete = lambda spec, rows: max((r["tick"] for r in rows), default=0)
    runs = ModuleType("toy_world.services.runs")  # the models its runs call (run_parts.py)
    runs.models = lambda spec: [] if spec.llm is None else [spec.llm]
    for name, module in (
        ("toy_world", ModuleType("toy_world")),
        ("toy_world.domain", ModuleType("toy_world.domain")),
        ("toy_world.domain.kind", domain),
        ("toy_world.services", ModuleType("toy_world.services")),
        ("toy_world.services.forking", forking),
        ("toy_world.services.runs", runs),
    ):
        monkeypatch.setitem(sys.modules, name, module)
    worlds.register(worlds.WorldRow("toy", "toy_world", "a toy world"))
    yield forking
    worlds.unregister("toy")


def test_the_house_defaults_serve_a_world_with_one_model(toy):
    spec = TickSpec(llm=LLMChoice(model="ollama:a"), seed=3)
    assert fork_parts.models("toy", spec) == [spec.llm]
    assert fork_parts.models("toy", TickSpec()) == []  # a run without a model
    other = fork_parts.with_models("toy", spec, lambda c: LLMChoice(model="ollama:b"))
    assert other.llm.model == "ollama:b" and other.seed == 3
    assert fork_parts.forks_at_rows("toy") and not fork_parts.forks_at_rows("chat")
    assert fork_parts.replay_refusal("toy", {"_id": "r"}, spec, "ollama:b") is None
    assert fork_parts.fork_notes("toy", spec, StepPoint("tick", 2)) == []
    assert fork_parts.range_note("toy") == ""


def test_a_worlds_rows_and_fork_point_come_from_its_domain_part(toy):
    assert lineage.rows_collection({"_id": "r", "kind": "toy"}) == "toy_ticks"
    assert lineage.rows_collection({"_id": "g", "kind": "grid"}) == "grid_steps"
    assert point_of({"tick": 4}) == StepPoint("tick", 4)
    assert StepPoint.parse("tick:4", "tick") == StepPoint("tick", 4)
    with pytest.raises(UserError) as refused:
        StepPoint.parse("step:4", "tick")
    assert "a toy run forks at a tick" in refused.value.fix
    assert "nor step:N nor round:N" in refused.value.fix
