"""Takata et al.'s message-range sweep (prompts/sweeps/takata_radius.yaml): the shipped file
plans six ranges of ten trials; a small version of it (R = 0 and 25, two seeds, two agents,
two steps) created and run through the real CLI on the loopback stub gives every measure per
R with its interval in `measures --json`, and the report draws one figure per measure against
R, read back in headless Chromium with the R values as its ticks and no console error."""

from __future__ import annotations

import base64
import itertools
import re
import shutil
import sys
from pathlib import Path

import numpy as np
import pytest
import yaml
from cdp_browser import ConsoleBrowser  # tests/analysis/cdp_browser.py

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "grid"))
from grid_helpers import GRID_YAML, REPO, scripted

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.grid.analysis import measures as measures_mod
from simulator.worlds.grid.testing.personality_replies import by_agent, personality_reply

SWEEP_YAML = REPO / "prompts" / "sweeps" / "takata_radius.yaml"
SMALL = ["--radius", "0,25", "--seeds", "1,2", "--agents", "2", "--steps", "2"]


def fake_embed(texts):
    return np.array([[len(t.split()), t.count("#")] for t in texts], dtype=float)


@pytest.fixture
def env(tmp_path, monkeypatch):
    monkeypatch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
    with StubLLMServer(models=["stub"]) as server:
        # the personality test: agent1 answers B to every item, agent0 A
        server.reply_fn = personality_reply(by_agent({"agent1": "B"}), scripted("x+1"))
        yield {
            "SIM_DB": str(tmp_path / "store"),
            "SIM_USER": "alice",
            "OPENAI_BASE_URL": server.openai_base_url,
        }


def _import(run_cli, env, personality: bool = False) -> str:
    """The shipped experiment; with `personality`, the paper's test before step 1 and after
    the last (the shipped file leaves it out: 640 more calls a run)."""
    path = GRID_YAML
    if personality:
        data = yaml.safe_load(GRID_YAML.read_text(encoding="utf-8"))
        data["personality"] = {"inventory": "oejts"}
        path = Path(env["SIM_DB"]).parent / "takata_personality.yaml"
        path.write_text(yaml.safe_dump(data), encoding="utf-8")
    made = run_cli(["experiment", "import", str(path), "--json"], env=env)
    assert made.code == 0, made.err
    return made.json()["id"]


def test_the_shipped_sweep_is_the_papers_six_ranges_of_ten_trials(run_cli, env):
    spec = yaml.safe_load(SWEEP_YAML.read_text(encoding="utf-8"))
    assert spec["kind"] == "grid" and spec["radius"] == [0, 5, 10, 15, 20, 25]
    assert spec["seeds"] == list(range(1, 11))
    exp = _import(run_cli, env)
    plan = run_cli(
        ["sweep", "create", exp, str(SWEEP_YAML), "--llm", "openai:stub", "--dry-run", "--json"],
        env=env,
    )
    assert plan.code == 0, plan.err
    planned = plan.json()
    assert planned["cells"] == 6 and planned["conversations"] == 60
    # the experiment's world: ten agents, 100 steps, three calls each per step
    assert planned["expected_calls"] == 60 * 10 * 100 * 3
    assert planned["sample_cell"]["radius"] == 0 and planned["sample_cell"]["agents"] == 10


@pytest.mark.skipif(shutil.which("chromium") is None, reason="chromium is not installed")
def test_a_small_radius_sweep_gives_each_measure_against_r(run_cli, env, tmp_path):
    exp = _import(run_cli, env, personality=True)
    create = ["sweep", "create", exp, str(SWEEP_YAML), "--llm", "openai:stub", *SMALL]
    made = run_cli([*create, "--yes", "--json"], env=env)
    assert made.code == 0, made.err
    assert made.json()["added"] == 4 and made.json()["cells"] == 2
    sweep_id = made.json()["sweep_id"]
    ran = run_cli(["sweep", "run", sweep_id, "--json"], env=env)
    assert ran.code == 0, ran.err
    assert ran.json()["complete"]

    measured = run_cli(["measures", sweep_id, "--json"], env=env)
    assert measured.code == 0, measured.err
    found = measured.json()
    cells = {c["label"]: c for c in found["cells"]}
    assert list(cells) == ["radius=0", "radius=25"]
    assert [c["cell"]["radius"] for c in found["cells"]] == [0, 25]  # numbers, for plotting
    for cell in found["cells"]:
        assert cell["n"] == 2
        for name in found["measures"]:
            assert {f"{name}_mean", f"{name}_ci_low", f"{name}_ci_high"} <= set(cell)

    # by hand: every agent moves x+1 (share 1); at R = 25 the two agents are always within
    # range of each other on the 50 x 50 torus, so each step is one cluster of two; at R = 0
    # they form one only on a shared cell, which the stored positions say
    store = open_store(open_database(env["SIM_DB"], "llm_simulator"))
    try:
        runs = store.sweeps.conversations(sweep_id)
        shared: dict[int, list[float]] = {0: [], 25: []}
        for run in runs:
            rows = store.grid_steps.for_run(run["_id"])
            first = sorted((r for r in rows if r["step"] == 1), key=lambda r: r["agent_index"])
            frames = [[tuple(r["position_before"]) for r in first]]
            for step in (1, 2):
                at = sorted((r for r in rows if r["step"] == step), key=lambda r: r["agent_index"])
                frames.append([tuple(r["position_after"]) for r in at])
            same = [frame[0] == frame[1] for frame in frames]  # t = 0, 1, 2
            shared[run["cell"]["radius"]].append(sum(same) / len(same))
            heard = [len(r["heard_from"]) for r in rows]
            if run["cell"]["radius"] == 25:
                assert heard == [1] * 4  # two agents, two steps: each hears the other
    finally:
        store.close()
    assert cells["radius=25"]["mean_clusters_mean"] == 1.0
    assert cells["radius=25"]["mean_clusters_ci_low"] == cells["radius=25"]["mean_clusters_ci_high"]
    assert cells["radius=0"]["mean_clusters_mean"] == pytest.approx(np.mean(shared[0]))
    for cell in cells.values():
        assert cell["share_x+1_mean"] == 1.0 and cell["share_stay_mean"] == 0.0
        assert cell["share_fallback_mean"] == 0.0
        # the personality test: two types (ESTJ, INFP) first and last, nobody changed
        assert cell["personality_types_first_mean"] == 2.0
        assert cell["personality_changed_mean"] == 0.0
        assert cell["personality_fallbacks_mean"] == 0.0
        # every paper measure has a value per R (emotion: the lexicon is a test extra)
        for name in ("hallucination_share", "mean_message_msd", "emotion_none_share"):
            assert cell[f"{name}_mean"] is not None, name

    page = tmp_path / "sweep.html"
    done = run_cli(["report", sweep_id, "-o", str(page)], env=env)
    assert done.code == 0, done.err
    text = page.read_text(encoding="utf-8")
    drawn = [
        name
        for name in found["measures"]
        if any(c[f"{name}_mean"] is not None for c in found["cells"])
    ]
    assert "mean_clusters" in drawn and "share_x+1" in drawn
    for name in drawn:  # each figure's ticks are the R values
        uri = re.search(rf'id="plot-by-radius-{re.escape(name)}" alt="[^"]*" src="([^"]+)"', text)
        assert uri, name
        svg = base64.b64decode(uri[1].split(",", 1)[1]).decode("utf-8")
        ticks = re.findall(r'id="tick-radius-(\d+)"', svg)
        assert ticks == ["0", "25"], name

    browser = ConsoleBrowser(tmp_path / "profile")
    try:
        browser.open(page.as_uri())
        browser.wait_for("document.body && document.body.dataset.ready === '1'", 20)
        browser.wait_for(
            "Array.from(document.querySelectorAll('img.plot')).every(i => i.complete)", 20
        )
        figures = browser.js(
            "Array.from(document.querySelectorAll('img.plot[id^=\"plot-by-radius-\"]'))"
            ".map(i => [i.id, i.naturalWidth > 0, i.closest('figure')"
            ".querySelector('figcaption').textContent])"
        )
        assert [f[0] for f in figures] == [f"plot-by-radius-{name}" for name in drawn]
        assert all(loaded for _, loaded, _ in figures)  # every SVG drew
        assert all("radius = 0, 25" in caption for _, _, caption in figures)
        assert browser.errors == []
    finally:
        browser.close()


def test_no_figure_against_a_factor_when_none_or_two_numeric_ones_differ():
    from simulator.worlds.grid.analysis.report.sweep_plots import factor_plots, numeric_factor

    def cell(**factors):
        return {"cell": factors, "mean_clusters_mean": 1.0}

    assert numeric_factor([cell(llm="a", radius=5), cell(llm="b", radius=5)]) is None
    two = [cell(radius=r, steps=s) for r, s in itertools.product((0, 5), (2, 4))]
    assert numeric_factor(two) is None and factor_plots(two) == []
    mixed = [cell(llm=m, radius=r) for m, r in itertools.product("ab", (0, 5))]
    assert numeric_factor(mixed) == "radius"
    plots = factor_plots(mixed)
    assert [p.key for p in plots] == ["by-radius-mean_clusters"] and plots[0].data_uri
