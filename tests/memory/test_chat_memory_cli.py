"""A chat experiment's `memory:` block through the real CLI (in process, against the loopback
stub and an embedded store): planning refused with exit 2 and nothing stored, the run header's
memory line and notes, the memory browser over a chat run, and the no-stream error's fix."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_memory_helpers import PRISON, SHIPPED, STREAM, chat_reply, experiment_file

from simulator.services.experiments import load_file
from simulator.testing import StubLLMServer
from simulator.worlds.chat.cli.draft import Draft
from simulator.worlds.chat.domain.experiment import Experiment


@pytest.fixture
def cli(tmp_path, run_cli):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        server.reply_fn = chat_reply()
        env = {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
            "COLUMNS": "200",
        }
        yield lambda *args: run_cli(list(args), env=env)


def imported(cli, path: Path) -> str:
    result = cli("experiment", "import", str(path), "--json")
    assert result.code == 0, result.err
    return result.json()["id"]


def last_run(cli) -> str:
    listed = json.loads(cli("conversation", "list", "--json").out)
    return listed[0]["_id"]


def run_chat(cli, experiment_id: str):
    args = ["--agents", "guard=1,prisoner=2", "--messages", "6", "--days", "2", "--seed", "4"]
    return cli("run", experiment_id, *args)


def test_planning_in_a_chat_is_refused_with_exit_2_and_nothing_stored(cli, tmp_path):
    path = experiment_file(tmp_path, {**STREAM, "planning": True})
    result = cli("experiment", "import", str(path))
    assert result.code == 2 and "Traceback" not in result.err
    assert "memory" in result.err and "planning" in result.err
    assert "no simulated hours to plan" in result.err
    assert cli("experiment", "list", "--json").json() == []


def test_a_stream_run_prints_its_memory_and_its_streams_can_be_browsed(cli, tmp_path):
    experiment_id = imported(cli, experiment_file(tmp_path, STREAM))
    result = run_chat(cli, experiment_id)
    assert result.code == 0, result.err
    assert (
        "memory: stream: retrieval paper (top 3), reflection at importance 20, planning off, "
        "embedder mock:16, 10 simulated minutes a step" in result.err
    )
    assert "default: memory.planning: false (not given)" in result.err
    run_id = last_run(cli)
    browsed = cli("conversation", "memory", run_id, "--agent", "Guard_1", "--json")
    assert browsed.code == 0, browsed.err
    [agent] = browsed.json()["agents"]
    assert browsed.json()["step_word"] == "message"
    texts = [r["text"] for r in agent["records"]]
    assert any(t.startswith("I said: Guard_1 speaks") for t in texts)
    assert any(t.startswith("Prisoner_1 said: ") for t in texts)
    spoken = [s for s in agent["steps"] if s["retrieved"]]
    assert spoken and all(not s["missing"] for s in spoken)
    step = cli("conversation", "memory", run_id, "--step", str(spoken[-1]["message"]))
    assert step.code == 0, step.err


def test_the_default_header_has_no_memory_line_and_no_stream_to_browse(cli, tmp_path):
    experiment_id = imported(cli, experiment_file(tmp_path, None))
    result = run_chat(cli, experiment_id)
    assert result.code == 0, result.err
    assert "memory" not in result.err
    run_id = last_run(cli)
    refused = cli("conversation", "memory", run_id)
    assert refused.code == 2
    said = " ".join(refused.err.split())
    assert "its experiment's memory is the chat's transcript and its day summaries" in said
    assert "a chat experiment with `memory: {kind: stream}` makes runs with memories" in said


def test_none_is_printed_and_noted(cli, tmp_path):
    experiment_id = imported(cli, experiment_file(tmp_path, {"kind": "none"}))
    result = run_chat(cli, experiment_id)
    assert result.code == 0, result.err
    assert "memory: none" in result.err
    assert "later days open with the starting message alone" in " ".join(result.err.split())


def test_the_shipped_stream_experiment_imports(cli):
    experiment_id = imported(cli, SHIPPED)
    shown = cli("experiment", "show", experiment_id, "--json").json()
    assert shown["experiment"]["memory"] == {"kind": "stream", "retrieval": "paper", "top_k": 5}
    assert yaml.safe_load(SHIPPED.read_text(encoding="utf-8"))["memory"]["kind"] == "stream"


def test_the_interactive_draft_carries_the_memory_block():
    """No menu step asks for `memory:`; editing or duplicating in the menus keeps it."""
    experiment = load_file(SHIPPED)
    rebuilt = Experiment.model_validate(Draft.from_experiment(experiment).to_data())
    assert rebuilt.memory == experiment.memory
    plain = load_file(PRISON)
    assert "memory" not in Draft.from_experiment(plain).to_data()
