"""The memory browser (issue 13): `llm-sim conversation memory` over a grid run whose memories
and step rows are written straight into a real store, as the engine writes them.

agent0's stream (60 simulated minutes a step): an observation, a chat and an observation; a
thought on the first two, a thought on that thought and the third record (depth 2), a plan
citing the deeper thought. Its chat's rating did not parse (the fallback 4). Step 1 showed
two observations, step 2 the first thought, the dry garden and an id that names nothing
stored; agent1 has one memory and a step row without a `retrieved` list (recorded before
retrieval was).
"""

from __future__ import annotations

import pytest

from simulator.domain.llm_choice import LLMChoice
from simulator.errors import NotFound, UserError
from simulator.memory.analysis.browser import (
    SimClock,
    browse_memories,
    clock_of,
    memory_agents,
    stored_steps,
)
from simulator.memory.domain.records import new_record
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.grid.domain.experiment import GridSpec, GridWorld

GHOST = "conv_gone-m00000-000099"


def grid_run(store, agents: int = 3, steps: int = 2, memory: dict | None = None, **extra) -> str:
    """A grid run's document; `memory` the spec's memory block (none: a run made before
    memory blocks, whose agents keep the rolling summary)."""
    world = GridWorld(width=5, height=5, agents=agents, steps=steps, radius=1)
    spec = GridSpec(
        world=world,
        start=[(i, 0) for i in range(agents)],
        llm=LLMChoice(model="mock:a"),
        seed=1,
    )
    stored = spec.model_dump(mode="json")
    stored.pop("memory", None)
    if memory is not None:
        stored["memory"] = memory
    doc = {
        "kind": "grid",
        "experiment_id": "exp_mem",
        "owner": "alice",
        "status": "done",
        "spec": stored,
        "experiment": {"name": "memory grid"},
        "agents": [{"name": f"agent{i}", "index": i} for i in range(agents)],
        **extra,
    }
    return store.conversations.create(doc)["_id"]


def stream_of(run: str) -> list:
    saw = new_record(run, 0, 0, "observation", "agent1 waves from the well", 0, 3)
    chat = new_record(
        run, 0, 1, "chat", "agent1 says the garden is dry", 60, 4, importance_fallback=True
    )
    dry = new_record(run, 0, 2, "observation", "the garden soil is cracked", 60, 6)
    friendly = new_record(run, 0, 3, "thought", "agent1 is friendly", 60, 7, evidence=[saw, chat])
    belong = new_record(
        run, 0, 4, "thought", "I belong by this garden", 120, 9, evidence=[friendly, dry]
    )
    plan = new_record(run, 0, 5, "plan", "water the garden at dawn", 120, 5, evidence=[belong])
    return [saw, chat, dry, friendly, belong, plan]


STREAM = {"kind": "stream", "minutes_per_step": 60}


def store_scene(store) -> tuple[str, list]:
    run = grid_run(store, memory=STREAM)
    records = stream_of(run)
    other = new_record(run, 1, 0, "observation", "a quiet corner", 0, 2)
    store.memories.insert([*records, other])
    rows = [
        {"step": 1, "agent_index": 0, "retrieved": [records[0].id, records[2].id]},
        {"step": 2, "agent_index": 0, "retrieved": [records[3].id, records[2].id, GHOST]},
        {"step": 1, "agent_index": 1, "retrieved": []},
        {"step": 2, "agent_index": 1},
        {"step": 1, "agent_index": 2, "retrieved": []},
        {"step": 2, "agent_index": 2, "retrieved": []},
    ]
    store.db.grid_steps.insert_many(
        [
            store.grid_steps.document(
                {"conversation_id": run, "agent": f"agent{r['agent_index']}", **r}
            )
            for r in rows
        ]
    )
    return run, records


@pytest.fixture
def scene(tmp_path, run_cli):
    """A litemongo store holding the scene; `cli(*args)` runs llm-sim on it."""
    db = str(tmp_path / "store")
    store = open_store(open_database(db, "llm_simulator"))
    run, records = store_scene(store)
    plain = grid_run(store, memory={"kind": "summary"})  # a run with no memory stream

    def cli(*args: str, width: int = 80):
        env = {"SIM_DB": db, "SIM_USER": "alice", "COLUMNS": str(width)}
        return run_cli(["conversation", *args], env=env)

    yield cli, run, records, plain, store
    store.close()


# -- the read side, on every store flavour ----------------------------------------------------


def test_the_browse_gathers_stream_trees_and_retrievals(store):
    run, records = store_scene(store)
    browse = browse_memories(store, run)
    assert [(a.index, a.name, len(a.stream)) for a in browse.agents] == [
        (0, "agent0", 6),
        (1, "agent1", 1),
    ]
    mine = browse.agents[0]
    assert mine.records == records
    assert mine.retrieved_at == {
        records[0].id: [1],
        records[2].id: [1, 2],
        records[3].id: [2],
    }
    assert [(s.step, s.recorded, s.missing) for s in mine.steps] == [
        (1, True, []),
        (2, True, [GHOST]),
    ]
    assert [s.recorded for s in browse.agents[1].steps] == [True, False]
    trees = mine.trees()  # both thoughts and the plan that cites one
    assert [t.id for t in trees] == [records[3].id, records[4].id, records[5].id]
    deep = browse.to_json()["agents"][0]["trees"][1]
    assert (deep["text"], deep["depth"]) == ("I belong by this garden", 2)
    assert [e["text"] for e in deep["evidence"]] == [
        "agent1 is friendly",
        "the garden soil is cracked",
    ]
    assert [e["text"] for e in deep["evidence"][0]["evidence"]] == [
        "agent1 waves from the well",
        "agent1 says the garden is dry",
    ]
    assert memory_agents(store, run).agents == [(0, "agent0", 6), (1, "agent1", 1)]
    assert stored_steps(store, run) == [1, 2]
    thoughts = browse_memories(store, run, agent="AGENT0", type="thought", step=2)
    assert [r.seq for r in thoughts.agents[0].records] == [3, 4]
    assert [s.step for s in thoughts.agents[0].steps] == [2]


def test_a_clock_renders_minutes_as_day_and_time():
    clock = SimClock.from_stored("08:00")
    assert clock is not None
    assert (clock.render(0), clock.render(65), clock.render(16 * 60 + 5)) == (
        "day 1 08:00",
        "day 1 09:05",
        "day 2 00:05",
    )
    assert SimClock.from_stored({"start": 420, "first_day": 3}) == SimClock(420, 3)
    assert SimClock.from_stored("eight") is None
    assert clock_of({"spec": {"world": {"clock": "06:30"}}}) == SimClock(390)
    assert clock_of({"spec": {"world": {}}}) is None
    stream = {"kind": "grid", "spec": {"memory": {"kind": "stream"}}}
    assert clock_of(stream) == SimClock(8 * 60)
    assert clock_of({**stream, "kind": "chat"}) is None  # a chat's minutes count turns


# -- the command ------------------------------------------------------------------------------


def test_the_stream_in_order_with_importance_and_fallback_marks(scene):
    cli, run, records, _, _ = scene
    result = cli("memory", run, "--agent", "agent0")
    assert result.code == 0, result.err
    out = result.out
    texts = [r.text for r in records]
    assert [out.index(t) for t in texts] == sorted(out.index(t) for t in texts)
    assert "agent1 says the garden is dry" in out and "4 (fallback)" in out
    assert out.count("(fallback)") == 2  # the mark, and the note saying what it means
    assert "importance rating did not parse" in out
    # a grid stream's minutes on the day clock its plans use (minute 0 is day 1 08:00)
    assert "day 1 10:00 (step 2)" in out and "day 1 09:00 (step 1)" in out
    assert "because of #0, #1" in out and "because of #3, #2" in out
    assert "a quiet corner" not in out  # agent1's stream is not asked for
    table = cli("memory", run, "--agent", "agent0", width=200).out.splitlines()
    dry = next(line for line in table if "the garden soil is cracked" in line)
    assert [cell.strip() for cell in dry.split("│")] == [
        "2",
        "day 1 09:00",
        "1",
        "observation",
        "6",
        "0",
        "the garden soil is cracked",
        "1, 2",  # the steps whose prompts showed it
    ]
    assert "4 (fallback)" in next(line for line in table if "says the garden" in line)
    every = cli("memory", run)
    assert "agent1 (agent 1)" in every.out and "a quiet corner" in every.out


def test_type_filter_keeps_one_kind(scene):
    cli, run, _, _, _ = scene
    out = cli("memory", run, "--agent", "0", "--type", "thought").out
    assert "agent1 is friendly" in out and "I belong by this garden" in out
    assert "agent1 waves from the well" not in out and "water the garden" not in out


def test_tree_shows_thought_then_evidence_then_deeper_evidence(scene):
    cli, run, _, _, _ = scene
    result = cli("memory", run, "--agent", "agent0", "--type", "thought", "--tree", width=160)
    assert result.code == 0, result.err
    lines = result.out.splitlines()
    start = next(
        i for i, line in enumerate(lines) if "#4" in line and "I belong by this garden" in line
    )
    tree = lines[start : start + 5]
    indent = [len(line) - len(line.lstrip(" │├└─")) for line in tree]
    assert "agent1 is friendly" in tree[1] and "depth 1" in tree[1]
    assert "agent1 waves from the well" in tree[2] and "agent1 says the garden is dry" in tree[3]
    assert "the garden soil is cracked" in tree[4]
    assert indent[0] < indent[1] < indent[2] == indent[3] and indent[4] == indent[1]
    assert "depth 2" in tree[0] and "importance 9" in tree[0]


def test_step_shows_what_the_prompt_retrieved(scene):
    cli, run, _, _, _ = scene
    result = cli("memory", run, "--agent", "agent0", "--step", "2", width=160)
    assert result.code == 0, result.err
    out = result.out
    assert "step 2: the prompt showed 3 memories" in out
    assert out.index("agent1 is friendly") < out.index("the garden soil is cracked")
    assert f"{GHOST}: not stored" in out
    assert "agent1 waves from the well" not in out  # step 1's, and the stream is not shown
    other = cli("memory", run, "--agent", "agent1", "--step", "2").out
    assert "step 2: what the prompt showed is not recorded" in other


def test_json_is_machine_readable_and_nothing_else(scene):
    cli, run, records, _, _ = scene
    result = cli("memory", run, "--agent", "agent0", "--json")
    assert result.code == 0, result.err
    data = result.json()
    (agent,) = data["agents"]
    assert [r["id"] for r in agent["records"]] == [r.id for r in records]
    assert agent["records"][1]["importance_fallback"] is True
    assert agent["records"][2]["retrieved_at"] == [1, 2]
    assert "embedding" not in agent["records"][0]
    assert agent["steps"][1] == {
        "step": 2,
        "recorded": True,
        "retrieved": [records[3].id, records[2].id, GHOST],
        "missing": [GHOST],
    }
    assert [t["id"] for t in agent["trees"]] == [r.id for r in records[3:]]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (("conv_nope",), "no conversation with id 'conv_nope'"),
        (("{run}", "--agent", "bob"), "has no agent 'bob'; its agents are agent0, agent1, agent2"),
        (("{run}", "--step", "7"), "has no step 7 (steps 1 to 2 are stored)"),
        (
            ("{plain}",),
            "has no memory stream: its experiment's memory is summary (a rolling summary",
        ),
    ],
)
def test_errors_are_one_paragraph_with_exit_2(scene, args, says):
    cli, run, _, plain, _ = scene
    result = cli("memory", *(a.format(run=run, plain=plain) for a in args))
    assert result.code == 2 and result.out == ""
    assert says in result.err and "Traceback" not in result.err


def test_unknown_type_is_refused_by_the_command_and_the_function(scene):
    cli, run, _, _, store = scene
    assert cli("memory", run, "--type", "dream").code == 2
    with pytest.raises(UserError, match="not a memory type"):
        browse_memories(store, run, type="dream")
    with pytest.raises(NotFound):
        browse_memories(store, "conv_nope")


def test_a_chat_has_its_transcript_for_memory(scene):
    _, _, _, _, store = scene
    chat = store.conversations.create(
        {"experiment_id": "exp_chat", "owner": "alice", "spec": {}, "agents": [{"name": "Guard"}]}
    )["_id"]
    with pytest.raises(UserError, match="memory is the chat's transcript and its day summaries"):
        browse_memories(store, chat)


def test_a_step_without_retrieval_recorded_is_refused(tmp_path, run_cli):
    db = str(tmp_path / "store")
    store = open_store(open_database(db, "llm_simulator"))
    run = grid_run(store, agents=1, steps=1, memory=STREAM)
    store.memories.insert([new_record(run, 0, 0, "observation", "alone", 0, 2)])
    store.db.grid_steps.insert_many(
        [store.grid_steps.document({"conversation_id": run, "step": 1, "agent_index": 0})]
    )
    store.close()
    result = run_cli(["conversation", "memory", run, "--step", "1"], env={"SIM_DB": db})
    assert result.code == 2 and "does not record which memories its prompts showed" in result.err
    assert run_cli(["conversation", "memory", run], env={"SIM_DB": db}).code == 0


def test_a_declared_stream_with_nothing_stored_says_so(tmp_path, run_cli):
    db = str(tmp_path / "store")
    store = open_store(open_database(db, "llm_simulator"))
    run = grid_run(store, memory={"kind": "stream"}, status="pending")
    store.close()
    result = run_cli(["conversation", "memory", run], env={"SIM_DB": db})
    assert result.code == 2
    assert "has a memory stream but no memory is stored yet (status pending)" in result.err
