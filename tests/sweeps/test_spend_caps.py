"""Spend caps on real processes: two `sweep work` workers on one database stop together within
one wave of calls in flight of a shared cost cap, lose nothing, and `sweep resume` with a higher
cap finishes the sweep; an unknown price is reported as unknown, and refused for a cost cap."""

from __future__ import annotations

import json

import yaml
from process_waits import stored
from sweep_processes import check_exact_finish, cli, make_sweep

from simulator.domain.budget import CAP_REACHED_EXIT, spend_of

PRICE = {"input": 1000.0, "output": 2000.0}  # dollars per million tokens: cents per call
CONCURRENCY = 2  # per worker


def _sweep(db: str, prison_path, tmp_path, price: dict | None, repetitions: int) -> str:
    """A sweep of the prison experiment on the loopback stub, its LLM priced or not."""
    experiment = yaml.safe_load(prison_path.read_text())
    entry = {"model": "openai:stub", **({"price": price} if price else {})}
    experiment["llms"] = [*experiment["llms"], entry]
    path = tmp_path / "priced.yaml"
    path.write_text(yaml.safe_dump(experiment))
    return make_sweep(db, path, repetitions)


def _calls(db: str, sweep_id: str) -> list[dict]:
    ids = [c["_id"] for c in stored(db, "conversations", {"sweep_id": sweep_id})]
    return stored(db, "calls", {"conversation_id": {"$in": ids}})


def test_two_workers_stop_at_a_shared_cost_cap_and_resume_finishes(stub, prison_path, tmp_path):
    db = str(tmp_path / "store")
    sweep_id = _sweep(db, prison_path, tmp_path, PRICE, repetitions=6)
    cap = 0.6
    workers = [
        cli(db, stub, "sweep", "work", sweep_id, "--concurrency", str(CONCURRENCY),
            "--max-cost", str(cap))
        for _ in range(2)
    ]  # fmt: skip
    outputs = [worker.communicate(timeout=240) for worker in workers]
    for worker, (_, err) in zip(workers, outputs, strict=True):
        assert worker.returncode == CAP_REACHED_EXIT, err
        assert "cost cap" in err and "Spent:" in err, err

    calls = _calls(db, sweep_id)
    spent = sum(c["cost"] for c in calls)
    dearest = max(c["cost"] for c in calls)
    assert spent >= cap  # the cap was reached, not stopped short of
    assert spent <= cap + 2 * CONCURRENCY * dearest  # at most one wave in flight past it
    kept = spend_of(stored(db, "sweeps", {"_id": sweep_id})[0].get("spend"))
    assert abs(kept["cost"] - spent) < 1e-6  # the kept counters match the ledger
    assert kept["calls"] == len(calls)
    assert kept["cost_unknown_calls"] == 0

    conversations = stored(db, "conversations", {"sweep_id": sweep_id})
    assert {c["status"] for c in conversations} <= {"done", "interrupted", "pending"}
    assert any(c["status"] != "done" for c in conversations)  # the cap left work to do
    for conv in conversations:  # nothing lost: every stored message has its call
        turns = {(c["day"], c["index"]) for c in calls
                 if c["conversation_id"] == conv["_id"] and c["purpose"] == "agent_turn"
                 and c["state"] == "done"}  # fmt: skip
        messages = stored(db, "messages", {"conversation_id": conv["_id"]})
        assert {(m["day"], m["index"]) for m in messages} <= turns
        if conv["status"] != "pending":  # the run's own spend is its ledger's
            own = [c for c in calls if c["conversation_id"] == conv["_id"]]
            assert conv["spend"]["calls"] == len(own)

    status = cli(db, stub, "sweep", "status", sweep_id)
    out, err = status.communicate(timeout=60)
    assert status.returncode == 0, err
    assert "spent so far" in out and "$" in out

    again = cli(db, stub, "sweep", "resume", sweep_id, "--max-cost", str(cap))
    _, err = again.communicate(timeout=120)
    assert again.returncode == CAP_REACHED_EXIT, err  # the same cap: reached before any claim
    assert len(_calls(db, sweep_id)) == len(calls)

    resumed = cli(db, stub, "sweep", "resume", sweep_id, "--max-cost", "100", "--json")
    out, err = resumed.communicate(timeout=240)
    assert resumed.returncode == 0, err
    assert json.loads(out)["complete"]
    check_exact_finish(db, sweep_id)
    final = stored(db, "sweeps", {"_id": sweep_id})[0]["spend"]
    assert abs(final["cost"] - sum(c["cost"] for c in _calls(db, sweep_id))) < 1e-6


def test_unknown_price_is_reported_as_unknown_and_refused_for_a_cost_cap(
    stub, prison_path, tmp_path
):
    db = str(tmp_path / "store")
    sweep_id = _sweep(db, prison_path, tmp_path, None, repetitions=1)
    refused = cli(db, stub, "sweep", "run", sweep_id, "--max-cost", "1")
    _, err = refused.communicate(timeout=120)
    assert refused.returncode == 2, err
    assert "openai:stub" in err and "price" in err
    assert not _calls(db, sweep_id)  # refused before anything ran

    capped = cli(db, stub, "sweep", "run", sweep_id, "--max-calls", "3", "--json")
    out, err = capped.communicate(timeout=120)
    assert capped.returncode == CAP_REACHED_EXIT, err
    assert "call cap" in err
    assert "price unknown for" in err
    spend = json.loads(out)["spend"]
    assert spend["cost"] == 0 and spend["cost_unknown_calls"] == spend["calls"] >= 3
    assert all(c["cost"] is None for c in _calls(db, sweep_id))
