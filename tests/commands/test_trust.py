"""Nothing silent: defaults are printed and stored, keys cover what a conversation is, bad run
options are refused before anything is written."""

from __future__ import annotations

import pytest

from simulator.testing import StubLLMServer


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub", "other"]) as server:
        yield server


@pytest.fixture
def experiment(sim, tmp_path, prison_path):
    """The prison experiment with openai:stub listed first, with its own sampling."""
    text = prison_path.read_text()
    head, rest = text.split("llms:\n", 1)
    listed = (
        "llms:\n- model: openai:stub\n  params:\n    temperature: 0.3\n    top_p: 0.8\n"
        "    max_tokens: 17\n    seed: 5\n"
    )
    path = tmp_path / "prison_stub.yaml"
    path.write_text(head + listed + rest)
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    return db, exp_id


def _run(sim, stub, db, exp_id, *extra, **kw):
    env = {"OPENAI_BASE_URL": stub.openai_base_url, "OPENAI_API_KEY": "sk-test"}
    return sim(
        "run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2", *extra,
        db=db, env=env, **kw,
    )  # fmt: skip


def test_an_unlisted_model_runs_with_the_experiments_default_sampling(sim, stub, experiment):
    db, exp_id = experiment
    result = _run(sim, stub, db, exp_id, "--llm", "openai:other")
    assert result.code == 0, result.err
    bodies = [r.body for r in stub.chat_requests]
    assert bodies and all(b["model"] == "other" for b in bodies)
    for body in bodies:  # before: the body held only the model and the messages
        assert body["temperature"] == 0.3 and body["top_p"] == 0.8
        assert body["max_tokens"] == 17
    assert "openai:other is not listed in the experiment" in result.err
    assert "default LLM openai:stub (temperature=0.3, top_p=0.8, max_tokens=17, seed=5)" in (
        result.err.replace("\n", " ")
    )
    [doc] = sim("conversation", "list", "--json", db=db).json()
    spec = doc["spec"]
    assert spec["role_llms"]["Guard"]["params"]["max_tokens"] == 17
    assert any("openai:other is not listed" in note for note in spec["defaults_applied"])


def test_auto_without_manager_uses_the_agents_model_and_says_so(sim, stub, experiment):
    db, exp_id = experiment
    # the experiment's first LLM is openai:stub; the agents run on openai:other
    result = _run(sim, stub, db, exp_id, "--llm", "openai:other", "--speaker", "auto")
    assert result.code == 0, result.err
    assert "manager_llm: openai:other (not given; the agents' model)" in result.err
    assert "manager: openai:other" in result.err
    [doc] = sim("conversation", "list", "--json", db=db).json()
    assert doc["spec"]["manager_llm"]["model"] == "openai:other"
    shown = sim("conversation", "show", doc["_id"], "--json", "--prompts", db=db).json()
    picks = [c for c in shown["calls"] if c["purpose"] == "manager_pick"]
    assert picks and {c["model"] for c in picks} == {"openai:other"}
    assert {r.body["model"] for r in stub.chat_requests} == {"other"}


def test_ledger_fields_mean_one_thing(sim, stub, experiment):
    """`index` is the message's place within its day for every purpose; `base_url` is the
    endpoint called even when it came from OPENAI_BASE_URL; every row is finished."""
    db, exp_id = experiment
    result = _run(
        sim, stub, db, exp_id, "--llm", "openai:stub", "--speaker", "auto", "--messages", "6",
        "--days", "2",
    )  # fmt: skip
    assert result.code == 0, result.err
    [doc] = sim("conversation", "list", "--json", db=db).json()
    shown = sim("conversation", "show", doc["_id"], "--json", "--prompts", db=db).json()
    calls = shown["calls"]
    assert [c["seq"] for c in calls] == list(range(1, len(calls) + 1))
    assert {c["base_url"] for c in calls} == {stub.openai_base_url}
    assert {c["state"] for c in calls} == {"done"}
    for day in (1, 2):
        picks = [c["index"] for c in calls if c["purpose"] == "manager_pick" and c["day"] == day]
        turns = [c["index"] for c in calls if c["purpose"] == "agent_turn" and c["day"] == day]
        # a pick may be re-asked with feedback, so an index can repeat; before, day 2's picks
        # counted the turns of the whole conversation (3, 4, 5)
        assert sorted(set(picks)) == turns == [0, 1, 2]
    assert [m["index"] for m in shown["messages"]] == [0, 1, 2, 0, 1, 2]


@pytest.mark.parametrize("ttl", ["0", "nan", "inf", "-5", "1", "abc"])
def test_a_lease_ttl_that_cannot_work_is_refused(sim, experiment, ttl):
    db, exp_id = experiment
    created = sim(
        "sweep", "create", exp_id, "--messages", "2", "--agents", "guard=1,prisoner=1",
        "--llm", "mock:a", "--yes", "--json", db=db,
    )  # fmt: skip
    sweep_id = created.json()["sweep_id"]
    result = sim("sweep", "run", sweep_id, "--lease-ttl", ttl, db=db)
    assert result.code == 2
    assert "--lease-ttl" in result.err and "Traceback" not in result.err + result.out
    status = sim("sweep", "status", sweep_id, "--json", db=db).json()
    assert status["counts"]["pending"] == 1 and status["calls"] == 0


@pytest.mark.parametrize(
    ("flag", "value"), [("--seed", "-1"), ("--seed", str(2**63)), ("--concurrency", "0")]
)
def test_out_of_range_numbers_are_refused(sim, experiment, flag, value):
    db, exp_id = experiment
    if flag == "--concurrency":
        created = sim(
            "sweep", "create", exp_id, "--messages", "2", "--agents", "guard=1,prisoner=1",
            "--llm", "mock:a", "--yes", "--json", db=db,
        ).json()  # fmt: skip
        result = sim("sweep", "run", created["sweep_id"], flag, value, db=db)
    else:
        result = sim("run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2",
                     "--llm", "mock:a", flag, value, db=db)  # fmt: skip
        assert sim("conversation", "list", "--json", db=db).json() == []
    assert result.code == 2 and flag in result.err


def test_the_largest_seed_runs(sim, stub, experiment):
    """2**63-1 is stored as given; each call's seed wraps into the 32-bit range backends take:
    the run seed plus the call's place, modulo 2**32 (turns 0 and 1, then the day's summary at
    10_000 + day), so the two turns get 2**32-1 and 0."""
    db, exp_id = experiment
    largest = 2**63 - 1
    result = _run(sim, stub, db, exp_id, "--llm", "openai:stub", "--seed", str(largest))
    assert result.code == 0, result.err
    [doc] = sim("conversation", "list", "--json", db=db).json()
    assert doc["spec"]["seed"] == largest
    assert [r.body["seed"] for r in stub.chat_requests] == [2**32 - 1, 0, 10_000]


def test_manual_speaker_without_a_terminal_is_refused_and_writes_nothing(sim, experiment):
    db, exp_id = experiment
    result = sim(
        "run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "2", "--llm", "mock:a",
        "--speaker", "manual", db=db, input="",
    )  # fmt: skip
    assert result.code == 2  # before: exit 130 and a conversation left `running`
    assert "--speaker" in result.err and "terminal" in result.err
    assert sim("conversation", "list", "--json", db=db).json() == []


def test_a_sweep_with_an_unknown_llm_is_refused_and_not_stored(sim, experiment):
    db, exp_id = experiment
    result = sim(
        "sweep", "create", exp_id, "--messages", "2", "--agents", "guard=1,prisoner=1",
        "--llm", "olama:llama3", "--yes", db=db,
    )  # fmt: skip
    assert result.code == 2
    assert "llms[0]" in result.err and "Did you mean 'ollama:'" in result.err
    assert "Traceback" not in result.err + result.out
    assert sim("sweep", "list", "--json", db=db).json() == []


def test_a_new_message_count_or_seed_makes_new_conversations(sim, experiment):
    """Before: the second sweep added nothing and silently reused the 4-message conversations."""
    db, exp_id = experiment
    common = ("--agents", "guard=1,prisoner=1", "--llm", "mock:a", "--yes", "--json")
    first = sim("sweep", "create", exp_id, "--messages", "4", *common, db=db).json()
    assert first["added"] == 1
    again = sim("sweep", "create", exp_id, "--messages", "4", *common, db=db).json()
    assert again["sweep_id"] == first["sweep_id"] and again["added"] == 0
    longer = sim(
        "sweep", "create", exp_id, "--messages", "20", "--seed", "99", *common, db=db
    ).json()
    assert longer["added"] == 1 and longer["sweep_id"] != first["sweep_id"]
    seeded = sim("sweep", "create", exp_id, "--messages", "4", "--seed", "98", *common, db=db)
    assert seeded.json()["added"] == 1
    bobs = sim("sweep", "create", exp_id, "--messages", "4", *common, db=db, user="bob").json()
    assert bobs["added"] == 1 and bobs["sweep_id"] != first["sweep_id"]  # not alice's
    docs = sim("conversation", "list", "--json", db=db).json()
    assert len(docs) == 4
    by_sweep = {d["sweep_id"]: d for d in docs}
    assert by_sweep[longer["sweep_id"]]["spec"]["total_messages"] == 20
    assert by_sweep[bobs["sweep_id"]]["owner"] == "bob"
