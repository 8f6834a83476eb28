"""Forks of grid and network runs through the services the CLI uses: a fork at step (round) N
shares the parent's rows before N (read from the parent, never copied) and stores its own from N
on; with the parent's model and seed it continues as the parent did (the stub's replies depend
only on the prompt, the model and the call's seed); --llm and --seed change it; refusals store
nothing; a fork cut mid-step resumes to the uninterrupted result; a replay of a fork is
identical; a theory run forks with another seed from the state stored at round N-1."""

from __future__ import annotations

import asyncio
import hashlib

import pytest
from fork_helpers import REPO

from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.services import experiments as exp_service
from simulator.services import forks, replays
from simulator.services import runs as run_service
from simulator.store import lineage
from simulator.testing import StubLLMServer
from simulator.testing.cancelled_run import run_cancelling
from simulator.worlds.chat.services import runs as conv_service
from simulator.worlds.grid.services import runs as grid_runs
from simulator.worlds.network.services import runs as network_runs

GRID = REPO / "prompts" / "experiments" / "takata_grid.yaml"
NETWORK = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
MOVES = ("x+1", "x-1", "y+1", "y-1", "stay")


def world_reply(body: dict) -> str:
    """The same prompt, model and seed always get the same reply: a move for the grid's move
    prompt, an answer for the network's, else a short message."""
    seed = (body.get("options") or {}).get("seed")
    text = f"{body['model']}|{seed}|" + "|".join(m["content"] for m in body["messages"])
    digest = hashlib.sha256(text.encode()).hexdigest()
    prompt = body["messages"][-1]["content"]
    if "Choose your next move" in prompt:
        return f"I pick {MOVES[int(digest, 16) % len(MOVES)]}"
    if "Opinion" in prompt:  # the network's answer prompt
        opinion, decision = int(digest[:4], 16) % 11, ("No", "Yes")[int(digest[4], 16) % 2]
        return f'{{"Thought": "t{digest[:6]}", "Opinion": {opinion}, "Decision": "{decision}"}}'
    return f"{body['model']} says {digest[:8]}"


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["a", "b"]) as server:
        server.reply_fn = world_reply
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def _run(store, service, view, spec) -> str:
    async def go():
        llms = LLMAccess()
        try:
            await run_service.preflight(view.kind, spec, llms)
            doc = run_service.create_run(store, view, spec, "alice")
            return await service.run(store, doc["_id"], llms)
        finally:
            await llms.aclose()

    outcome = asyncio.run(go())
    assert outcome.status == "done", outcome.error
    return outcome.conversation_id


def parent_grid(store, steps: int = 2) -> str:
    view = exp_service.import_yaml(store, GRID, "alice")
    spec = grid_runs.build_spec(view, llm="ollama:a", seed=4, world={"agents": 3, "steps": steps})
    return _run(store, grid_runs, view, spec)


def parent_network(store, theory: bool = False) -> str:
    view = exp_service.import_yaml(store, NETWORK, "alice")
    settings = {"rounds": 2, "graph": {"type": "complete", "n": 3}}
    llm = None if theory else "ollama:a"
    spec = network_runs.build_spec(view, llm=llm, seed=3, settings=settings, theory=theory)
    return _run(store, network_runs, view, spec)


def plan_and_create(store, parent_id: str, at: str, **changes) -> list[dict]:
    plan = forks.plan(store, parent_id, at, **changes)

    async def go():
        llms = LLMAccess()
        try:
            await forks.preflight(plan, llms)
        finally:
            await llms.aclose()

    asyncio.run(go())
    return forks.create(store, plan, "alice")


def fork_and_run(store, parent_id: str, at: str, **changes) -> list[str]:
    docs = plan_and_create(store, parent_id, at, **changes)

    async def go():
        llms = LLMAccess()
        try:
            return await forks.run_all(store, docs, llms)
        finally:
            await llms.aclose()

    outcomes = asyncio.run(go())
    assert [o.status for o in outcomes] == ["done"] * len(docs), [o.error for o in outcomes]
    return [d["_id"] for d in docs]


GRID_STATE = ("step", "agent", "position_before", "position_after", "message", "received")
GRID_STATE += ("memory", "move_reply", "move", "move_fallback", "heard_from", "recipients")
NETWORK_STATE = ("round", "agent", "opinion", "decision", "thought", "friends", "replies")


def _state(rows: list[dict], fields: tuple[str, ...]) -> list[tuple]:
    return [tuple(str(r.get(f)) for f in fields) for r in rows]


def _ledger(store, run_id: str) -> list[tuple]:
    rows = store.calls.for_conversation(run_id)
    return [(r["purpose"], r["day"], r["index"], r["prompt_hash"], r["response"]) for r in rows]


def test_a_grid_fork_at_step_2_shares_the_parents_step_1_rows_and_continues_as_it_did(store, stub):
    parent = parent_grid(store)
    [fork] = fork_and_run(store, parent, "2")
    parent_rows = store.grid_steps.for_run(parent)
    own = store.grid_steps.for_run(fork)
    assert [r["step"] for r in own] == [2, 2, 2]  # nothing before the fork point is copied
    assert {r["conversation_id"] for r in own} == {fork}
    shared = lineage.world_prefix(store, store.conversations.get(fork)).rows
    assert [r["_id"] for r in shared] == [r["_id"] for r in parent_rows if r["step"] == 1]
    steps = conv_service.transcript(store, fork)["steps"]
    assert [r["conversation_id"] for r in steps] == [parent] * 3 + [fork] * 3
    # same model, same seed, a prompt-deterministic stub: the parent's step 2 again
    assert _state(steps, GRID_STATE) == _state(parent_rows, GRID_STATE)
    step_two = [c for c in _ledger(store, parent) if c[1] == 2]
    assert _ledger(store, fork) == step_two  # the same prompts with the same per-call seeds
    doc = store.conversations.get(fork)
    assert doc["fork_of"] == parent and doc["fork_at"] == {"step": 2} and doc["kind"] == "grid"
    assert doc["fork_shared"] == 3 and doc["counters"]["messages"] == 3  # its own rows
    assert doc["counters"]["calls"] == len(step_two)
    assert (
        doc["spec"]["seed"] == 4
        and doc["spec"]["start"] == store.conversations.get(parent)["spec"]["start"]
    )
    assert store.grid_steps.count(parent) == 6  # the parent is untouched


def test_a_network_fork_at_round_2_reads_the_answers_before_it(embedded, stub):
    parent = parent_network(embedded)
    [fork] = fork_and_run(embedded, parent, "2")
    assert [r["round"] for r in embedded.network_rounds.for_run(fork)] == [2, 2, 2]
    later = [c for c in _ledger(embedded, parent) if c[1] == 2]
    assert _ledger(embedded, fork) == later  # round 1's answers (the parent's) in its prompts


def test_another_model_and_other_seeds_change_the_continuation_only(embedded, stub):
    parent = parent_grid(embedded)
    ids = fork_and_run(embedded, parent, "2", llm="ollama:b", repetitions=2)
    docs = [embedded.conversations.get(i) for i in ids]
    assert [d["spec"]["seed"] for d in docs] == [4, 5]
    assert [d["fork_repetition"] for d in docs] == [1, 2] and len(
        {d["fork_group"] for d in docs}
    ) == 1
    assert any(
        "seed: 4 (not given; the parent's)" in n for n in docs[0]["spec"]["defaults_applied"]
    )
    assert {d["spec"]["llm"]["model"] for d in docs} == {"ollama:b"}
    assert {a["model"] for a in docs[0]["agents"]} == {"ollama:b"}
    parent_rows = embedded.grid_steps.for_run(parent)
    for doc in docs:
        calls = embedded.calls.for_conversation(doc["_id"])
        assert {c["model"] for c in calls} == {"ollama:b"} and {c["day"] for c in calls} == {2}
        own = embedded.grid_steps.for_run(doc["_id"])
        assert [r["message"] for r in own] != [r["message"] for r in parent_rows[3:]]
        # the state it starts from is the parent's
        assert [r["position_before"] for r in own] == [r["position_after"] for r in parent_rows[:3]]
    first, second = (embedded.grid_steps.for_run(i) for i in ids)
    assert [r["message"] for r in first] != [r["message"] for r in second]  # seeds 4 and 5


def test_a_fork_of_a_fork_reads_each_step_from_whoever_stored_it(embedded, stub):
    parent = parent_grid(embedded, steps=3)
    [child] = fork_and_run(embedded, parent, "2", seed=9)
    [grandchild] = fork_and_run(embedded, child, "3")
    rows = conv_service.transcript(embedded, grandchild)["steps"]
    assert [(r["step"], r["conversation_id"]) for r in rows] == [(1, parent)] * 3 + [
        (2, child)
    ] * 3 + [(3, grandchild)] * 3
    child_rows = embedded.grid_steps.for_run(child)
    assert _state(rows[3:6], GRID_STATE) == _state(child_rows[:3], GRID_STATE)
    assert _state(rows[6:], GRID_STATE) == _state(child_rows[3:], GRID_STATE)  # seed 9 kept
    [earlier] = fork_and_run(embedded, child, "1")  # before the child's own fork point: nothing
    assert {r["conversation_id"] for r in conv_service.transcript(embedded, earlier)["steps"]} == {
        earlier
    }


@pytest.mark.parametrize(
    ("world", "at", "changes", "words"),
    [
        ("grid", "3", {}, "has no step 3 to fork at: a fork of it starts at step 1 to 2"),
        ("grid", "0", {}, "has no step 0 to fork at"),
        ("grid", "1:1", {}, "--at: '1:1' is not a step"),
        ("grid", "round:1", {}, "--at: 'round:1' is not a step"),
        ("grid", "1", {"edit": "hello"}, "--edit: --edit has no meaning for"),
        ("grid", "1", {"speaker": "random"}, "a grid fork takes --llm, --repetitions and --seed"),
        ("grid", "1", {"llm_for": ["a=ollama:b"]}, "--llm-for: --llm-for has no meaning"),
        ("grid", "1", {"variants": ["x=y"]}, "--variant: --variant has no meaning"),
        ("grid", "1", {"repetitions": 0}, "--repetitions: 0 repetitions"),
        ("grid", "1", {"llm": "nosuch"}, "--llm"),
        ("network", "3", {}, "a fork of it starts at round 1 to 2 (the rounds it stored)"),
        ("network", "0", {}, "round 0 is the agents table's answers"),
        ("network", "step:1", {}, "--at: 'step:1' is not a round"),
        ("network", "1", {"edit": "x", "speaker": "auto"}, "--edit and --speaker have no meaning"),
    ],
)
def test_bad_world_forks_are_refused_before_anything_is_stored(
    embedded, stub, world, at, changes, words
):
    parent = parent_grid(embedded) if world == "grid" else parent_network(embedded)
    before = embedded.conversations.count()
    with pytest.raises(UserError) as refused:
        forks.plan(embedded, parent, at, **changes)
    assert words in str(refused.value)
    assert embedded.conversations.count() == before


def test_a_memory_stream_run_and_a_theory_run_with_a_model_are_refused(embedded, stub):
    view = exp_service.import_yaml(embedded, GRID, "alice")
    spec = grid_runs.build_spec(view, llm="ollama:a", seed=4, world={"agents": 3, "steps": 2})
    stream = spec.model_copy(update={"memory": spec.memory.model_copy(update={"kind": "stream"})})
    stream_run = run_service.create_run(embedded, view, stream, "alice")["_id"]
    with pytest.raises(UserError, match="keeps a memory stream") as refused:
        forks.plan(embedded, stream_run, "1")
    assert "forks of memory-stream runs are not built yet" in str(refused.value)
    theory = parent_network(embedded, theory=True)
    with pytest.raises(UserError, match="is a theory run, which has no model to change"):
        forks.plan(embedded, theory, "1", llm="ollama:b")


def test_a_fork_sweep_still_refuses_a_grid_parent(embedded, stub):
    parent = parent_grid(embedded)
    with pytest.raises(UserError, match=f"{parent} is a grid run; forks branch chat") as refused:
        forks.branch(embedded, parent, "1:0")
    assert f"llm-sim conversation fork {parent} --at N" in refused.value.fix


@pytest.mark.parametrize(("world", "at", "cut"), [("grid", "2", 4), ("network", "1", 4)])
def test_a_fork_cut_mid_step_resumes_to_the_uninterrupted_result(embedded, stub, world, at, cut):
    parent = parent_grid(embedded) if world == "grid" else parent_network(embedded)
    service = grid_runs if world == "grid" else network_runs
    fields = GRID_STATE if world == "grid" else NETWORK_STATE
    collection = embedded.grid_steps if world == "grid" else embedded.network_rounds
    [whole] = fork_and_run(embedded, parent, at, llm="ollama:b")
    [cut_fork] = (d["_id"] for d in plan_and_create(embedded, parent, at, llm="ollama:b"))

    def start(llms, on_call):
        return service.run(embedded, cut_fork, llms, on_call=on_call)

    assert run_cancelling(start, cancel_after=cut) is None
    assert embedded.conversations.get(cut_fork)["status"] == "interrupted"
    assert len(collection.for_run(cut_fork)) < len(collection.for_run(whole))
    outcome = run_cancelling(start)
    assert outcome is not None and outcome.status == "done", outcome
    assert _state(collection.for_run(cut_fork), fields) == _state(collection.for_run(whole), fields)
    done = embedded.conversations.get(cut_fork)
    assert done["counters"]["messages"] == embedded.conversations.get(whole)["counters"]["messages"]
    assert (
        conv_service.transcript(embedded, cut_fork)["steps" if world == "grid" else "rounds"][0][
            "conversation_id"
        ]
        == parent
    )


def test_a_replay_of_a_grid_fork_is_a_fork_of_the_same_parent_and_identical(embedded, stub):
    parent = parent_grid(embedded)
    [fork] = fork_and_run(embedded, parent, "2", llm="ollama:b")

    async def go():
        llms = LLMAccess()
        try:
            return await replays.replay(embedded, replays.plan(embedded, fork), llms, "alice")
        finally:
            await llms.aclose()

    result = asyncio.run(go())
    assert result.verdict.identical, result.verdict.to_json()
    again = embedded.conversations.get(result.outcome.conversation_id)
    assert again["replay_of"] == fork and again["fork_of"] == parent
    assert again["fork_at"] == {"step": 2} and again["fork_shared"] == 3
    assert [r["step"] for r in embedded.grid_steps.for_run(again["_id"])] == [2, 2, 2]


def test_a_theory_run_forks_with_another_seed_from_the_stored_state(embedded, stub):
    parent = parent_network(embedded, theory=True)
    ids = fork_and_run(embedded, parent, "1", seed=11, repetitions=2)
    again = fork_and_run(embedded, parent, "1", seed=11)
    parent_rows = embedded.network_rounds.for_run(parent)
    for run_id in ids:
        own = embedded.network_rounds.for_run(run_id)
        assert [r["round"] for r in own] == [1, 1, 1, 2, 2, 2]
        assert all("exact_opinion" in r for r in own)
        shared = conv_service.transcript(embedded, run_id)["rounds"][:3]
        assert shared == parent_rows[:3]
    rows = [embedded.network_rounds.for_run(i) for i in (*ids, *again)]
    assert _state(rows[0], NETWORK_STATE) == _state(rows[2], NETWORK_STATE)  # seed 11 twice
    assert [r["exact_opinion"] for r in rows[0]] == [r["exact_opinion"] for r in rows[2]]


def test_conversation_fork_and_show_of_a_grid_run_through_the_cli(run_cli, tmp_path, stub):
    from simulator.store.store import open_store_uri

    env = {"SIM_DB": str(tmp_path / "cli-store"), "SIM_USER": "alice", "OLLAMA_HOST": stub.url}
    store = open_store_uri(env["SIM_DB"])
    try:
        parent = parent_grid(store)
    finally:
        store.close()
    forked = run_cli(["conversation", "fork", parent, "--at", "2", "--json"], env=env)
    assert forked.code == 0, forked.err
    result = forked.json()
    assert result["fork_at"] == {"step": 2} and result["edited"] is False
    [entry] = result["conversations"]
    assert entry["status"] == "done" and entry["seed"] == 4
    shown = run_cli(["conversation", "show", entry["conversation_id"]], env=env)
    assert shown.code == 0, shown.err
    out = " ".join(shown.out.split())
    assert f"fork of {parent} at step 2" in out
    assert f"Step 1 (shared, stored in {parent})" in out
    assert "Step 2 (shared" not in out
    plain = run_cli(
        ["conversation", "fork", parent, "--at", "step:2", "--llm", "ollama:b"], env=env
    )
    assert plain.code == 0, plain.err
    err = " ".join(plain.err.split())
    assert f"fork: fork of {parent} at step 2: shares its 3 rows of step 1 (read from it" in err
    assert "fork: model from step 2 on: ollama:b" in err and "model: ollama:b" in err
    listed = run_cli(["conversation", "list", "--all", "--json"], env=env).json()
    before = len(listed)
    for args, words in (
        (["--at", "5"], "has no step 5 to fork at"),
        (["--at", "1", "--edit", "hi"], "a grid fork takes --llm, --repetitions and --seed"),
    ):
        refused = run_cli(["conversation", "fork", parent, *args], env=env)
        assert refused.code == 2 and words in " ".join(refused.err.split()), refused.err
    assert len(run_cli(["conversation", "list", "--all", "--json"], env=env).json()) == before


def test_the_analysis_reads_a_world_fork_as_its_whole_run(embedded, stub):
    from simulator.worlds.grid.analysis.runs import load_runs as grid_runs_of
    from simulator.worlds.network.analysis.runs import load_runs as network_runs_of

    grid_parent = parent_grid(embedded)
    [grid_fork] = fork_and_run(embedded, grid_parent, "2")
    [run] = grid_runs_of(embedded, [grid_fork])
    [original] = grid_runs_of(embedded, [grid_parent])
    assert run.steps == [1, 2] and run.positions == original.positions
    network_parent = parent_network(embedded)
    [network_fork] = fork_and_run(embedded, network_parent, "2")
    [opinions] = network_runs_of(embedded, [network_fork])
    assert sorted({r["round"] for r in opinions.rows}) == [0, 1, 2]
    from simulator.worlds.grid.analysis.table import step_rows
    from simulator.worlds.network.analysis.tables import round_rows

    # exported under the fork's id, each row says which run stored it
    stored = {(r["step"], r["stored_in"]) for r in step_rows(run)}
    assert stored == {(1, grid_parent), (2, grid_fork)}
    stored = {(r["round"], r["stored_in"]) for r in round_rows(opinions)}
    assert stored == {(0, network_parent), (1, network_parent), (2, network_fork)}
