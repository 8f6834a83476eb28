"""Paired factors in sweeps: linked groups, explicit cells, message counting and LLM labels.

A linked group is one factor whose levels are its combinations; `cells` replaces the product for
the sections it names; bad input is refused naming the field, with exit status 2 and nothing
written; sweeps that use none of this keep their keys.
"""

from __future__ import annotations

import uuid
from pathlib import Path
from types import SimpleNamespace

import pytest
import yaml

from simulator.domain.ids import content_hash
from simulator.domain.yaml_io import load_model
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.sweep import SweepError, SweepSpec, cells, describe, expand

REPO = Path(__file__).resolve().parents[2]
PAPER = REPO / "prompts" / "experiments" / "prison_paper.yaml"
PAPER_SWEEP = REPO / "prompts" / "sweeps" / "prison_paper.yaml"
PAIRS = [["good", "good"], ["good", "bad"], ["bad", "good"], ["bad", "bad"], ["blank", "blank"]]
PERSONALITIES = ["Guard/Personality", "Prisoner/Personality"]


@pytest.fixture
def paper() -> Experiment:
    return load_model(PAPER, Experiment, "experiment")


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_linked"))
    yield opened
    opened.close()


def small(**changes) -> SweepSpec:
    return SweepSpec(
        **{"total_messages": 4, "agents": {"Guard": 1, "Prisoner": 1}, "llms": ["mock:a"]} | changes
    )


def test_a_linked_group_is_one_factor_whose_levels_are_its_combinations(paper):
    spec = small(
        variants={"Prisoner/Goal": "all"},
        linked=[{"sections": PERSONALITIES, "combinations": PAIRS[:3]}],
    )
    found = cells(spec, paper)
    assert len(found) == 2 * 3  # goals x pairs; not 2 x 3 x 3 as the full product would be
    pairs = {(c.variant["Guard/Personality"], c.variant["Prisoner/Personality"]) for c in found}
    assert pairs == {tuple(p) for p in PAIRS[:3]}
    assert {c.variant["Prisoner/Goal"] for c in found} == {"yard_time", "escape"}
    assert "2 Prisoner/Goal x 3 pairs of Guard/Personality + Prisoner/Personality (linked)" in (
        describe(spec, paper)
    )


def test_listed_cells_replace_the_product_and_may_fix_llm_agents_and_speaker(paper):
    spec = small(
        llms=["mock:a", "mock:b"],
        variants={"shared/Risks": "all"},
        cells=[
            {"Guard/Personality": "bad", "Prisoner/Personality": "bad"},
            {"Guard/Personality": "blank", "llm": "mock:c"},
            {"agents": {"prisoner": 2}, "speaker_method": "random"},
        ],
    )
    found = cells(spec, paper)
    # 2 LLMs x 2 Risks, 1 LLM x 2 Risks, 2 LLMs x 2 Risks
    assert len(found) == 4 + 2 + 4
    first = [c for c in found if c.variant.get("Prisoner/Personality") == "bad"]
    assert {c.role_llms["Guard"] for c in first} == {"mock:a", "mock:b"}
    assert all(c.variant["Guard/Personality"] == "bad" for c in first)
    fixed_llm = [c for c in found if c.variant.get("Guard/Personality") == "blank"]
    assert {c.role_llms["Prisoner"] for c in fixed_llm} == {"mock:c"}
    third = [c for c in found if c.speaker_method == "random"]
    assert len(third) == 4 and all(c.agents == {"Guard": 1, "Prisoner": 2} for c in third)
    assert {c.variant["shared/Risks"] for c in found} == {"on", "off"}
    text = describe(spec, paper)
    assert "3 listed cells x 2 shared/Risks = 6 variant cells" in text
    assert "= 10 cells x 1 repetition = 10 conversations" in text


def test_a_plain_sweep_keeps_its_keys_and_reference_counting_gets_its_own(paper):
    """Stores made before linked / cells / message_counting / allow_repeat_speaker existed
    must not re-run."""
    spec = small(
        total_messages=6,
        days=2,
        every_day_count=True,
        agents={"Guard": 2, "Prisoner": 1},
        every_agent_combination=True,
        llms=["mock:a", "mock:b"],
        speaker_methods=["round_robin", "auto"],
        variants={"Prisoner/Goal": "all"},
        seed=5,
        repetitions=2,
    )
    planned = expand(spec, paper, "v1", "alice")
    for p in planned:  # the key as computed with none of the new fields
        old = {
            "v": "v1",
            "cell": p.cell.as_dict(),
            "r": p.repetition,
            "total_messages": 6,
            "seed": p.seed,
            "owner": "alice",
        }
        assert p.key == "k_" + content_hash(old, 24)
    view = SimpleNamespace(version="v1")
    new_fields = ("linked", "cells", "message_counting", "allow_repeat_speaker")
    old_spec = {k: v for k, v in spec.model_dump(mode="json").items() if k not in new_fields}
    expected = "s_" + content_hash({"v": "v1", "spec": old_spec, "owner": "alice"}, 20)
    assert sweep_service.sweep_key(view, spec, "alice") == expected
    explicit = spec.model_copy(update={"linked": [], "cells": []})
    assert sweep_service.sweep_key(view, explicit, "alice") == expected

    reference = spec.model_copy(update={"message_counting": "reference"})
    assert sweep_service.sweep_key(view, reference, "alice") != expected
    reference_keys = {p.key for p in expand(reference, paper, "v1", "alice")}
    assert reference_keys.isdisjoint(p.key for p in planned)


def test_message_counting_reaches_every_conversation_spec(mock_store):
    view = exp_service.import_yaml(mock_store, PAPER, "alice")
    spec = load_model(PAPER_SWEEP, SweepSpec, "sweep").model_copy(
        update={"repetitions": 1, "llms": ["mock:a"]}
    )
    plan = sweep_service.plan(mock_store, view, spec, "alice")
    assert plan.expected_calls == 40 * (19 + 1)  # 19 agent turns and one day-end per conversation
    _, added = sweep_service.create(mock_store, view, spec, "alice")
    docs = list(mock_store.db.conversations.find({}))
    assert added == len(docs) == 40
    assert {d["spec"]["message_counting"] for d in docs} == {"reference"}
    assert {tuple(d["day_split"]) for d in docs} == {(19,)}


def test_odd_totals_are_allowed_in_both_countings(paper):
    """As for a single conversation: the paper's 19 turns is itself odd."""
    keys = set()
    for counting in ("agent_turns", "reference"):
        planned = expand(small(total_messages=5, message_counting=counting), paper, "v1")
        assert len(planned) == 1
        keys.add(planned[0].key)
    assert len(keys) == 2  # the counting is part of what the conversation is


def test_the_same_model_twice_is_swept_by_its_labels(tmp_path, mock_store):
    data = yaml.safe_load(PAPER.read_text())
    data["llms"] = [
        {"model": "mock:a", "label": "cold", "params": {"temperature": 0.1}},
        {"model": "mock:a", "label": "hot", "params": {"temperature": 1.5}},
    ]
    path = tmp_path / "two_temperatures.yaml"
    path.write_text(yaml.safe_dump(data))
    view = exp_service.import_yaml(mock_store, path, "alice")
    spec = small(llms=["cold", "hot"])
    assert {c.role_llms["Guard"] for c in cells(spec, view.experiment)} == {"cold", "hot"}
    sweep_service.create(mock_store, view, spec, "alice")
    temperatures = {
        d["spec"]["role_llms"]["Guard"]["label"]: d["spec"]["role_llms"]["Guard"]["params"][
            "temperature"
        ]
        for d in mock_store.db.conversations.find({})
    }
    assert temperatures == {"cold": 0.1, "hot": 1.5}
    with pytest.raises(SweepError) as ambiguous:  # the model string could mean either entry
        expand(small(llms=["mock:a"]), view.experiment, "v1")
    assert ambiguous.value.field == "llms[0]" and "label" in ambiguous.value.fix


def _paper_sweep() -> dict:
    return yaml.safe_load(PAPER_SWEEP.read_text())


def _set_combination(k, value):
    return lambda d: d["linked"][0]["combinations"].__setitem__(k, value)


BAD = {
    "unknown section": (
        lambda d: d["linked"][0]["sections"].__setitem__(1, "Prisoner/Mood"),
        "linked[0].sections[1]",
        "no section 'Prisoner/Mood'",
    ),
    "unknown variant": (
        _set_combination(1, ["good", "evil"]),
        "linked[0].combinations[1][1]",
        "no variant 'evil'",
    ),
    "combination length": (
        _set_combination(2, ["bad"]),
        "linked[0].combinations[2]",
        "lists 1 variant(s) but linked[0].sections names 2",
    ),
    "repeated combination": (
        _set_combination(4, ["good", "good"]),
        "linked[0].combinations[4]",
        "listed twice",
    ),
    "section in two groups": (
        lambda d: (
            d["variants"].pop("Prisoner/Goal"),
            d["linked"].append(
                {
                    "sections": ["Prisoner/Personality", "Prisoner/Goal"],
                    "combinations": [["good", "escape"]],
                }
            ),
        ),
        "linked[1].sections[0]",
        "already varied by linked[0].sections[1]",
    ),
    "section in variants and linked": (
        lambda d: d["variants"].__setitem__("Guard/Personality", "all"),
        "linked[0].sections[0]",
        "already varied by variants.Guard/Personality",
    ),
    "cells and variants": (
        lambda d: d.__setitem__("cells", [{"shared/Risks": "off"}]),
        "cells[0].shared/Risks",
        "also varied by variants.shared/Risks",
    ),
    "cells unknown section": (
        lambda d: d.__setitem__("cells", [{"Warden/Mood": "calm"}]),
        "cells[0].Warden/Mood",
        "no section 'Warden/Mood'",
    ),
    "cells unquoted on": (
        lambda d: (
            d["variants"].pop("shared/Risks"),
            d.__setitem__("cells", [{"shared/Risks": True}]),
        ),
        "cells[0].shared/Risks",
        "YAML reads on/off/yes/no without quotes",
    ),
    "cells manual speaker": (
        lambda d: d.__setitem__("cells", [{"speaker_method": "manual"}]),
        "cells[0].speaker_method",
        "not a speaker method a sweep can run",
    ),
    "unknown label": (
        lambda d: d.__setitem__("llms", ["nosuch"]),
        "llms[0]",
        "neither one of the experiment's LLMs",
    ),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_linked_groups_and_cells_are_refused_naming_the_field(
    case, tmp_path, monkeypatch, run_cli
):
    monkeypatch.chdir(tmp_path)
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "alice"}
    made = run_cli(["experiment", "create", str(PAPER), "--json"], env=env)
    assert made.code == 0, made.err
    exp_id = run_cli(["experiment", "list", "--json"], env=env).json()[0]["id"]
    change, field, message = BAD[case]
    data = _paper_sweep()
    change(data)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))

    result = run_cli(["sweep", "create", exp_id, str(path), "--yes"], env=env)

    assert result.code == 2, result.out + result.err
    err = " ".join(result.err.split())  # rich wraps long lines
    assert f"{field}: " in err and message in err and "Fix: " in err, err
    assert "Traceback" not in result.out + result.err
    assert run_cli(["sweep", "list", "--json"], env=env).json() == []
    assert run_cli(["conversation", "list", "--json"], env=env).json() == []


def test_a_sweep_that_would_make_one_cell_twice_is_refused(paper):
    """Both would share every conversation key: the second was silently never stored."""
    for changes, field in (
        ({"llms": ["smollm2-smoke", "local:smollm2"]}, "sweep"),  # a label and its model
        ({"cells": [{"llm": "mock:a"}, {}]}, "cells[1]"),
    ):
        with pytest.raises(SweepError) as refused:
            expand(small(**changes), paper, "v1")
        assert refused.value.field == field and "twice" in refused.value.message


def test_a_sweep_may_allow_repeat_speakers_and_says_so_in_each_spec(tmp_path, mock_store):
    data = yaml.safe_load(PAPER.read_text())
    data["llms"] = [{"model": "mock:a"}]
    path = tmp_path / "paper_mock.yaml"
    path.write_text(yaml.safe_dump(data))
    view = exp_service.import_yaml(mock_store, path, "alice")
    plain = small(speaker_methods=["auto"], manager_llm="mock:a")
    allowed = small(speaker_methods=["auto"], manager_llm="mock:a", allow_repeat_speaker=True)
    assert plain.identity() == small(speaker_methods=["auto"], manager_llm="mock:a").identity()
    assert "allow_repeat_speaker" not in plain.identity()  # keys made before the field hold
    assert (
        expand(plain, view.experiment, "v1")[0].key != expand(allowed, view.experiment, "v1")[0].key
    )
    sweep_service.create(mock_store, view, allowed, "alice")
    specs = [d["spec"] for d in mock_store.db.conversations.find({})]
    assert specs and all(s["allow_repeat_speaker"] is True for s in specs)
