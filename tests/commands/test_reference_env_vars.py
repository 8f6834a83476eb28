"""The reference tool's variables are read too: DB_NAME when SIM_DB_NAME is empty, OPENAI_API_BASE
when OPENAI_BASE_URL is empty; precedence stays flags > environment > .env > defaults."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.llm.openai_backend import OpenAIBackend

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def no_reference_variables(monkeypatch):
    for name in ("DB_NAME", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)


def database_name(sim, *flags: str, env: dict | None = None) -> str:
    result = sim(*flags, "info", "--json", env=env)
    assert result.code == 0, result.err
    return result.json()["database_name"]


def test_db_name_precedence_flag_env_dotenv_default(sim, tmp_path):
    assert database_name(sim) == "llm_simulator"  # the default
    (tmp_path / ".env").write_text("DB_NAME=ref_dotenv\n", encoding="utf-8")
    assert database_name(sim) == "ref_dotenv"  # .env
    assert database_name(sim, env={"DB_NAME": "ref_env"}) == "ref_env"  # environment over .env
    both = {"DB_NAME": "ref_env", "SIM_DB_NAME": "ours"}
    assert database_name(sim, env=both) == "ours"  # this tool's own name over the reference's
    assert database_name(sim, "--db-name", "flagged", env=both) == "flagged"  # the flag wins


def test_openai_api_base_is_the_fallback_base_url(monkeypatch):
    monkeypatch.setenv("OPENAI_API_BASE", "http://127.0.0.1:9/ref/v1/")
    assert OpenAIBackend("gpt-x").base_url == "http://127.0.0.1:9/ref/v1"
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/ours/v1")
    assert OpenAIBackend("gpt-x").base_url == "http://127.0.0.1:9/ours/v1"
    assert OpenAIBackend("gpt-x", base_url="http://x/v1").base_url == "http://x/v1"


def test_a_run_reaches_the_server_named_by_openai_api_base(sim, tmp_path, prison_path):
    from simulator.testing import StubLLMServer

    with StubLLMServer(models=["stub"]) as stub:
        env = {"OPENAI_API_BASE": stub.openai_base_url}
        exp_id = sim("experiment", "import", str(prison_path), "--json").json()["id"]
        result = sim(
            "run", exp_id, "--llm", "openai:stub", "--messages", "2", "--agents",
            "Guard=1,Prisoner=1", "--json", env=env,
        )  # fmt: skip
        assert result.code == 0, result.err
        assert len(stub.chat_requests) >= 2


def test_env_template_documents_the_reference_variables():
    names = {
        line.split("=", 1)[0]
        for line in (REPO / ".env_template").read_text(encoding="utf-8").splitlines()
        if "=" in line and not line.startswith("#")
    }
    assert {"DB_NAME", "OPENAI_API_BASE", "DB_USER", "DB_PASSWORD", "DB_CLUSTER_URL"} <= names


def test_experiment_import_and_create_are_one_command(sim, prison_path):
    imported = sim("experiment", "import", str(prison_path), "--json").json()
    created = sim("experiment", "create", str(prison_path), "--json").json()
    assert imported.keys() == created.keys()
    assert imported["id"] != created["id"]
    for name, other in (("import", "create"), ("create", "import")):
        shown = " ".join(sim("experiment", name, "--help").out.split())
        assert f"The same as 'llm-sim experiment {other} FILE'" in shown
    bad = sim("experiment", "import", "/no/such/file.yaml")
    assert bad.code == 2
    assert len(sim("experiment", "list", "--json").json()) == 2  # the bad file wrote nothing
