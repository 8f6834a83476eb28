"""One repository stores every step world's rows; each world's ids stay as they were."""

from __future__ import annotations

import pytest

from simulator.store.store import open_store_uri


def test_row_ids_and_order_per_world(tmp_path):
    store = open_store_uri(str(tmp_path / "store"))
    grid = store.rows("grid_steps")
    network = store.rows("network_rounds")
    assert grid is store.grid_steps and network is store.network_rounds
    row = {"conversation_id": "conv_1", "agent_index": 7}
    assert grid.document({**row, "step": 3})["_id"] == "conv_1-s00003-a0007"
    assert network.document({**row, "round": 3})["_id"] == "conv_1-r0003-a00007"
    for step, agent in [(2, 1), (1, 1), (2, 0), (1, 0)]:
        doc = {"conversation_id": "conv_1", "step": step, "agent_index": agent}
        store.db.grid_steps.insert_one(grid.document(doc))
    assert [(r["step"], r["agent_index"]) for r in grid.for_run("conv_1")] == [
        (1, 0),
        (1, 1),
        (2, 0),
        (2, 1),
    ]
    assert grid.count("conv_1") == 4 and network.count("conv_1") == 0
    with pytest.raises(KeyError):
        store.rows("nowhere")
    store.close()
