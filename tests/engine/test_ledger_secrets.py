"""Secrets never reach the database: an endpoint whose URL carries a password (OPENAI_BASE_URL=
http://user:pw@host/v1) is recorded in the ledger as http://user:***@host/v1, in `base_url`,
`model_identity` and error texts alike."""

from __future__ import annotations

from bson import json_util

from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer

PASSWORD = "hunter2-ledger-secret"


def test_a_password_in_the_endpoint_never_reaches_the_store(run_cli, tmp_path, prison_path):
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub"]) as stub:
        env = {
            "SIM_DB": db,
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": f"http://user:{PASSWORD}@127.0.0.1:{stub.port}/v1",
        }
        imported = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
        assert imported.code == 0, imported.err
        ran = run_cli(
            [
                "run",
                imported.json()["id"],
                "--agents",
                "guard=1,prisoner=1",
                "--messages",
                "2",
                "--llm",
                "openai:stub",
                "--json",
            ],
            env=env,
        )
        assert ran.code == 0, ran.err
        assert len(stub.chat_requests) >= 2  # the calls really went to the endpoint
    store = open_store_uri(db)
    try:
        calls = list(store.db.calls.find({}))
        assert calls and all(c["base_url"].startswith("http://user:***@127.0.0.1") for c in calls)
        everything = "".join(
            json_util.dumps(doc)
            for name in store.db.list_collection_names()
            for doc in store.db[name].find({})
        )
    finally:
        store.close()
    assert PASSWORD not in everything
