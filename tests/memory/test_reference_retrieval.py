"""`retrieval: reference` ranks as joonspk-research/generative_agents does, and the memory
block's retrieval keys are accepted, override the preset, are stored and printed, and are
checked with a clear error.

`code_retrieve` restates, step for step, `new_retrieve` of the reference code
(reverie/backend_server/persona/cognitive_modules/retrieve.py, with `extract_recency`,
`extract_importance`, `extract_relevance`, `normalize_dict_floats`, `top_highest_x_values`
and `cos_sim`) over fake persona nodes laid out as associative_memory.py lays them out
(each new node inserted at the front of `seq_event` or `seq_thought`). The same records then
go through `MemorySettings` -> `AgentMemory` (as the engine's memory keeper builds a resumed
agent), and both must return the same records in the same order.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import numpy as np
import pytest
import yaml

from simulator.memory.domain.agent_memory import AgentMemory
from simulator.memory.domain.records import MemoryRecord, new_record
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.testing.replies import memory_stream_reply
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer

FIXTURES = Path(__file__).parents[1] / "fixtures" / "generative_agents"
FIXTURE = json.loads((FIXTURES / "nodes.json").read_text())
CODE_LIST = {"observation": "event", "thought": "thought", "plan": "thought", "chat": "chat"}


# --- the reference code's ranking, restated over fake persona nodes --------------------------


def code_persona(decay: float) -> SimpleNamespace:
    """A persona as new_retrieve reads it: scratch weights and decay, and the associative
    memory's node lists (newest first), id -> node map and text -> vector map."""
    a_mem = SimpleNamespace(seq_event=[], seq_thought=[], seq_chat=[], id_to_node={}, embeddings={})
    for number, node in enumerate(FIXTURE["nodes"], start=1):
        made = SimpleNamespace(
            node_id=f"node_{number}",
            type=CODE_LIST[node["type"]],
            embedding_key=node["text"],
            poignancy=node["importance"],
            last_accessed=node["last_accessed"],
        )
        getattr(a_mem, f"seq_{made.type}")[0:0] = [made]  # add_event / add_thought / add_chat
        a_mem.id_to_node[made.node_id] = made
        a_mem.embeddings[made.embedding_key] = node["vector"]
    scratch = SimpleNamespace(recency_w=1, relevance_w=1, importance_w=1, recency_decay=decay)
    return SimpleNamespace(a_mem=a_mem, scratch=scratch)


def _scaled(values: dict) -> dict:
    """normalize_dict_floats(d, 0, 1): all equal -> (1 - 0) / 2."""
    low, high = min(values.values()), max(values.values())
    if high - low == 0:
        return {key: (1 - 0) / 2 for key in values}
    return {key: (v - low) * (1 - 0) / (high - low) + 0 for key, v in values.items()}


def code_retrieve(persona: SimpleNamespace, focal: list[float], now: int, n_count: int) -> list:
    """new_retrieve for one focal point whose embedding is `focal`: the node ids, best first."""
    nodes = [
        [node.last_accessed, node]
        for node in persona.a_mem.seq_event + persona.a_mem.seq_thought
        if "idle" not in node.embedding_key
    ]
    nodes = [node for _, node in sorted(nodes, key=lambda pair: pair[0])]
    decay = persona.scratch.recency_decay
    recency = _scaled({n.node_id: decay**i for i, n in enumerate(nodes, start=1)})
    importance = _scaled({n.node_id: n.poignancy for n in nodes})
    relevance = _scaled(
        {
            n.node_id: np.dot(persona.a_mem.embeddings[n.embedding_key], focal)
            / (np.linalg.norm(persona.a_mem.embeddings[n.embedding_key]) * np.linalg.norm(focal))
            for n in nodes
        }
    )
    gw = [0.5, 3, 2]
    scratch = persona.scratch
    total = {
        key: scratch.recency_w * recency[key] * gw[0]
        + scratch.relevance_w * relevance[key] * gw[1]
        + scratch.importance_w * importance[key] * gw[2]
        for key in recency
    }
    best = dict(sorted(total.items(), key=lambda item: item[1], reverse=True)[:n_count])
    for key in best:
        persona.a_mem.id_to_node[key].last_accessed = now
    return list(best)


# --- the same records through this tool's memory ---------------------------------------------


def records() -> list[MemoryRecord]:
    made = []
    for seq, node in enumerate(FIXTURE["nodes"]):
        record = new_record("conv_ga", 0, seq, node["type"], node["text"], node["created"], 5)
        made.append(
            record.model_copy(
                update={"importance": node["importance"], "last_accessed": node["last_accessed"]}
            )
        )
    return made


def our_memory(block: dict) -> AgentMemory:
    resolved, _ = MemorySettings.model_validate({"kind": "stream", **block}).resolved()
    vectors = np.array([node["vector"] for node in FIXTURE["nodes"]])
    return AgentMemory.from_stored(records(), vectors, resolved.retrieval_settings())


def our_retrieve(memory: AgentMemory, focal: list[float], now: int, k: int) -> list[str]:
    return [f"node_{r.seq + 1}" for r in memory.retrieve(np.array(focal), now, k)]


def both(block: dict, k: int) -> tuple[list[list[str]], list[list[str]]]:
    """Each query of the fixture in turn (the second sees the first's accesses), by the
    code and by this tool."""
    persona, memory = code_persona(FIXTURE["decay"]), our_memory(block)
    code, ours = [], []
    for query in FIXTURE["queries"]:
        code.append(code_retrieve(persona, query["vector"], query["now"], k))
        ours.append(our_retrieve(memory, query["vector"], query["now"], k))
    return code, ours


@pytest.mark.parametrize("k", [30, 5])
def test_reference_retrieval_returns_the_codes_records_in_the_codes_order(k):
    code, ours = both({"retrieval": "reference", "top_k": k}, k)
    assert ours == code
    # every event and thought but the idle one (2); no chats (3, 9)
    candidates = {f"node_{n}" for n in (1, 4, 5, 6, 7, 8, 10, 11, 12, 13)}
    assert set(ours[0]) <= candidates and set(ours[1]) <= candidates
    assert len(ours[0]) == min(k, 10)


def test_the_fixture_tells_the_codes_ranking_from_the_old_one():
    """Ranked from the newest access over every record (the reference preset before it
    followed the code), the same queries give another order: the check can fail."""
    code, _ = both({"retrieval": "reference"}, 30)
    old = {"retrieval": "reference", "rank_order": "newest_first", "candidates": "all"}
    _, ours = both(old, 30)
    assert ours != code
    _, codes_candidates_newest_first = both({**old, "candidates": "events_and_thoughts"}, 30)
    assert codes_candidates_newest_first != code  # the tie order alone changes the ranking


def test_ties_in_last_access_follow_the_codes_list_order():
    # after the first query every candidate was accessed at minute 100: the second query's
    # ranks are the list order alone, events newest first, then thoughts newest first
    persona = code_persona(FIXTURE["decay"])
    first, second = FIXTURE["queries"]
    code_retrieve(persona, first["vector"], first["now"], 30)
    memory = our_memory({"retrieval": "reference"})
    our_retrieve(memory, first["vector"], first["now"], 30)
    scores = memory.stream.scores(np.array(second["vector"]), second["now"], memory.retrieval)
    ranked = [f"node_{scores.index[i] + 1}" for i in scores.order]
    events = ["node_13", "node_11", "node_8", "node_5", "node_4", "node_1"]
    assert ranked == [*events, "node_12", "node_10", "node_7", "node_6"]


def test_the_papers_preset_still_ranks_every_record_by_hours():
    memory = our_memory({})
    settings = memory.retrieval
    assert (settings.recency, settings.candidates, settings.top_k) == ("hours", "all", 10)
    found = our_retrieve(memory, FIXTURE["queries"][0]["vector"], 100, 13)
    assert {"node_2", "node_3", "node_9"} <= set(found)


# --- the memory block's keys ------------------------------------------------------------------


def test_keys_override_the_preset_and_unset_ones_are_filled_and_noted():
    block = MemorySettings.model_validate(
        {
            "kind": "stream",
            "retrieval": "reference",
            "weights": {"relevance": 1.5},
            "recency_decay": 0.99,
            "candidates": "all",
        }
    )
    resolved, notes = block.resolved()
    settings = resolved.retrieval_settings()
    assert (settings.recency_weight, settings.importance_weight) == (0.5, 2.0)
    assert (settings.relevance_weight, settings.decay, settings.candidates) == (1.5, 0.99, "all")
    assert (settings.recency, settings.rank_order, settings.top_k) == ("rank", "oldest_first", 30)
    assert "memory.weights.recency: 0.5 (not given)" in notes
    assert "memory.rank_order: oldest_first (not given)" in notes
    assert not any(n.startswith(("memory.candidates", "memory.recency_decay")) for n in notes)
    assert resolved.model_dump()["weights"] == {"recency": 0.5, "importance": 2.0, "relevance": 1.5}
    assert "ranking (weights recency 0.5, importance 2, relevance 1.5; recency 0.99 per rank" in (
        resolved.describe()
    )


def test_unset_keys_stay_out_of_the_dump_and_an_old_reference_spec_keeps_its_ranking():
    stored = {"kind": "stream", "retrieval": "reference", "top_k": 30, "reflection": True}
    block = MemorySettings.model_validate(stored)
    assert block.model_dump(exclude_none=True) == stored
    assert not {"weights", "recency", "rank_order", "candidates"} & set(block.model_dump())
    old = block.retrieval_settings()
    assert (old.rank_order, old.candidates) == ("newest_first", "all")
    new, _ = block.resolved()
    assert (new.rank_order, new.candidates) == ("oldest_first", "events_and_thoughts")


@pytest.fixture
def cli(tmp_path, run_cli):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        server.reply_fn = memory_stream_reply()
        env = {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
            "COLUMNS": "200",
        }
        yield lambda *args: run_cli(list(args), env=env)


def _grid_file(tmp_path: Path, memory: dict) -> Path:
    shipped = Path(__file__).parents[2] / "prompts" / "experiments" / "takata_grid.yaml"
    doc = yaml.safe_load(shipped.read_text(encoding="utf-8"))
    doc["memory"] = {"kind": "stream", "embedder": "mock:8", **memory}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    return path


def test_the_keys_are_stored_printed_in_the_header_and_resolved_onto_the_spec(cli, tmp_path):
    memory = {"retrieval": "reference", "weights": {"recency": 1}, "rank_order": "newest_first"}
    made = cli("experiment", "import", str(_grid_file(tmp_path, memory)), "--json")
    assert made.code == 0, made.err
    shown = cli("experiment", "show", made.json()["id"], "--json")
    stored = shown.json()["experiment"]["memory"]
    assert stored["weights"] == {"recency": 1.0} and stored["rank_order"] == "newest_first"
    assert "candidates" not in stored and "recency_decay" not in stored
    ran = cli("run", made.json()["id"], "--llm", "openai:stub", "--steps", "1", "--agents", "2")
    assert ran.code == 0, ran.err
    assert (
        "ranking (weights recency 1, importance 2, relevance 3; recency 0.995 per rank by last "
        "access, newest first; candidates events and thoughts (no chats, no idle))"
    ) in ran.err
    assert "default: memory.weights.relevance: 3 (not given)" in ran.err
    assert "default: memory.candidates: events_and_thoughts (not given)" in ran.err
    store = open_store(open_database(str(tmp_path / "store"), "llm_simulator"))
    try:
        [run] = store.conversations.list(made.json()["id"])
        spec = run["spec"]["memory"]
    finally:
        store.close()
    assert spec["weights"] == {"recency": 1.0, "importance": 2.0, "relevance": 3.0}
    assert (spec["recency"], spec["rank_order"], spec["recency_decay"]) == (
        "rank",
        "newest_first",
        0.995,
    )
    assert (spec["candidates"], spec["top_k"]) == ("events_and_thoughts", 30)


@pytest.mark.parametrize(
    ("memory", "named"),
    [
        ({"weights": {"recency": -1}}, "weights.recency"),
        ({"weights": {"novelty": 1}}, "weights.novelty"),
        ({"recency_decay": 1.5}, "recency_decay"),
        ({"recency": "days"}, "recency"),
        ({"candidates": "chats"}, "candidates"),
        ({"rank_order": "oldest_first"}, "rank_order"),  # the paper's recency is by hours
    ],
)
def test_bad_values_exit_2_naming_the_key(cli, tmp_path, memory, named):
    result = cli("experiment", "import", str(_grid_file(tmp_path, memory)))
    assert result.code == 2, result.err
    assert "Traceback" not in result.err
    assert named in result.err
    assert cli("experiment", "list", "--json").json() == []


ORIGINAL = json.loads((FIXTURES / "original_top_k.json").read_text(encoding="utf-8"))


@pytest.mark.parametrize("k", [30, 8, 5, 3])
def test_reference_retrieval_equals_the_original_codes_own_output(k):
    """The orders the original new_retrieve printed for this fixture (run outside the
    repository: tests/fixtures/generative_agents/original_top_k.json), not a restatement."""
    _, ours = both({"retrieval": "reference", "top_k": k}, k)
    assert ours == ORIGINAL["top_k"][str(k)]
