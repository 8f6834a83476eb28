"""The issue's "done when", on the loopback stub through the real CLI: the party experiment as
shipped, swept over the paper's ablation (prompts/sweeps/party_ablation.yaml), then
`llm-sim measures` gives each level's party figures and `llm-sim report` shows how the news
spread and what each agent remembered. (The bundled model's run is in the closing note.)"""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest
import yaml

from simulator.memory.testing.replies import memory_stream_reply
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer

REPO = Path(__file__).resolve().parents[2]
PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"
ABLATION = REPO / "prompts" / "sweeps" / "party_ablation.yaml"
LEVELS = ["full", "no_reflection", "no_reflection_no_planning", "no_memory"]
AGENTS, STEPS = 8, 2


@pytest.fixture
def env(tmp_path):
    def message(name: str) -> str:
        return "Come to my party at the cafe at 17:00!" if name == "agent0" else "Hello there."

    with StubLLMServer(models=["stub"]) as server:
        server.reply_fn = memory_stream_reply(rating="6", move="stay", message=message)
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def test_the_party_ablation_sweeps_measures_and_reports(run_cli, env, tmp_path):
    doc = yaml.safe_load(PARTY.read_text(encoding="utf-8"))
    doc["memory"]["embedder"] = "mock:16"  # no model loaded; everything else as shipped
    doc["world"]["radius"] = 10  # within two steps, everyone hears the host
    path = tmp_path / "party.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    made = run_cli(["experiment", "import", str(path), "--json"], env=env)
    assert made.code == 0, made.err
    exp = made.json()["id"]

    create = ["sweep", "create", exp, str(ABLATION), "--llm", "openai:stub", "--steps", str(STEPS)]
    plan = run_cli([*create, "--dry-run"], env=env)
    assert plan.code == 0, plan.err
    printed = " ".join(plan.out.split())
    assert f"memory: {', '.join(LEVELS)}" in printed
    interviews = AGENTS + AGENTS * (AGENTS - 1)
    assert f"at least {len(LEVELS) * (2 * AGENTS * STEPS + interviews):,}" in printed
    created = run_cli([*create, "--yes", "--json"], env=env)
    assert created.code == 0, created.err
    sweep = created.json()["sweep_id"]
    ran = run_cli(["sweep", "run", sweep, "--json"], env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["complete"]

    store = open_store(open_database(env["SIM_DB"], "llm_simulator"))
    try:
        runs = store.sweeps.conversations(sweep)
        assert Counter(r["cell"]["memory"] for r in runs) == dict.fromkeys(LEVELS, 1)
        for run in runs:
            assert run["status"] == "done", run.get("error")
            assert len(run["interviews"]) == interviews
    finally:
        store.close()

    measured = run_cli(["measures", sweep, "--json"], env=env)
    assert measured.code == 0, measured.err
    cells = {c["cell_label"].split("memory=")[1]: c for c in measured.json()["cells"]}
    assert set(cells) == set(LEVELS)
    # every stream level remembers the host's invitation; with no memory nothing backs a yes
    for level in LEVELS[:3]:
        assert cells[level]["news_known_share_mean"] == 1.0
        assert cells[level]["relationship_density_mean"] > 0
    assert cells["no_memory"]["news_known_share_mean"] == 0.0
    assert cells["no_memory"]["news_heard_mean"] == AGENTS  # they heard it, and forgot

    table = run_cli(["measures", sweep], env=env)  # the party's figures join the defaults
    assert table.code == 0, table.err
    assert "news_known_share" in table.out and "relationship_density" in table.out

    page_path = tmp_path / "party.html"
    report = run_cli(["report", sweep, "-o", str(page_path)], env=env)
    assert report.code == 0, report.err
    page = page_path.read_text(encoding="utf-8")
    assert '<section id="memory">' in page and "How the news spread" in page
    assert page.count("<h3>Memory streams</h3>") == 3  # the three stream levels
    assert page.count("<h3>The probe</h3>") == len(LEVELS)
