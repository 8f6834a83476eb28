"""`speakers_echoes` cleaning: recited instructions and invented day headers leave the clean
text (replies and summaries), the raw reply stays, the choice is printed and stored; the
default `speakers` cleaning leaves them in, and stored specs keep their old shape."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.domain.llm_choice import LLMChoice
from simulator.prompting.echoes import clean_echoes
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.spec import ConversationSpec

NAMES, ROLES = ["Guard_1", "Prisoner_1"], ["Guard", "Prisoner"]
SYSTEM = (
    "You are a prisoner in a simulated prison. You speak only for yourself, in the first "
    "person.\n\nYour name is Prisoner_1."
)


@pytest.mark.parametrize(
    ("reply", "clean"),
    [
        # the demo's own day 2: a name line, an invented summary, another one
        (
            "You are Prisoner_1.\nDay 2 summary: I did not sleep. Let me out.\nDay 3 summary: more",
            "I did not sleep. Let me out.",
        ),
        ("Day 4: Open the door.\nDay 5: She says", "Open the door."),
        ("**Day 3:** Hello, guard.", "Hello, guard."),
        ("## Day 2\nI am tired.", "I am tired."),
        ("Summary of day 1: We argued.", "We argued."),
        ("Quiet. You are a prisoner in a simulated prison. Please.", "Quiet. Please."),
        ("Your name is Guard_2. Stop!", "Stop!"),
    ],
)
def test_echoes_and_headers_are_taken_out(reply: str, clean: str) -> None:
    cleaned = clean_echoes(reply, NAMES, ROLES, SYSTEM)
    assert cleaned.text == clean
    assert cleaned.changed


@pytest.mark.parametrize(
    "speech",
    [
        "You are the prisoner here, so listen.",
        "Day 2 was hard for me. I am the guard.",
        "You are Prisoner_1, step forward.",
        "I will stay in my cell today.",
        "Yesterday, on day 2: nothing happened.",
    ],
)
def test_speech_that_only_looks_like_an_echo_stays(speech: str) -> None:
    cleaned = clean_echoes(speech, NAMES, ROLES, SYSTEM)
    assert cleaned.text == speech and not cleaned.changed


ECHOING = "You are Guard_1.\nDay 2 summary: Stand up, prisoner.\nDay 3: Prisoner_1 says no"


@pytest.fixture
def echoing_server():
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = lambda body: ECHOING
        yield server


def _run(run_cli, env, prison_path: Path, *extra: str):
    exp = run_cli(["experiment", "import", str(prison_path), "--json"], env=env).json()["id"]
    args = ["run", exp, "--agents", "guard=1,prisoner=1", "--messages", "2"]
    return run_cli([*args, "--llm", "ollama:stub", *extra], env=env)


def _shown(run_cli, env) -> dict:
    conversation = run_cli(["conversation", "list", "--json"], env=env).json()[0]["_id"]
    return run_cli(["conversation", "show", conversation, "--json"], env=env).json()


def test_a_run_with_echo_cleaning_stores_clean_text_and_says_so(
    run_cli, tmp_path, prison_path, echoing_server
) -> None:
    env = {"SIM_DB": str(tmp_path / "s"), "SIM_USER": "ana", "OLLAMA_HOST": echoing_server.url}
    ran = _run(run_cli, env, prison_path, "--reply-cleaning", "speakers_echoes")
    assert ran.code == 0, ran.err
    assert "reply_cleaning: speakers_echoes" in ran.err
    shown = _shown(run_cli, env)
    assert shown["conversation"]["spec"]["reply_cleaning"] == "speakers_echoes"
    texts = [m["text"] for m in shown["messages"]]
    assert texts == ["Stand up, prisoner."] * 2
    assert all(m["raw_text"] == ECHOING and m["trimmed"] for m in shown["messages"])
    assert shown["summaries"][0]["text"] == "Stand up, prisoner."


def test_the_default_cleaning_keeps_echoes_and_stores_no_field(
    run_cli, tmp_path, prison_path, echoing_server
) -> None:
    env = {"SIM_DB": str(tmp_path / "s"), "SIM_USER": "ana", "OLLAMA_HOST": echoing_server.url}
    ran = _run(run_cli, env, prison_path)
    assert ran.code == 0, ran.err
    assert "reply_cleaning" not in ran.err
    shown = _shown(run_cli, env)
    assert "reply_cleaning" not in shown["conversation"]["spec"]
    assert shown["messages"][0]["text"].startswith("You are Guard_1.\nDay 2 summary:")


def test_grid_runs_refuse_the_chat_flag(run_cli, tmp_path) -> None:
    env = {"SIM_DB": str(tmp_path / "s"), "SIM_USER": "ana"}
    grid = Path(__file__).resolve().parents[2] / "prompts" / "experiments" / "takata_grid.yaml"
    exp = run_cli(["experiment", "import", str(grid), "--json"], env=env).json()["id"]
    refused = run_cli(["run", exp, "--reply-cleaning", "speakers_echoes"], env=env)
    assert refused.code == 2 and "--reply-cleaning" in refused.err


def test_the_stored_spec_of_earlier_runs_is_unchanged() -> None:
    choice = LLMChoice(model="mock:a")
    spec = ConversationSpec(agents={"A": 1}, total_messages=2, role_llms={"A": choice})
    assert "reply_cleaning" not in spec.model_dump()
    assert ConversationSpec.model_validate(spec.model_dump()).reply_cleaning == "speakers"
