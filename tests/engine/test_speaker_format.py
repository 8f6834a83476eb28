"""The chat switches on `run`: `--speaker-format name_field` sends each other speaker's turn as
its own user message with the speaker in `name` (autogen's way), `--reply-cleaning none` keeps
replies whole, `--profile reference` sets both; each is printed, stored and exported, and the
defaults leave the header, the stored spec and the messages as they were."""

from __future__ import annotations

import csv
from pathlib import Path

from simulator.domain.llm_choice import LLMChoice
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.spec import ConversationSpec
from simulator.worlds.chat.prompting.transcript import Line, agent_messages

BLEED = "Stand still.\nPrisoner_1: I will not!"


def _run(run_cli, env, prison_path: Path, *extra: str):
    exp = run_cli(["experiment", "import", str(prison_path), "--json"], env=env).json()["id"]
    args = ["run", exp, "--agents", "guard=1,prisoner=1", "--messages", "3"]
    return run_cli([*args, "--llm", "openai:stub", *extra], env=env)


def _shown(run_cli, env) -> dict:
    conversation = run_cli(["conversation", "list", "--json"], env=env).json()[0]["_id"]
    return run_cli(["conversation", "show", conversation, "--json"], env=env).json()


def _env(tmp_path, server) -> dict:
    return {
        "SIM_DB": str(tmp_path / "s"),
        "SIM_USER": "ana",
        "OPENAI_BASE_URL": server.openai_base_url,
        "OPENAI_API_KEY": "sk-test",
    }


def test_the_reference_profile_sends_names_keeps_bleed_and_says_so(
    run_cli, tmp_path, prison_path
) -> None:
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = lambda body: BLEED
        env = _env(tmp_path, server)
        ran = _run(run_cli, env, prison_path, "--profile", "reference")
        assert ran.code == 0, ran.err
        bodies = [r.body for r in server.chat_requests]
    assert "profile: reference" in ran.err
    assert "reply_cleaning: none" in ran.err and "speaker_format: name_field" in ran.err
    shown = _shown(run_cli, env)
    spec = shown["conversation"]["spec"]
    assert (spec["reply_cleaning"], spec["speaker_format"]) == ("none", "name_field")
    assert [m["text"] for m in shown["messages"]] == [BLEED] * 3
    assert not any(m["trimmed"] for m in shown["messages"])
    third = bodies[2]["messages"]  # the guard again: its own turn, then the prisoner's
    opening = third[1]["content"]  # the starting message, rendered, with no "Researcher:"
    assert opening.startswith("The researcher opens the session: the simulated prison")
    assert third[1:] == [
        {"role": "user", "content": opening, "name": "Researcher"},
        {"role": "assistant", "content": BLEED},
        {"role": "user", "content": BLEED, "name": "Prisoner_1"},
    ]
    conversation = shown["conversation"]["_id"]
    exported = run_cli(
        ["export", conversation, "--format", "csv", "-o", str(tmp_path / "x")], env=env
    )
    assert exported.code == 0, exported.err
    rows = list(csv.DictReader((tmp_path / "x" / "conversations.csv").open(encoding="utf-8")))
    assert (rows[0]["reply_cleaning"], rows[0]["speaker_format"]) == ("none", "name_field")


def test_a_flag_wins_over_the_profile(run_cli, tmp_path, prison_path) -> None:
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = lambda body: BLEED
        env = _env(tmp_path, server)
        ran = _run(
            run_cli, env, prison_path, "--profile", "reference", "--reply-cleaning", "speakers"
        )
        assert ran.code == 0, ran.err
    assert "profile: reference" not in ran.err and "speaker_format: name_field" in ran.err
    shown = _shown(run_cli, env)
    assert "reply_cleaning" not in shown["conversation"]["spec"]
    assert [m["text"] for m in shown["messages"]] == ["Stand still."] * 3


def test_the_default_prefixes_speakers_and_stores_no_field(run_cli, tmp_path, prison_path) -> None:
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = lambda body: "Fine."
        env = _env(tmp_path, server)
        ran = _run(run_cli, env, prison_path)
        assert ran.code == 0, ran.err
        second = server.chat_requests[1].body["messages"]
    assert "speaker_format" not in ran.err and "profile:" not in ran.err
    assert "speaker_format" not in _shown(run_cli, env)["conversation"]["spec"]
    assert second[-1]["content"].endswith("Guard_1: Fine.") and "name" not in second[-1]


def test_names_are_made_acceptable_to_openai_and_nothing_is_merged() -> None:
    lines = [Line("Guard 1", "a"), Line("Guard 2", "b"), Line("Me", "c")]
    got = agent_messages("sys", "open", lines, "Me", "name_field")
    assert [m.get("name") for m in got] == [None, "Researcher", "Guard_1", "Guard_2", None]
    assert [m["role"] for m in got] == ["system", "user", "user", "user", "assistant"]


def test_stored_specs_of_earlier_runs_are_unchanged() -> None:
    spec = ConversationSpec(
        agents={"A": 1}, total_messages=2, role_llms={"A": LLMChoice(model="mock:a")}
    )
    assert "speaker_format" not in spec.model_dump()
    assert ConversationSpec.model_validate(spec.model_dump()).speaker_format == "prefix"


def test_a_replay_of_a_reference_run_sends_the_same_named_messages(
    run_cli, tmp_path, prison_path
) -> None:
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = lambda body: f"{BLEED} ({len(body['messages'])})"
        env = _env(tmp_path, server)
        ran = _run(run_cli, env, prison_path, "--profile", "reference", "--seed", "9", "--json")
        assert ran.code == 0, ran.err
        original = ran.json()["conversation_id"]
        first = [r.body["messages"] for r in server.chat_requests]
        server.clear_requests()
        replayed = run_cli(["conversation", "replay", original, "--json"], env=env)
        assert replayed.code == 0, replayed.err
        again = [r.body["messages"] for r in server.chat_requests]
    assert replayed.json()["verdict"] == "identical"
    assert again == first
    assert any(m.get("name") == "Prisoner_1" for m in first[2])  # the guard's second turn
