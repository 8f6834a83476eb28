"""The issue's "instead of, or beside, day summaries" (issue 13): a chat's stream goes beside
the day summaries unless `memory.day_summaries: false` puts it in their place; the choice is
printed and stored, and a block that cannot mean anything is refused naming its field."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from chat_memory_helpers import STREAM

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML
from test_chat_memory_stream import run_chat, start, stub  # noqa: F401 (stub: the fixture)

from simulator.errors import UserError
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.services.blocks import resolve_memory


def day_two_opening(store, run_id: str) -> str:
    calls = store.calls.for_conversation(run_id)
    day2 = next(c for c in calls if c["purpose"] == "agent_turn" and c["day"] == 2)
    return store.calls.prompt(day2["prompt_hash"])[1]["content"]


@pytest.mark.usefixtures("stub")
def test_a_stream_goes_beside_the_summaries_by_default_and_says_so(embedded, tmp_path):
    spec, run_id = start(embedded, tmp_path, STREAM)
    assert spec.memory.day_summaries is True
    assert any(n.startswith("memory.day_summaries: true (not given") for n in spec.defaults_applied)
    assert spec.memory.describe().endswith("beside the day summaries")
    assert run_chat(embedded, run_id).status == "done"
    assert "a summary of the day" in day_two_opening(embedded, run_id)
    assert embedded.memories.count(run_id) > 0


@pytest.mark.usefixtures("stub")
def test_day_summaries_false_puts_the_stream_in_their_place(embedded, tmp_path):
    spec, run_id = start(embedded, tmp_path, {**STREAM, "day_summaries": False})
    assert spec.memory.describe().endswith("instead of the day summaries")
    assert not any("day_summaries" in n for n in spec.defaults_applied)
    assert run_chat(embedded, run_id).status == "done"
    opening = day_two_opening(embedded, run_id)
    assert "summary" not in opening and opening.startswith("Researcher: The researcher opens")
    assert embedded.memories.count(run_id) > 0  # the stream is the memory now
    # the summaries are still written, for the researcher
    assert len(embedded.conversations.summaries(run_id)) == 2


def test_day_summaries_without_a_stream_is_refused(embedded, tmp_path):
    with pytest.raises(UserError) as caught:
        start(embedded, tmp_path, {"kind": "summary", "day_summaries": False})
    assert caught.value.field == "memory.day_summaries"


def test_day_summaries_outside_the_chat_is_refused():
    with pytest.raises(UserError) as caught:
        resolve_memory(MemorySettings(kind="stream", day_summaries=True))
    assert caught.value.field == "memory.day_summaries"


def test_an_unset_day_summaries_stays_out_of_every_dump():
    assert "day_summaries" not in MemorySettings(kind="stream").model_dump()
    assert MemorySettings(kind="stream", day_summaries=False).model_dump()["day_summaries"] is False


def test_a_grid_run_with_day_summaries_is_refused_with_exit_2(run_cli, tmp_path):
    doc = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
    doc["memory"] = {"kind": "stream", "embedder": "mock:8", "day_summaries": True}
    path = tmp_path / "grid.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    env = {"SIM_DB": str(tmp_path / "db"), "SIM_USER": "alice"}
    made = run_cli(["experiment", "import", str(path), "--json"], env=env)
    assert made.code == 0, made.err
    ran = run_cli(["run", made.json()["id"], "--llm", "mock:a", "--steps", "1"], env=env)
    assert ran.code == 2 and "memory.day_summaries" in ran.err
    listed = run_cli(["conversation", "list", "--json"], env=env)
    assert listed.code == 0 and "conv_" not in listed.out  # nothing stored
