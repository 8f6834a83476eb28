"""`moderation:MODEL` through the real CLI against the loopback stub's `/v1/moderations`: the texts
go in one batch, each message gets `flagged` and every category score, a re-run sends nothing,
a bad key stops before anything is stored, and the key is never stored or logged."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from stored_messages import message_doc

from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
KEY = "sk-moderation-test-key"
SPEC = "moderation:omni-moderation-latest"
TEXTS = (
    "Good morning. Line up for the count.",
    "You worthless idiot, I will beat you if you talk back.",
    "Please, we only ask for one more hour in the yard.",
    "Shut up and go back to your cell.",
)


@pytest.fixture(autouse=True)
def no_reference_base(monkeypatch):
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"]) as server:
        server.require_api_key = KEY
        yield server


@pytest.fixture
def finished(tmp_path) -> dict:
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    try:
        view = exp_service.import_yaml(store, REPO / "prompts/experiments/prison.yaml", "alice")
        spec = SweepSpec(
            total_messages=4, days=1, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"]
        )
        sweep, _ = sweep_service.create(store, view, spec, "alice")
        conv = store.sweeps.conversations(sweep["_id"])[0]
        for seq, text in enumerate(TEXTS):
            store.messages.insert(message_doc(conv["_id"], seq, text))
        store.db.conversations.update_one({"_id": conv["_id"]}, {"$set": {"status": "done"}})
    finally:
        store.close()
    return {"db": db, "sweep": sweep["_id"], "conversation": conv["_id"]}


def moderation_requests(stub: StubLLMServer) -> list:
    return [r for r in stub.requests if r.path == "/v1/moderations"]


def test_moderation_scores_every_message_in_one_batch(run_cli, stub, finished, isolated_settings):
    env = {
        "SIM_DB": finished["db"],
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "OPENAI_API_KEY": KEY,
    }
    result = run_cli(["score", finished["sweep"], "--scorer", SPEC, "--json"], env=env)
    assert result.code == 0, result.err
    counts = result.json()
    assert (counts["scored"], counts["skipped"], counts["failed"]) == (4, 0, 0)
    assert counts["target_kind"] == "message"
    batches = [r.body["input"] for r in moderation_requests(stub)]
    assert batches == [["ok"], list(TEXTS)]  # a preflight, then every text in one request
    assert all(r.body["model"] == "omni-moderation-latest" for r in moderation_requests(stub))

    store = open_store_uri(finished["db"])
    try:
        docs = {d["target_id"]: d for d in store.db.scores.find({"scorer": SPEC})}
        messages = store.messages.for_conversation(finished["conversation"])
    finally:
        store.close()
    by_text = {m["text"]: docs[m["_id"]] for m in messages}
    hostile = by_text[TEXTS[1]]
    assert hostile["values"]["flagged"] is True
    assert hostile["values"]["harassment"] == 0.9 and hostile["values"]["violence"] == 0.9
    assert hostile["values"]["harassment_threatening"] == 0.01  # "/" in OpenAI's name -> "_"
    assert hostile["details"]["categories"]["violence"] is True
    calm = by_text[TEXTS[0]]
    assert calm["values"]["flagged"] is False and calm["values"]["violence"] == 0.01
    assert by_text[TEXTS[3]]["values"]["harassment"] == 0.9
    assert all(d["scored_by"] == "alice" for d in docs.values())
    stored = json.dumps(list(docs.values()), default=str)
    logged = "".join(p.read_text(errors="replace") for p in isolated_settings.rglob("*.log"))
    assert KEY not in stored and KEY not in logged and KEY not in result.err

    measures = run_cli(["measures", finished["sweep"], "--json"], env=env).json()
    row = measures["conversations"][0]
    assert row[f"score_{SPEC}_flagged"] == 0.5  # two of four messages flagged
    assert row[f"score_{SPEC}_violence"] == pytest.approx((0.9 + 0.01 * 3) / 4)

    stub.clear_requests()
    again = run_cli(["score", finished["sweep"], "--scorer", SPEC, "--json"], env=env).json()
    assert (again["scored"], again["skipped"]) == (0, 4)
    assert [r.body["input"] for r in moderation_requests(stub)] == [["ok"]]  # nothing re-sent


def test_a_wrong_key_stops_before_anything_is_stored(run_cli, stub, finished):
    env = {
        "SIM_DB": finished["db"],
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "OPENAI_API_KEY": "sk-wrong",
    }
    result = run_cli(["score", finished["sweep"], "--scorer", SPEC], env=env)
    assert result.code == 2
    assert "rejected the API key (HTTP 401)" in result.err and "sk-wrong" not in result.err
    store = open_store_uri(finished["db"])
    try:
        assert store.db.scores.count_documents({}) == 0
    finally:
        store.close()


def test_the_official_api_without_a_key_is_a_user_error(run_cli, finished):
    env = {"SIM_DB": finished["db"], "SIM_USER": "alice"}
    result = run_cli(["score", finished["sweep"], "--scorer", SPEC], env=env)
    assert result.code == 2 and "OPENAI_API_KEY" in result.err


def test_moderation_through_the_reference_base_variable(run_cli, stub, finished):
    env = {
        "SIM_DB": finished["db"],
        "SIM_USER": "alice",
        "OPENAI_API_BASE": stub.openai_base_url,
        "OPENAI_API_KEY": KEY,
    }
    result = run_cli(["score", finished["conversation"], "--scorer", SPEC, "--json"], env=env)
    assert result.code == 0, result.err
    assert result.json()["scored"] == 4
