"""A memory stream's embedding requests in the ledger, through the real command line, the real
store and the openai client against the loopback stub: one row per request with the tokens the
server counted and the cost at the embedder's price, in the run's spend; a cost cap that only
the embeddings reach stops the run (exit status 3) before the next request leaves, and the
resumed run finishes without sending any text again."""

from __future__ import annotations

import json
from collections import OrderedDict

import pytest
import yaml

from simulator.domain.budget import CAP_REACHED_EXIT
from simulator.domain.embedding_rows import EMBED_ROLE, EMBEDDING_PURPOSE
from simulator.llm.embeddings import CachedEmbedder
from simulator.memory.testing.replies import memory_stream_reply
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.testing.stub_common import count_words

EMBEDDER = "text-embedding-3-small"
PER_MILLION = 1000.0  # dollars per million embedding tokens: a cent for 10 tokens


def reply(body: dict) -> str:
    """A network answer for each agent's prompt; the scripted memory agent's ratings and
    questions otherwise."""
    messages = body["messages"]
    if messages[0]["role"] != "system":
        return memory_stream_reply()(body)
    return json.dumps({"Thought": "fine", "Opinion": 5, "Decision": "Yes"})


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub", EMBEDDER]) as server:
        server.reply_fn = reply
        yield server


@pytest.fixture
def sim(tmp_path, monkeypatch, run_cli, stub):
    monkeypatch.chdir(tmp_path)
    prices = tmp_path / "prices.yaml"
    prices.write_text(
        yaml.safe_dump({"prices": {f"openai:{EMBEDDER}": {"input": PER_MILLION, "output": 0}}})
    )
    db = str(tmp_path / "store")

    def run(*args: str, env: dict | None = None):
        extra = {"SIM_USER": "alice", "SIM_DB": db, "SIM_PRICES": str(prices)}
        extra.update(OPENAI_BASE_URL=stub.openai_base_url, **(env or {}))
        return run_cli(list(args), env=extra)

    run.db = db
    return run


def _experiment(sim, tmp_path, stub, embedder: str = EMBEDDER) -> str:
    doc = {
        "kind": "network",
        "name": "embeddings counted",
        "llms": [{"model": "openai:stub", "price": {"input": 0, "output": 0}}],
        "network": {
            "graph": {"type": "complete", "n": 3},
            "agents": "synthetic",
            "scenario": "costly_purchase",
            "rounds": 2,
            "prompts": {"profile": "simulator"},
        },
        "memory": {
            "kind": "stream",
            "embedder": f"openai:{embedder}@{stub.openai_base_url}",
            "top_k": 2,
            "reflection": False,
        },
    }
    path = tmp_path / "experiment.yaml"
    path.write_text(yaml.safe_dump(doc))
    made = sim("experiment", "create", str(path), "--json")
    assert made.code == 0, made.err
    return made.json()["id"]


def _sent(stub, since: int = 0) -> list[list[str]]:
    """The texts of each /v1/embeddings request the stub answered (from the `since`-th)."""
    batches = []
    for request in stub.requests[since:]:
        if request.path == "/v1/embeddings":
            texts = request.body["input"]
            batches.append([texts] if isinstance(texts, str) else list(texts))
    return batches


def _embedding_rows(db: str, run_id: str) -> list[dict]:
    store = open_store_uri(db)
    try:
        rows = store.calls.for_conversation(run_id)
        return [
            {**r, "texts_sent": [m["content"] for m in store.calls.prompt(r["prompt_hash"])]}
            for r in rows
            if r["purpose"] == EMBEDDING_PURPOSE
        ]
    finally:
        store.close()


@pytest.fixture
def fresh_cache(monkeypatch):
    """A process of its own for each command: the process-wide vector cache starts empty (it
    would answer a text embedded again without a request, hiding it)."""

    def forget() -> None:
        monkeypatch.setattr(CachedEmbedder, "_vectors", OrderedDict())

    forget()
    return forget


def test_each_embedding_request_is_a_priced_row_in_the_runs_spend(sim, stub, tmp_path, fresh_cache):
    exp_id = _experiment(sim, tmp_path, stub)
    done = sim("run", exp_id, "--llm", "openai:stub", "--seed", "1", "--json")
    assert done.code == 0, done.err
    run_id = done.json()["conversation_id"]
    rows = _embedding_rows(sim.db, run_id)
    sent = _sent(stub)
    assert len(rows) == len(sent) >= 2  # records and recall queries, a row per request
    assert [r["texts_sent"] for r in rows] == sent
    assert all(r["state"] == "done" and r["model"].startswith(f"openai:{EMBEDDER}@") for r in rows)
    assert all(not r["tokens_approximate"] and r["tokens_out"] == 0 for r in rows)
    # the server's usage.prompt_tokens (the stub counts words), priced per million
    assert [r["tokens_in"] for r in rows] == [sum(map(count_words, b)) for b in sent]
    assert all(r["cost"] == pytest.approx(r["tokens_in"] * PER_MILLION / 1e6) for r in rows)
    spend = sim("conversation", "list", "--json").json()[0]["spend"]
    store = open_store_uri(sim.db)
    try:
        calls = store.calls.for_conversation(run_id)
        chat = [c for c in calls if c["purpose"] != EMBEDDING_PURPOSE]
    finally:
        store.close()
    assert spend["calls"] == len(chat) + len(rows)
    assert spend["cost"] == pytest.approx(sum(r["cost"] for r in rows))  # the chat model is free
    assert spend["tokens_in"] == sum(c["tokens_in"] for c in chat) + sum(
        r["tokens_in"] for r in rows
    )
    # the prompts of the ledger name what was embedded
    shown = sim("conversation", "show", run_id, "--prompts", "--json")
    assert shown.code == 0, shown.err
    embedded = [c for c in shown.json()["calls"] if c["purpose"] == EMBEDDING_PURPOSE]
    assert [[m["content"] for m in c["messages"]] for c in embedded] == sent
    assert all(m["role"] == EMBED_ROLE for c in embedded for m in c["messages"])


def test_a_cost_cap_only_embeddings_reach_stops_the_run_and_resume_sends_nothing_twice(
    sim, stub, tmp_path, fresh_cache
):
    exp_id = _experiment(sim, tmp_path, stub)
    # round 0's records cost about 7 cents, round 1's recall queries about 30: the cap is
    # reached by those queries, inside round 1, and the round's first answer is not sent
    capped = sim("run", exp_id, "--llm", "openai:stub", "--seed", "1", "--max-cost", "0.2")
    assert capped.code == CAP_REACHED_EXIT, capped.err
    assert "cost cap (--max-cost 0.2) was reached" in capped.err
    [run] = sim("conversation", "list", "--json").json()
    assert run["status"] == "interrupted"
    before = _sent(stub)
    assert before  # the embeddings were sent until the cap, and then none
    rows = _embedding_rows(sim.db, run["_id"])
    assert len(rows) == len(before) and all(r["state"] == "done" for r in rows)
    assert run["spend"]["cost"] >= 0.2 > run["spend"]["cost"] - rows[-1]["cost"]
    assert rows[-1]["day"] == 1 and "vectors" in rows[-1]  # round 1's queries, kept

    fresh_cache()
    since = len(stub.requests)
    resumed = sim("conversation", "resume", run["_id"])
    assert resumed.code == 0, resumed.err
    after = _sent(stub, since)
    assert after  # the run went on embedding
    texts_before = {t for b in before for t in b}
    assert not texts_before & {t for b in after for t in b}  # nothing embedded twice
    rows = _embedding_rows(sim.db, run["_id"])
    assert [r["texts_sent"] for r in rows] == before + after  # each request counted once
    [run] = sim("conversation", "list", "--json").json()
    assert run["status"] == "done"
    assert run["spend"]["cost"] == pytest.approx(sum(r["cost"] for r in rows))


def test_a_cost_cap_is_refused_when_the_embedders_price_is_unknown(sim, stub, tmp_path):
    exp_id = _experiment(sim, tmp_path, stub, embedder="house-embedder")
    refused = sim("run", exp_id, "--llm", "openai:stub", "--max-cost", "1")
    assert refused.code == 2, refused.err
    assert "memory.embedder" in refused.err and "openai:house-embedder" in refused.err
    assert "price" in refused.err and "--max-tokens" in refused.err
    assert sim("conversation", "list", "--json").json() == []  # nothing stored
    assert _sent(stub) == []


def test_a_sweeps_spend_counts_its_runs_embeddings(sim, stub, tmp_path, fresh_cache):
    exp_id = _experiment(sim, tmp_path, stub)
    path = tmp_path / "sweep.yaml"
    path.write_text(yaml.safe_dump({"repetitions": 2, "llms": ["openai:stub"], "seed": 1}))
    created = sim("sweep", "create", exp_id, str(path), "--yes", "--json")
    assert created.code == 0, created.err
    sweep_id = created.json()["sweep_id"]
    ran = sim("sweep", "run", sweep_id, "--concurrency", "1", "--json")
    assert ran.code == 0, ran.err
    runs = sim("conversation", "list", "--json").json()
    assert len(runs) >= 2 and all(r["status"] == "done" for r in runs)
    rows = [row for r in runs for row in _embedding_rows(sim.db, r["_id"])]
    assert len(rows) == len(_sent(stub)) >= 2
    status = sim("sweep", "status", sweep_id, "--json").json()
    assert status["spend"]["cost"] > 0
    assert status["spend"]["cost"] == pytest.approx(sum(r["cost"] for r in rows))
    assert status["spend"]["calls"] == sum(r["spend"]["calls"] for r in runs)


def test_an_embedding_model_the_server_lacks_fails_the_run_with_a_sentence(
    sim, stub, tmp_path, fresh_cache
):
    """A refused embedding request ends the run as a refused chat call does: failed, with the
    server's reason and the embedder named, and no traceback."""
    exp_id = _experiment(sim, tmp_path, stub, embedder="text-embedding-9")
    failed = sim("run", exp_id, "--llm", "openai:stub", "--seed", "1")
    assert failed.code == 1
    said = " ".join((failed.out + failed.err).split())
    assert "embedding with openai:text-embedding-9@" in said and "HTTP 404" in said
    assert "Traceback" not in said
    listed = sim("conversation", "list", "--json").json()
    assert [c["status"] for c in listed] == ["failed"]
