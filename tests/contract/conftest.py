"""One store, one loopback model and one finished run per registered world, for the contract
checks (tests/contract/test_world_contract.py). Everything goes through the real command line;
what a world must supply is its `testing.sample` part (simulator/testing/world_sample.py)."""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from market_world import ROW as MARKET

from simulator import worlds
from simulator.testing import StubLLMServer
from simulator.testing.world_sample import Sample, sample_of

REPO = Path(__file__).resolve().parents[2]
TESTS = REPO / "tests"
MODEL = "ollama:stub"
# worlds that live in tests/ (a world shipped outside simulator/, as a plugin's would): checked
# like the registered ones, registered only while their checks run
TOY_WORLDS = (MARKET,)
TOY_ENV = {  # how a process started by the checks finds them
    "SIM_WORLDS": ",".join(f"{row.package}:ROW" for row in TOY_WORLDS),
    "PYTHONPATH": os.pathsep.join((str(REPO), str(TESTS))),
}


def kinds() -> list[str]:
    """The registered worlds, then the toy worlds."""
    shipped = list(worlds.names())
    return shipped + [row.name for row in TOY_WORLDS if row.name not in shipped]


@pytest.fixture(scope="module")
def toy_worlds():
    """The toy worlds registered (and SIM_WORLDS and PYTHONPATH set for processes the checks
    start), the registry and the environment restored afterwards."""
    added = [row for row in TOY_WORLDS if row.name not in worlds.names()]
    saved = {name: os.environ.get(name) for name in TOY_ENV}
    for row in added:
        worlds.register(row)
    os.environ.update(TOY_ENV)
    try:
        yield
    finally:
        for row in added:
            worlds.unregister(row.name)
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def prompt_reply(sample: Sample):
    """The loopback model's reply function: the world's scripted replies where its prompts need
    one (a move, an answer), else a text that depends only on the model, the call's seed and
    the prompt, so a replay or a same-seed fork gets the original's replies."""

    def reply(body: dict) -> str:
        seed = (body.get("options") or {}).get("seed")
        text = f"{body['model']}|{seed}|" + "|".join(m["content"] for m in body["messages"])
        digest = hashlib.sha256(text.encode()).hexdigest()[:8]
        return sample.reply(body["messages"][-1]["content"], f"I hear you ({digest}). #together")

    return reply


def wire_prompt(body: dict) -> str:
    """A chat request's model, messages and options as they came over the wire."""
    kept = {k: body.get(k) for k in ("model", "messages", "options")}
    return json.dumps(kept, sort_keys=True, ensure_ascii=False)


@dataclass
class World:
    """A world's sample, its store, the loopback model, the imported experiment and one
    finished run, shared by the checks that only read them."""

    kind: str
    sample: Sample
    base: Path
    stub: StubLLMServer
    env: dict[str, str]
    experiment_id: str = ""
    run_id: str = ""
    runner: Callable[..., Any] | None = None  # the in-process CLI (tests/conftest.py's run_cli)
    run_requests: list[str] = field(default_factory=list)  # what the run sent the model

    def sent(self, since: int) -> list[str]:
        """The chat requests the model got since request number `since`, each as the JSON
        of its messages and sampling options (what decides the reply), in order."""
        return [wire_prompt(r.body) for r in self.stub.chat_requests[since:]]

    def cli(self, *args: str):
        """`llm-sim ARGS` in this process on the world's store."""
        assert self.runner is not None
        return self.runner(list(args), env=self.env)

    def ok(self, *args: str):
        result = self.cli(*args)
        assert result.code == 0, (args, result.out[-2000:], result.err[-2000:])
        return result

    def process(self, *args: str) -> subprocess.Popen:
        """`python main.py ARGS` in its own process, as a user starts it."""
        path = TOY_ENV["PYTHONPATH"]  # the toy worlds (SIM_WORLDS) importable too
        env = {**os.environ, **self.env, "PYTHONPATH": path, "SIM_PROGRESS_EVERY": "1000"}
        return subprocess.Popen(
            [sys.executable, str(REPO / "main.py"), *args],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )

    def run_args(self) -> list[str]:
        return ["run", self.experiment_id, "--llm", MODEL, *self.sample.run_args]

    def rows(self, run_id: str) -> list[dict]:
        """The run's rows as `conversation show --json` lists them."""
        return self.ok("conversation", "show", run_id, "--json").json()[self.sample.rows]


@pytest.fixture(scope="module", params=kinds())
def world_state(request, tmp_path_factory, toy_worlds):
    """Each registered world in turn, with its own store and loopback model."""
    kind = request.param
    sample = sample_of(kind)
    base = tmp_path_factory.mktemp(f"contract-{kind}")
    with StubLLMServer(models=["stub"]) as stub:
        stub.reply_fn = prompt_reply(sample)
        env = {
            "SIM_DB": str(base / "store"),
            "SIM_USER": "alice",
            "OLLAMA_HOST": stub.url,
            "SIM_DATA_DIR": str(base / "data"),
            "SIM_CONFIG_DIR": str(base / "config"),
            "SIM_LOG_DIR": str(base / "logs"),
        }
        yield World(kind, sample, base, stub, env)


@pytest.fixture
def world(world_state: World, run_cli) -> World:
    """The world with its experiment imported and one run finished (done once per world)."""
    found = world_state
    found.runner = run_cli
    if not found.run_id:
        path = found.base / f"{found.kind}.yaml"
        path.write_text(found.sample.experiment_yaml, encoding="utf-8")
        found.experiment_id = found.ok("experiment", "import", str(path), "--json").json()["id"]
        since = len(found.stub.chat_requests)
        ran = found.ok(*found.run_args(), "--json").json()
        assert ran["status"] == "done", ran
        found.run_id = ran["conversation_id"]
        found.run_requests = found.sent(since)
    return found
