"""The report's memory view (issue 13): for the party run on the loopback stub, the page shows
how the news spread, the interviews checked against memory, every agent's stream with its
importance, and the reflection trees; what a model wrote is escaped, never run."""

from __future__ import annotations

import html
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))
from test_party_probe import AGENTS, party_run  # the party on the stub, probe included

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import run_grid

from simulator.analysis.report import write_report
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.analysis.party import party_measures
from simulator.worlds.grid.analysis.runs import load_runs

EVIL = "<script>alert(1)</script>"


@pytest.fixture
def stub(monkeypatch):
    def message(name: str) -> str:
        if name == "agent0":
            return "Come to my party at the cafe at 17:00!"
        return EVIL if name == "agent7" else "Hello there."

    with StubLLMServer(models=["stub"], latency_s=0.005) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        # rated 9: the threshold of 150 is passed within the run, so reflections are stored
        server.reply_fn = memory_stream_reply(rating="9", move="stay", message=message)
        yield server


def section(page: str, name: str) -> str:
    found = re.search(rf'<section id="{name}">(.*?)</section>', page, re.S)
    assert found, f"no {name} section"
    return found.group(1)


def test_the_report_shows_the_spread_the_interviews_the_streams_and_the_trees(
    embedded, stub, tmp_path
):
    store = embedded  # the page is the same from any store flavour
    run_id = party_run(store)
    assert run_grid(store, run_id).status == "done"
    ctx = write_report(store, run_id, tmp_path / "party.html")
    page = (tmp_path / "party.html").read_text()
    memory = section(page, "memory")
    assert 'href="#memory"' in page
    # the spread table: remembered and heard by step 0..2
    assert re.search(r"<th>remembered</th>(<td class=num>\d+</td>){3}</tr>", memory)
    [run] = load_runs(store, [run_id])
    news = party_measures(store, run)["news"]  # what the page reports is what was measured
    assert news["knows"] > 0
    assert f"{news['knows']} of {AGENTS} agents know of it at the end" in memory
    for agent in news["per_agent"]:
        knows = "yes" if agent["knows"] else "no"
        assert re.search(
            rf"<tr><td>{agent['agent']}</td>(<td>[^<]*</td>){{2}}<td>{knows}</td>", memory
        )
    # the spread figure is drawn
    assert any(p.key == "news_remembered" and p.data_uri for p in ctx.plots)
    # every agent's stream: one row per stored record, with its importance
    for i in range(AGENTS):
        records = store.memories.stream(run_id, i)
        block = memory.split(f"<summary>agent{i} <span class=muted>")[1].split("</details>")[0]
        assert block.startswith(f"{len(records)} records")
        assert block.count("<tr>") == len(records) + 1
        first = records[0]
        assert f"<td class=pre>{html.escape(first.text, quote=True)}</td>" in block
    thoughts = [
        r for i in range(AGENTS) for r in store.memories.stream(run_id, i) if r.type == "thought"
    ]
    assert thoughts, "the scripted run reflects"
    assert "Reflection trees" in memory and "<ul class=tree>" in memory
    # a thought's tree lists its evidence beneath it
    cited = next(t for t in thoughts if t.evidence)
    assert html.escape(cited.text, quote=True) in memory
    # what a model wrote is text
    assert EVIL not in page and html.escape(EVIL, quote=True) in memory


def test_a_report_of_a_run_without_stream_or_probe_has_no_memory_section(embedded, stub, tmp_path):
    store = embedded
    from grid_helpers import grid_view

    from simulator.worlds.grid.services import runs as grid_runs

    view = grid_view(store)
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world={"agents": 3, "steps": 1})
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]
    assert run_grid(store, run_id).status == "done"
    write_report(store, run_id, tmp_path / "plain.html")
    page = (tmp_path / "plain.html").read_text()
    assert '<section id="memory">' not in page and 'href="#memory"' not in page
