"""`llm-sim demo` says, before it starts, which sampling it uses and how long it will take."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import in_process
import pytest
from pty_session import REPO

from simulator.cli.commands.demo import (
    DEMO_MODEL,
    DEMO_SAMPLING,
    Pace,
    estimate,
    first_call,
    with_demo_sampling,
)
from simulator.domain.yaml_io import load_model
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services import experiments as exp_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.services import runs as conv_service

TUNED = ("temperature", "top_p", "top_k", "max_tokens")


@pytest.fixture
def prison_view():
    experiment = load_model(PROMPTS_DIR / "experiments" / "prison.yaml", Experiment, "experiment")
    return exp_service.create(open_store_uri("mongomock://demo", "demo"), experiment, "alice")


def spec_for(view, llm: str, messages: int = 6, days: int = 2):
    return conv_service.build_spec(
        view,
        agents="guard=1,prisoner=1",
        total_messages=messages,
        days=days,
        llm=llm,
        summarizer_llm=llm,
        seed=7,
    )


def test_the_bundled_model_samples_with_the_measured_setting(prison_view):
    spec = with_demo_sampling(spec_for(prison_view, DEMO_MODEL))
    for choice in [*spec.role_llms.values(), spec.summarizer_llm]:
        assert choice.params.model_dump(include=set(TUNED)) == DEMO_SAMPLING.model_dump(
            include=set(TUNED)
        )
    other = spec_for(prison_view, "mock:demo")
    assert with_demo_sampling(other) == other  # other models keep the experiment's defaults


def test_the_estimate_counts_every_call_and_names_its_basis(prison_view):
    pace = Pace(prompt_tps=200.0, reply_tps=20.0, chars_per_token=4.0)
    spec = with_demo_sampling(spec_for(prison_view, DEMO_MODEL))
    seconds, basis = estimate(prison_view.experiment, spec, pace)
    assert "8 model calls (6 messages + 2 summaries)" in basis
    assert "200 prompt tokens/s, 20 reply tokens/s" in basis and "CPU cores" in basis
    assert seconds > 8 * 100 / 20  # every call writes a reply, and reads a prompt first
    longer, _ = estimate(prison_view.experiment, spec_for(prison_view, DEMO_MODEL, 12, 2), pace)
    assert longer > seconds * 14 / 8  # more calls, and later ones read a longer transcript


def demo(*args: str, tmp_path) -> subprocess.CompletedProcess:
    """The bundled model's demo as a new user's shell starts it: a fresh process, a bare
    environment and home."""
    env = {
        "PATH": "/usr/bin:/bin",
        "HOME": str(tmp_path),
        "HF_HUB_OFFLINE": "1",
        **settings(tmp_path),
        "PYTHONPATH": str(REPO),
    }
    return subprocess.run(
        [sys.executable, str(REPO / "main.py"), "demo", *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )


def settings(tmp_path) -> dict[str, str]:
    return {
        "SIM_DATA_DIR": str(tmp_path / "data"),
        "SIM_CONFIG_DIR": str(tmp_path / "config"),
        "SIM_LOG_DIR": str(tmp_path / "logs"),
        "SIM_USER": "alice",
    }


def here(*args: str, tmp_path) -> subprocess.CompletedProcess:
    """`llm-sim ARGS` in this process on the same settings (the store `demo` wrote)."""
    return in_process.llm_sim(*args, env=settings(tmp_path), cwd=tmp_path)


def output_of(*args: str, tmp_path) -> str:
    done = here(*args, tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_the_demo_announces_sampling_and_time_before_it_runs(tmp_path):
    done = here("demo", "--llm", "mock:demo", "--messages", "2", "--days", "1", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert "Sampling for mock:demo: " in err and "the experiment's defaults" in err
    assert err.index("Estimate: a moment") < err.index("messages over 1 day:")
    assert "Took " in err
    closing = " ".join(err[err.index("Took ") :].split())
    assert "show the mechanics, not the behaviour" in closing
    assert "llm-sim demo --llm ollama:llama3" in closing
    assert "OPENAI_BASE_URL=http://localhost:8000/v1 llm-sim demo --llm openai:MODEL" in closing


@pytest.mark.slow
def test_the_demo_on_the_bundled_model_says_how_long_and_which_sampling(tmp_path, prison_view):
    done = demo("--messages", "2", "--days", "1", tmp_path=tmp_path)
    assert done.returncode == 0, done.stderr
    err = done.stderr
    assert (
        "Sampling for local:smollm2: temperature 0.9, top_p 0.95, top_k 40, max_tokens 120, "
        "repeat_penalty 1.2 — "
        "the least repetitive for SmolLM2 on these prompts" in err
    )
    assert "Estimate: about " in err and "measured just now on " in err
    assert err.index("Estimate: about ") < err.index("messages over 1 day:")
    assert "Took " in err
    closing = " ".join(err[err.index("Took ") :].split())
    assert "SmolLM2-135M shows the mechanics" in closing and "ollama:llama3" in closing
    conversation_id = re.search(r"Stored as (conv_[0-9a-z]+)", err).group(1)
    shown = json.loads(
        output_of("conversation", "show", conversation_id, "--json", tmp_path=tmp_path)
    )
    assert shown["conversation"]["status"] == "done"
    assert [m["model"] for m in shown["messages"]] == ["local:smollm2"] * 2
    assert shown["summaries"][0]["text"]
    calls = json.loads(
        output_of("conversation", "show", conversation_id, "--prompts", "--json", tmp_path=tmp_path)
    )["calls"]
    assert {k: calls[0]["params"][k] for k in TUNED} == DEMO_SAMPLING.model_dump(include=set(TUNED))
    # the speed was measured on the first call's own prompt, which llama.cpp then reuses
    spec = with_demo_sampling(spec_for(prison_view, DEMO_MODEL, 2, 1))
    assert calls[0]["messages"] == first_call(prison_view.experiment, spec)
