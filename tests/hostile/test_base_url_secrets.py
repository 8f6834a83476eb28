"""No secret written in an endpoint URL leaves memory: not into the store, an export, the screen
or the session logs. A URL that spells a password or a key out is refused when the experiment is
read; one that names it as `${VAR}` is stored as written, and the run still authenticates (the
loopback stub checks the Basic password and the query key) and reaches `/v1/models?...`."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from bson import json_util

from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer

PASSWORD = "hunter2-endpoint-pw"
KEY = "gw-key-7f3a9c55"
SECRETS = (PASSWORD, KEY)


def _experiment(prison_path: Path, folder: Path, llm: dict, memory: dict | None = None) -> str:
    doc = yaml.safe_load(prison_path.read_text(encoding="utf-8"))
    doc["llms"] = [llm]
    if memory:
        doc["memory"] = memory
    path = folder / "exp.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return str(path)


def _everything_stored(db: str) -> str:
    store = open_store_uri(db)
    try:
        return "".join(
            json_util.dumps(doc)
            for name in store.db.list_collection_names()
            for doc in store.db[name].find({})
        )
    finally:
        store.close()


def _count(db: str, collection: str) -> int:
    store = open_store_uri(db)
    try:
        return store.db[collection].count_documents({})
    finally:
        store.close()


def _logs(settings: Path) -> str:
    files = list((settings / "logs").rglob("*.log"))
    assert files, "the session wrote no log"
    return "".join(f.read_text(encoding="utf-8") for f in files)


def _no_secret_in(*texts: str) -> None:
    for text in texts:
        for secret in SECRETS:
            assert secret not in text


@pytest.mark.parametrize(
    ("llm", "memory", "where"),
    [
        (
            {"model": "openai:m", "base_url": f"http://bob:{PASSWORD}@127.0.0.1:9/v1"},
            None,
            "the password",
        ),
        (
            {"model": "openai:m", "base_url": f"http://127.0.0.1:9/v1?api_key={KEY}"},
            None,
            "'api_key'",
        ),
        (
            {"model": "openai:m", "base_url": f"http://h:9/v1?v=1&access_token={KEY}"},
            None,
            "'access_token'",
        ),
        (
            {"model": "ollama:m", "base_url": f"http://h:9/?X-Amz-Signature={KEY}"},
            None,
            "'X-Amz-Signature'",
        ),
        (
            {"model": "mock:m"},
            {"kind": "stream", "embedder": f"openai:e@http://bob:{PASSWORD}@127.0.0.1:9/v1"},
            "the password",
        ),
    ],
    ids=["password", "api_key", "access_token", "signature", "embedder-url"],
)
def test_a_spelled_out_secret_is_refused_at_import(
    run_cli, tmp_path, prison_path, isolated_settings, llm, memory, where
):
    db = str(tmp_path / "store")
    path = _experiment(prison_path, tmp_path, llm, memory)
    env = {"SIM_DB": db, "SIM_USER": "alice"}
    result = run_cli(["experiment", "import", path], env=env)
    assert result.code == 2, result.err
    assert where in result.err and "${" in result.err and "environment variable" in result.err
    assert "Traceback" not in result.err
    _no_secret_in(result.out, result.err, _logs(isolated_settings))
    assert _count(db, "experiments") == 0


def test_a_referenced_secret_authenticates_and_is_never_written(
    run_cli, tmp_path, prison_path, isolated_settings
):
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub"]) as stub:
        stub.require_basic_auth = ("bob", PASSWORD)
        stub.require_query = {"api_key": KEY}
        url = f"http://bob:${{EP_PASSWORD}}@127.0.0.1:{stub.port}/v1?api_key=${{EP_KEY}}"
        path = _experiment(prison_path, tmp_path, {"model": "openai:stub", "base_url": url})
        env = {
            "SIM_DB": db,
            "SIM_USER": "alice",
            "EP_PASSWORD": PASSWORD,
            "EP_KEY": KEY,
            "SIM_LOG_CALLS": "1",  # the HTTP libraries' own request lines reach debug.log too
        }
        screens = []

        def cli(*args: str) -> object:
            result = run_cli(list(args), env=env)
            screens.extend([result.out, result.err])
            assert result.code == 0, result.err
            return result

        exp_id = cli("experiment", "import", path, "--json").json()["id"]
        shown = cli("experiment", "show", exp_id, "--json").json()
        assert url in json.dumps(shown)  # the reference, as written
        agents = ["--agents", "Guard=1,Prisoner=1", "--messages", "2", "--json"]
        conv_id = cli("run", exp_id, *agents).json()["conversation_id"]
        sweep_file = tmp_path / "sweep.yaml"
        sweep_file.write_text(
            "name: s\nrepetitions: 1\ntotal_messages: 2\nagents: {Guard: 1, Prisoner: 1}\n",
            encoding="utf-8",
        )
        sweep_id = cli("sweep", "create", exp_id, str(sweep_file), "--json").json()["sweep_id"]
        cli("sweep", "run", sweep_id, "--json")
        cli("conversation", "show", conv_id, "--json")
        cli("conversation", "show", conv_id, "--prompts", "--json")
        cli("export", exp_id, "--format", "jsonl", "-o", str(tmp_path / "out"))
        cli("experiment", "export", exp_id, "-o", str(tmp_path / "exp_out.yaml"))
        requests = stub.requests
    models = [r for r in requests if r.path == "/v1/models"]
    chats = [r for r in requests if r.path == "/v1/chat/completions"]
    assert models and len(chats) >= 4  # one run and one sweep conversation, two messages each
    for request in models + chats:  # each one authenticated, the key where it belongs
        assert request.basic_auth_user == "bob" and request.query_names == ("api_key",)
    exported = "".join(
        p.read_text(encoding="utf-8")
        for p in tmp_path.rglob("*")
        if p.suffix in (".jsonl", ".yaml")
    )
    assert "${EP_KEY}" in exported  # the experiment's export keeps the reference
    stored = _everything_stored(db)
    assert "${EP_PASSWORD}" in stored
    logs = _logs(isolated_settings)
    assert "/v1/chat/completions?api_key=***" in logs  # the request lines were logged, masked
    _no_secret_in(stored, exported, logs, *screens)


def test_a_key_in_the_openai_base_url_variable_is_masked_wherever_it_is_shown(
    run_cli, tmp_path, prison_path, isolated_settings
):
    """OPENAI_BASE_URL is the environment's own, so its key may be spelled out there: it is sent
    as a query (not glued before `/models`), and the ledger, the screen and the logs show ***."""
    db = str(tmp_path / "store")
    with StubLLMServer(models=["stub"]) as stub:
        stub.require_query = {"api_key": KEY}
        env = {
            "SIM_DB": db,
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": f"http://127.0.0.1:{stub.port}/v1?api_key={KEY}",
            "SIM_LOG_CALLS": "1",
        }
        imported = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
        assert imported.code == 0, imported.err
        args = ["run", imported.json()["id"], "--agents", "Guard=1,Prisoner=1", "--messages", "2"]
        ran = run_cli([*args, "--llm", "openai:stub"], env=env)
        assert ran.code == 0, ran.err
        paths = [r.path for r in stub.requests]
        port = stub.port
    assert paths[0] == "/v1/models" and paths.count("/v1/chat/completions") >= 2
    store = open_store_uri(db)
    try:
        calls = list(store.db.calls.find({}))
    finally:
        store.close()
    assert calls and {c["base_url"] for c in calls} == {f"http://127.0.0.1:{port}/v1?api_key=***"}
    logs = _logs(isolated_settings)
    assert "/v1/models?api_key=***" in logs  # the request lines were logged, masked
    _no_secret_in(_everything_stored(db), logs, ran.out, ran.err)


def test_an_unset_reference_is_refused_before_the_run_is_stored(
    run_cli, tmp_path, prison_path, isolated_settings
):
    db = str(tmp_path / "store")
    url = "http://bob:${EP_UNSET_PASSWORD}@127.0.0.1:9/v1"
    path = _experiment(prison_path, tmp_path, {"model": "openai:stub", "base_url": url})
    env = {"SIM_DB": db, "SIM_USER": "alice"}
    imported = run_cli(["experiment", "import", path, "--json"], env=env)
    assert imported.code == 0, imported.err
    args = ["run", imported.json()["id"], "--agents", "Guard=1,Prisoner=1", "--messages", "2"]
    ran = run_cli(args, env=env)
    assert ran.code == 2
    assert "EP_UNSET_PASSWORD" in ran.err and "not set" in ran.err and "Traceback" not in ran.err
    assert _count(db, "conversations") == 0
