"""`conversation resume` says how the run ended once, as `run` does, in every world's view."""

from __future__ import annotations

import pytest
import yaml

NETWORK = {
    "kind": "network",
    "name": "mock network",
    "llms": [{"model": "mock:a"}],
    "network": {
        "graph": {"type": "complete", "n": 3},
        "agents": "synthetic",
        "scenario": "costly_purchase",
        "rounds": 2,
    },
}


@pytest.mark.parametrize("world", ["chat", "network"])
def test_a_resumed_run_says_done_once(sim, tmp_path, prison_path, world):
    db = str(tmp_path / "store")
    if world == "chat":
        path, run = prison_path, ["--messages", "4", "--agents", "Guard=1,Prisoner=1"]
    else:
        path, run = tmp_path / "network.yaml", []
        path.write_text(yaml.safe_dump(NETWORK))
    exp_id = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    capped = sim("run", exp_id, "--llm", "mock:a", *run, "--max-calls", "2", db=db)
    assert capped.code == 3, capped.err
    (conversation,) = [c["_id"] for c in sim("conversation", "list", "--json", db=db).json()]
    resumed = sim("conversation", "resume", conversation, db=db)
    assert resumed.code == 0, resumed.err
    lines = (resumed.out + resumed.err).splitlines()
    assert [line for line in lines if conversation in line and "done" in line] == [
        f"{conversation} done"
    ]
