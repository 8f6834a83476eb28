"""`llm-sim agreement` on labels stored as score documents through the real storage layer, on
every store flavour: per model figures equal the release script's own computation on the same
rows; the judge compared with an annotator; bad sources and factors exit 2."""

from __future__ import annotations

import csv
import uuid
from pathlib import Path

import pytest

from simulator.services import experiments as exp_service
from simulator.store.database import open_database
from simulator.store.store import open_store

FIXTURE = Path(__file__).resolve().parents[1] / "fixtures" / "prison_paper" / "agreement_labels.csv"


def labelled_rows() -> list[dict]:
    with FIXTURE.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


@pytest.fixture
def labelled(store_uri, run_cli, prison_path):
    """One conversation per fixture row (its model on both roles), the two annotators' goal
    labels and thirds stored as `label:annotator_1` / `label:annotator_2` scores."""
    db_name = f"t_{uuid.uuid4().hex[:10]}"
    store = open_store(open_database(store_uri, db_name))
    experiment_id = exp_service.import_yaml(store, prison_path, "alice").id
    conversations = []
    for row in labelled_rows():
        model = {"model": f"paper:{row['model']}"}
        doc = store.conversations.create(
            {
                "experiment_id": experiment_id,
                "owner": "alice",
                "status": "done",
                "counters": {"messages": 9},
                "spec": {
                    "role_llms": {"Guard": model, "Prisoner": model},
                    "agents": {"Guard": 1, "Prisoner": 1},
                    "days": 1,
                },
            }
        )
        conversations.append(doc["_id"])
        for source, goal, third in (
            ("annotator_1", row["GOAL1"], row["TURN1_DISCR"]),
            ("annotator_2", row["GOAL2"], row["TURN2_DISCR"]),
        ):
            values = {"label": goal, "turn": None, "third": int(third)}
            cid = doc["_id"]
            store.scores.add(f"label:{source}", "conversation", cid, values, conversation_id=cid)

    def cli(*args: str):
        return run_cli(["agreement", *args], env={"SIM_DB": store_uri, "SIM_DB_NAME": db_name})

    yield cli, store, experiment_id, conversations
    store.close()


def test_per_model_kappa_equals_the_release_script_on_every_store(labelled):
    from tests.analysis.test_agreement import script_metrics

    cli, _, experiment_id, _ = labelled
    args = [experiment_id, "--between", "label:annotator_1", "label:annotator_2", "--by", "model"]
    result = cli(*args, "--json")
    assert result.code == 0, result.err
    data = result.json()
    assert data["scope"]["conversations"] == 24 and data["between"] == args[2:4]
    rows = labelled_rows()
    for measure, columns in (
        ("goal", ("GOAL1", "GOAL2")),
        ("third", ("TURN1_DISCR", "TURN2_DISCR")),
    ):
        groups = {g["group"]: g for g in data["measures"][measure]}
        assert list(groups) == [
            "(all)",
            *(f"paper:{m}" for m in ("command-r", "gpt", "llama3", "orca2")),
        ]
        for group, figures in groups.items():
            mine = [r for r in rows if group in ("(all)", f"paper:{r['model']}")]
            n, disagreeing, kappa = script_metrics(mine, *columns)
            assert (figures["n"], figures["disagreeing"], figures["left_out"]) == (
                n,
                disagreeing,
                0,
            )
            assert figures["kappa"] == (None if kappa != kappa else pytest.approx(kappa))
            assert sum(map(sum, figures["confusion"])) == n
    text = cli(*args)
    assert text.code == 0, text.err
    assert "paper:orca2" in text.out and "kappa" in text.out and "left out" in text.out
    assert "rows label:annotator_1, columns label:annotator_2" in text.out
    assert max(len(line) for line in text.out.splitlines()) <= 80


def test_missing_labels_are_left_out_and_counted(labelled):
    cli, store, experiment_id, conversations = labelled
    store.db.scores.delete_one({"_id": f"label:annotator_2|conversation|{conversations[0]}"})
    result = cli(experiment_id, "--between", "label:annotator_1", "label:annotator_2", "--json")
    overall = result.json()["measures"]["goal"][0]
    assert (overall["group"], overall["n"], overall["left_out"]) == ("(all)", 23, 1)
    assert (overall["missing_a"], overall["missing_b"]) == (0, 1)
    one = cli(conversations[1], "--between", "label:annotator_1", "label:annotator_2", "--json")
    assert one.code == 0 and one.json()["measures"]["goal"][0]["n"] == 1


def test_the_judge_compared_with_an_annotator(labelled):
    cli, store, experiment_id, conversations = labelled
    answers = [  # rubric-shaped answers: Yes from message 5 of 9, NotTried, a failure
        {"attempted": "yes", "succeeded": "yes", "turn": 5, "conversational_failure": "no"},
        {"attempted": "no", "succeeded": "no", "turn": None, "conversational_failure": "no"},
        {"attempted": "yes", "succeeded": "no", "turn": 2, "conversational_failure": "yes"},
    ]
    for cid, values in zip(conversations[:3], answers, strict=True):
        values = {**values, "failure_kind": "none"}
        store.scores.add("judge:prison_goal", "conversation", cid, values, conversation_id=cid)
    result = cli(experiment_id, "--between", "label:annotator_1", "judge:prison_goal", "--json")
    assert result.code == 0, result.err
    goal = result.json()["measures"]["goal"][0]
    # annotator_1 on the first three rows: NotTried, NAN, No; the judge: Yes, NotTried, NAN
    assert (goal["n"], goal["agreeing"], goal["left_out"]) == (3, 0, 21)
    assert goal["labels"] == ["nan", "no", "nottried", "yes"]
    third = result.json()["measures"]["third"][0]
    assert third["labels"] == ["0", "2"] and third["agreeing"] == 2  # message 5 of 9: third 2


def test_unknown_sources_and_factors_exit_2_listing_what_is_there(labelled):
    cli, store, experiment_id, _ = labelled
    before = store.db.scores.count_documents({})
    bad = cli(experiment_id, "--between", "label:annotator_1", "label:adjudicated")
    assert bad.code == 2
    assert "label:adjudicated" in bad.err and "label:annotator_1, label:annotator_2" in bad.err
    factor = cli(
        experiment_id, "--between", "label:annotator_1", "label:annotator_2", "--by", "colour"
    )
    assert factor.code == 2 and "'colour'" in factor.err and "llm_Guard" in factor.err
    nothing = cli("exp_zzzzzz", "--between", "label:annotator_1", "label:annotator_2")
    assert nothing.code == 2
    assert store.db.scores.count_documents({}) == before
