"""The party read as Park et al. (2023, section 7) report theirs, on a run whose figures are
worked out by hand: the shipped party experiment (prompts/experiments/party_grid.yaml) with
the agents placed so that exactly agent1, agent2 and agent7 hear the host's invitation, nobody
moving, and the interviews answered from a fixed table with two answers that no memory backs.

    agent0 (5, 5) host   agent1 (5, 6)   agent2 (8, 5)   agent7 (5, 4)    message range 3
    agent3 (0, 0)  agent4 (9, 9)  agent5 (0, 9)  agent6 (9, 0)            (no torus)

{0, 1, 2, 7} are all within 3 of each other and at least 4 from every corner agent, and the
corners are 9 apart: the four hear each other every step and nobody else hears anyone.
agent3's and agent4's seed memories name each other (one relationship at the start).
"""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import REPO, run_grid

from simulator.analysis.report import render_report
from simulator.memory.domain.settings import MemorySettings
from simulator.memory.testing.replies import memory_stream_reply
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.testing import StubLLMServer
from simulator.worlds.grid.analysis.measures import cell_summaries, grid_measures
from simulator.worlds.grid.analysis.party import party_measures
from simulator.worlds.grid.analysis.report.party_paper import cells_paper_table
from simulator.worlds.grid.analysis.runs import load_runs
from simulator.worlds.grid.analysis.table import export_grid
from simulator.worlds.grid.services import runs as grid_runs

PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"
POSITIONS = [[5, 5], [5, 6], [8, 5], [0, 0], [9, 9], [0, 9], [9, 0], [5, 4]]
NEAR = {"agent0", "agent1", "agent2", "agent7"}
SAYS_NEWS = NEAR | {"agent3"}  # agent3 never heard of it: a hallucinated yes
KNOWS = {(a, b) for a in NEAR for b in NEAR if a != b} | {
    ("agent3", "agent4"),
    ("agent4", "agent3"),
    ("agent5", "agent6"),  # they never met: a hallucinated yes
}
_ASKED = re.compile(r"^You are (agent\d+)\..*An interviewer asks you: (.*?)\n", re.S)


def answers(body: dict) -> str | None:
    """The fixed interview table; None for every other prompt."""
    asked = _ASKED.search(body["messages"][-1]["content"])
    if asked is None:
        return None
    name, question = asked.groups()
    other = re.match(r"Do you know (agent\d+)\?", question)
    said = (name, other.group(1)) in KNOWS if other else name in SAYS_NEWS
    return "Yes, I do." if said else "No, I do not."


@pytest.fixture
def stub(monkeypatch):
    run = memory_stream_reply(
        rating="3",
        move="stay",
        message=lambda n: "Come to my party at the cafe at 17:00!" if n == "agent0" else "Hi.",
    )
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = lambda body: answers(body) or run(body)
        yield server


def party_run(store) -> str:
    view = exp_service.import_yaml(store, PARTY, "alice")
    experiment = view.experiment
    memory = {"embedder": "mock:32", "reflection": False, "planning": False}
    experiment.memory = MemorySettings.model_validate({**experiment.memory.model_dump(), **memory})
    experiment.personas[3].memories.append("agent4 lives next door and we talk every day.")
    experiment.personas[4].memories.append("My friend agent3 keeps the shop.")
    # eleven one-hour steps from 08:00: steps 10 and 11 start at 17:00 and 18:00
    world = {"steps": 11, "radius": 3, "positions": POSITIONS}
    spec = grid_runs.build_spec(view, llm="openai:stub", seed=1, world=world)
    return run_service.create_run(store, view, spec, "alice")["_id"]


def test_the_papers_figures_worked_out_by_hand(store, stub, tmp_path):
    run_id = party_run(store)
    assert run_grid(store, run_id).status == "done"
    heard = {r["agent"] for r in store.grid_steps.for_run(run_id) if "agent0" in r["heard_from"]}
    assert heard == NEAR - {"agent0"}  # the layout does what the docstring says

    [run] = load_runs(store, [run_id])
    party = party_measures(store, run)
    assert party is not None
    news = party["news"]
    assert news["knew_at_start"] == 1  # the host's seed memories
    assert news["knows"] == len(NEAR) and news["unbacked_yes"] == 1
    rel = party["relationships"]
    assert rel["start_density"] == 1 / 28  # agent3 and agent4 of 28 pairs
    assert rel["density"] == 7 / 28  # the six pairs of NEAR and agent3-agent4
    assert rel["unbacked_yes"] == 1  # agent5 "knows" agent6
    assert party["hallucination"] == {"answers": 8 + 56, "unbacked_yes": 2, "share": 2 / 64}
    attendance = party["attendance"]
    assert attendance["steps"] == [10, 11]
    assert sorted(attendance["attended"]) == ["agent0", "agent1", "agent7"]
    assert attendance["invited"] == ["agent1", "agent2", "agent7"]  # the host invites
    assert attendance["invited_attended"] == ["agent1", "agent7"]

    [row] = grid_measures(store, [run_id], embed=None)["runs"]
    assert {k: row[k] for k in PAPER_MEASURES} == {
        "news_known_at_start": 1,
        "news_known_at_start_share": 1 / 8,
        "news_known": 4,
        "news_known_share": 4 / 8,
        "relationship_density_at_start": 1 / 28,
        "relationship_density": 7 / 28,
        "interview_answers": 64,
        "hallucinated_answers": 2,
        "hallucinated_answer_share": 2 / 64,
        "invited": 3,
        "invited_attended": 2,
        "attended": 3,
    }

    page, _ = render_report(store, run_id)
    table = re.search(r'<table class="paper-table">(.*?)</table>', page, re.S)
    assert table, "no comparison table"
    rows = {
        re.sub(r"<[^>]+>", "", cells[0]): [re.sub(r"<[^>]+>", "", c) for c in cells[1:]]
        for cells in (
            re.findall(r"<t[hd][^>]*>(.*?)</t[hd]>", tr)
            for tr in re.findall(r"<tr>(.*?)</tr>", table[1])
        )
    }
    assert rows["quantity"] == ["paper (Park et al. 2023)", "this run"]
    assert rows["agents who knew of the party at the start"] == ["1 of 25 (4%)", "1 of 8 (12.5%)"]
    assert rows["agents who knew of the party at the end"] == ["13 of 25 (52%)", "4 of 8 (50.0%)"]
    assert rows["relationship density at the start"] == ["0.167", "0.036"]
    assert rows["relationship density at the end"] == ["0.74", "0.250"]
    assert rows["interview answers hallucinated"] == ["6 of 453 (1.3%)", "2 of 64 (3.1%)"]
    assert rows["agents invited (heard of it before it began)"] == ["12", "3"]
    assert rows["invited agents who attended"] == ["5 of 12", "2 of 3 (66.7%)"]

    # the export's run row carries the same figures
    export_grid(store, [run_id], "jsonl", tmp_path / "out")
    [exported] = [json.loads(line) for line in (tmp_path / "out" / "grid_runs.jsonl").open()]
    assert {k: exported[k] for k in PAPER_MEASURES} == {k: row[k] for k in PAPER_MEASURES}

    # a cell of two runs (this one, and one whose news reached everyone): mean and interval
    other = {**row, "news_known": 8, "cell_key": row["cell_key"]}
    [cell] = cell_summaries([row, other])
    assert (
        cell["news_known_mean"] == 6 and cell["news_known_ci_low"] < 6 < cell["news_known_ci_high"]
    )
    table = cells_paper_table([cell])
    assert "<th>paper (Park et al. 2023)</th>" in table and "(n = 2)" in table
    low, high = cell["news_known_ci_low"], cell["news_known_ci_high"]
    assert f"<td class=num>6 [{low:.3g}, {high:.3g}]</td>" in table
    assert "<td class=num>0.25 [0.25, 0.25]</td>" in table  # the density, equal in both


PAPER_MEASURES = (
    "news_known_at_start",
    "news_known_at_start_share",
    "news_known",
    "news_known_share",
    "relationship_density_at_start",
    "relationship_density",
    "interview_answers",
    "hallucinated_answers",
    "hallucinated_answer_share",
    "invited",
    "invited_attended",
    "attended",
)
