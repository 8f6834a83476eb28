"""The personality test of a grid run through the real CLI: asked before step 1 and after the
last step, one call per item per agent, each answer read as A or B (or counted as neither),
stored on the run and typed by the inventory's key; a resumed run replays the test it took."""

from __future__ import annotations

import json

import pytest
import yaml
from grid_helpers import GRID_YAML, run_grid, scripted

from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.grid.domain.personality import load_inventory, parse_choice
from simulator.worlds.grid.engine.personality_probe import PURPOSE
from simulator.worlds.grid.services import runs as grid_runs
from simulator.worlds.grid.testing.personality_replies import by_agent, personality_reply

ITEMS = len(load_inventory("oejts").items)


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = personality_reply(by_agent({"agent1": "B"}), scripted("x+1"))
        yield server


def _env(tmp_path, stub) -> dict:
    return {
        "SIM_DB": str(tmp_path / "store"),
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
    }


def _experiment(run_cli, env, tmp_path, personality: dict) -> str:
    data = yaml.safe_load(GRID_YAML.read_text())
    data["personality"] = personality
    path = tmp_path / "grid_personality.yaml"
    path.write_text(yaml.safe_dump(data))
    made = run_cli(["experiment", "import", str(path), "--json"], env=env)
    assert made.code == 0, made.err
    return made.json()["id"]


def _store(env):
    return open_store(open_database(env["SIM_DB"], "llm_simulator"))


def _run(run_cli, env, exp: str, agents: int = 2, steps: int = 1):
    args = ["run", exp, "--llm", "openai:stub", "--agents", str(agents), "--steps", str(steps)]
    result = run_cli([*args, "--seed", "3"], env=env)
    assert result.code == 0, result.err
    return result, result.out.split(":", 1)[0].strip()


def test_first_and_last_tests_are_asked_parsed_stored_and_typed(run_cli, tmp_path, stub):
    env = _env(tmp_path, stub)
    exp = _experiment(run_cli, env, tmp_path, {})
    result, run_id = _run(run_cli, env, exp)
    calls = 3 * 2 * 1 + 2 * 2 * ITEMS
    assert f"({calls} calls" in result.err
    assert "personality: Open Extended Jungian Type Scales 1.2 (32 A/B items" in result.err
    asked = [r for r in stub.chat_requests if "A. Makes lists" in r.body["messages"][-1]["content"]]
    assert len(asked) == 2 * 2  # item 1, each agent, first and last
    first = [r for r in asked if "Your summary memory so far: no memory" in str(r.body)]
    assert len(first) == 2  # the test before step 1 shows the starting memory
    measures = run_cli(["measures", run_id, "--json"], env=env)
    assert measures.code == 0, measures.err
    run = measures.json()["runs"][0]
    personality = run["personality"]
    # all A for agent0, all B for agent1, scored by the OEJTS 1.2 key
    assert personality["types"]["agent0"] == {"first": "ESTJ", "last": "ESTJ"}
    assert personality["types"]["agent1"] == {"first": "INFP", "last": "INFP"}
    assert run["personality_changed"] == 0
    assert run["personality_fallbacks"] == 0
    assert personality["counts"]["first"] == {"ESTJ": 1, "INFP": 1}
    out = tmp_path / "export"
    done = run_cli(["export", run_id, "--format", "jsonl", "-o", str(out), "--json"], env=env)
    assert done.code == 0, done.err
    assert {f["table"]: f["rows"] for f in done.json()["files"]}["grid_personality"] == 4
    rows = [json.loads(line) for line in (out / "grid_personality.jsonl").read_text().splitlines()]
    agent1 = [r for r in rows if r["agent"] == "agent1"]
    assert [(r["when"], r["type"], r["changed"]) for r in agent1] == [
        ("first", "INFP", False),
        ("last", "INFP", False),
    ]
    # B is the I end of five of the eight E/I items (3, 7, 11, 19, 31), the E end of three
    assert agent1[0]["share_I"] == 5 / 8 and agent1[0]["fallbacks"] == 0
    assert agent1[0]["score_EI"] == 30 - 5 * 5 + 3 * 5  # the key: 30 - Q3 - Q7 - ... + Q27 - Q31
    # the report tabulates the types at the first and last step, and draws the emotions
    page = tmp_path / "report.html"
    made = run_cli(["report", run_id, "-o", str(page)], env=env)
    assert made.code == 0, made.err
    html = page.read_text()
    table = html.split('<table class="personality-table">', 1)[1].split("</table>", 1)[0]
    assert "<td>agent1</td><td>INFP</td><td>INFP</td>" in table
    counts = html.split('<table class="personality-counts">', 1)[1].split("</table>", 1)[0]
    assert "<td>ESTJ</td><td class=num>1</td><td class=num>1</td>" in counts
    assert "0 of 2 agents changed type." in html
    assert "Emotions over time" in html


def test_answers_naming_neither_letter_are_counted_not_guessed(run_cli, tmp_path, stub):
    stub.reply_fn = personality_reply(lambda name, a, b: "I cannot say.", scripted("x+1"))
    env = _env(tmp_path, stub)
    exp = _experiment(run_cli, env, tmp_path, {"at": ["last"]})
    result, run_id = _run(run_cli, env, exp)
    assert f"({3 * 2 + 2 * ITEMS} calls" in result.err
    doc = _store(env).conversations.get(run_id)
    assert doc["counters"]["personality_fallbacks"] == 2 * ITEMS
    assert doc["personality"][0]["choices"] == [None] * ITEMS  # never read as A or B
    measures = run_cli(["measures", run_id, "--json"], env=env).json()["runs"][0]
    assert measures["personality_fallbacks"] == 2 * ITEMS
    # every item unanswered scores the scale's middle: the key's rule gives the low letters
    assert measures["personality"]["types"]["agent0"] == {"first": None, "last": "ISFJ"}


def test_a_bad_personality_block_is_refused_naming_the_field(run_cli, tmp_path, stub):
    env = _env(tmp_path, stub)
    data = yaml.safe_load(GRID_YAML.read_text())
    data["personality"] = {"prompt": "Pick one: {statement_a}"}
    path = tmp_path / "bad.yaml"
    path.write_text(yaml.safe_dump(data))
    made = run_cli(["experiment", "import", str(path)], env=env)
    assert made.code == 2
    assert "personality" in made.err and "{statement_b}" in made.err


@pytest.mark.parametrize(
    ("reply", "choice"),
    [
        ("A", "A"),
        ("B.", "B"),
        ("(B) Relies on memory", "B"),
        ("Answer: A", "A"),
        ("I choose B because I like essays.", "B"),
        ("Makes lists, definitely.", "A"),
        ("A person like me relies on memory", "B"),
        ("A or B", None),
        ("north", None),
        ("", None),
    ],
)
def test_parse_choice(reply, choice):
    assert parse_choice(reply, "Makes lists", "Relies on memory") == choice


def test_a_run_killed_after_the_first_test_replays_it_on_resume(store, stub, monkeypatch, tmp_path):
    monkeypatch.setenv("OPENAI_BASE_URL", stub.openai_base_url)
    data = yaml.safe_load(GRID_YAML.read_text())
    data["personality"] = {}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(data))
    view = exp_service.import_yaml(store, path, "alice")
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=2, world={"agents": 2, "steps": 2})
    assert spec.calls == 3 * 2 * 2 + 2 * 2 * ITEMS
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id, cancel_after=2 * ITEMS + 3) is None  # inside step 1
    sent = len(stub.chat_requests)
    outcome = run_grid(store, run_id)
    assert outcome.status == "done", outcome.error
    resent = [
        r
        for r in stub.chat_requests[sent:]
        if "no memory" in r.body["messages"][-1]["content"]
        and "A. " in r.body["messages"][-1]["content"]
    ]
    assert resent == []  # the first test came back from the ledger
    assert outcome.counters["replayed_calls"] >= 2 * ITEMS
    calls = store.calls.for_conversation(run_id)
    asked = [c for c in calls if c["purpose"] == PURPOSE]
    assert len(asked) == 2 * 2 * ITEMS and {c["day"] for c in asked} == {0, 3}
    tests = store.conversations.get(run_id)["personality"]
    assert [(t["when"], t["agent"]) for t in tests] == [
        ("first", "agent0"),
        ("first", "agent1"),
        ("last", "agent0"),
        ("last", "agent1"),
    ]
    assert tests[3]["choices"] == ["B"] * ITEMS
