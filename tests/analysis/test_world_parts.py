"""Every world ships the analysis parts the house calls, and a world added later gets export,
measures, the report and the memory browser by writing only its own part modules."""

from __future__ import annotations

import sys
import textwrap

import pytest

from simulator.analysis.world_parts import WorldAnalysis, analysis_of, analysis_of_doc
from simulator.cli.analysis_parts import WorldMeasuresCommand, commands_of, scope_info
from simulator.errors import UserError
from simulator.memory.analysis.runs import agent_names, clock_of, no_stream_error, step_word
from simulator.worlds import WorldRow, names, register, unregister


def members(protocol: type) -> set[str]:
    declared = {n for n in vars(protocol) if not n.startswith("_")}
    return declared | set(getattr(protocol, "__annotations__", {}))


@pytest.mark.parametrize("kind", names())
def test_every_world_ships_its_analysis_parts(kind):
    analysis = analysis_of(kind)
    assert members(WorldAnalysis) <= set(dir(analysis))
    assert members(WorldMeasuresCommand) <= set(dir(commands_of(kind)))


def test_a_document_without_kind_is_analysed_as_a_chat():
    assert analysis_of_doc({}) is analysis_of("chat")
    assert analysis_of_doc({"kind": "grid"}).WORD == "grid"


class _Scope:
    kind, id, experiment_id, conversation_ids = "experiment", "exp_1", "exp_1", ["a", "b"]


def test_the_json_scope_names_the_world_only_where_the_world_has_a_word():
    assert "world" not in scope_info(_Scope())  # type: ignore[arg-type]
    assert scope_info(_Scope(), "grid")["world"] == "grid"  # type: ignore[arg-type]


@pytest.fixture
def toy_world(tmp_path, monkeypatch):
    """A world in its own package (not under simulator/): a domain part and an analysis part."""
    root = tmp_path / "toyworld"
    for folder in ("", "domain", "analysis"):
        (root / folder).mkdir(exist_ok=True)
        (root / folder / "__init__.py").write_text("")
    (root / "domain" / "kind.py").write_text('KIND = "toy"\nLABEL = "toy"\nRUN_UNIT = "turn"\n')
    (root / "analysis" / "world.py").write_text(
        textwrap.dedent(
            """
            WORD = "toy"
            PAPER_LABELS = False
            DRAWS_ROUNDS = False
            MEMORY_CARRIED = "nothing but its last turn"
            STREAM_DAY_START = 6 * 60

            def agent_names(doc):
                return ["ann", "bob"]

            def memory_rows(store, doc, names):
                return [(1, 0, {"retrieved": ["m1"]}), (1, 1, {})]
            """
        )
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    register(WorldRow("toy", "toyworld", "a toy world"))
    yield
    unregister("toy")
    for name in [m for m in sys.modules if m == "toyworld" or m.startswith("toyworld.")]:
        del sys.modules[name]


def test_a_new_world_gets_the_memory_browser_from_its_part_alone(toy_world):
    doc = {"_id": "run_1", "kind": "toy", "spec": {"memory": {"kind": "stream"}}}
    assert step_word(doc) == "turn"
    assert agent_names(doc, at_least=3) == ["ann", "bob", "agent 2"]
    assert clock_of(doc).render(0) == "day 1 06:00"  # type: ignore[union-attr]

    class NoStore:
        class sweeps:
            @staticmethod
            def get(_):
                return None

    plain = {"_id": "run_2", "kind": "toy", "spec": {}}
    error = no_stream_error(NoStore(), plain)  # type: ignore[arg-type]
    assert isinstance(error, UserError)
    assert "nothing but its last turn" in str(error) and "shows its turns" in error.fix
