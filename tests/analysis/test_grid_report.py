"""The grid report end to end: the scripted run and a sweep in an embedded store, the report
written by `llm-sim report` and by write_report, the replay driven in headless Chromium.

Step 2 of agent1 carries a `<script>` and an `onerror` handler: the replay must show it as text
and run neither. A screenshot lands in test-artifacts/grid-report.png.
"""

from __future__ import annotations

import base64
import html
import re
import shutil
from pathlib import Path

import numpy as np
import pytest
from cdp_browser import Browser  # tests/analysis/cdp_browser.py
from grid_documents import (
    EVIL,
    MESSAGES,
    START,
    grid_experiment,
    memory_text,
    store_run,
    store_sweep,
)

from simulator.analysis.report import render_report, write_report
from simulator.store.store import open_store_uri
from simulator.worlds.grid.analysis import measures as measures_mod
from simulator.worlds.grid.analysis.report import context as grid_context

needs_chromium = pytest.mark.skipif(
    shutil.which("chromium") is None,
    reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
)
AFTER_STEP_3 = [(2, 0), (9, 9), (5, 6), (5, 6)]  # agent2's unreadable reply kept it still


def fake_embed(texts):
    return np.array([[len(t.split()), t.count("#")] for t in texts], dtype=float)


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    base = tmp_path_factory.mktemp("grid-report")
    store = open_store_uri(str(base / "store"))
    experiment = grid_experiment(models=("mock:a", "mock:b"))
    exp_id = store.experiments.create(experiment, "alice")["_id"]
    run_id = store_run(store, exp_id, experiment, evil_at=(2, 1))
    sweep_id, sweep_runs = store_sweep(store, exp_id, experiment, ["mock:a", "mock:b"], 2)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
        run_ctx = write_report(store, run_id, base / "run.html")
        sweep_ctx = write_report(store, sweep_id, base / "sweep.html")
    store.close()
    return {
        "base": base,
        "env": {"SIM_DB": str(base / "store"), "SIM_USER": "alice"},
        "run_id": run_id,
        "sweep_id": sweep_id,
        "sweep_runs": sweep_runs,
        "run_ctx": run_ctx,
        "sweep_ctx": sweep_ctx,
    }


@pytest.fixture(scope="module")
def browser(built):
    opened = Browser(built["base"] / "profile", timeout=30)
    yield opened
    opened.close()


def _open(browser: Browser, path) -> None:
    browser.open(path.as_uri())
    browser.wait_for("document.body && document.body.dataset.ready === '1'", 20)


def _step(browser: Browser, step: int) -> None:
    browser.js(
        "(() => { const s = document.getElementById('replay-step'); "
        f"s.value = '{step}'; s.dispatchEvent(new Event('input')); }})()"
    )


def _dots(browser: Browser) -> list[tuple[int, int]]:
    found = browser.js(
        "Array.from(document.querySelectorAll('#replay-field circle'))"
        ".map(c => [Number(c.dataset.x), Number(c.dataset.y), Number(c.getAttribute('cx')), "
        "Number(c.getAttribute('cy'))])"
    )
    for x, y, cx, cy in found:  # drawn in the cell the data says: y grows upwards (10 x 10)
        assert x < cx < x + 1 and 10 - y - 1 < cy < 10 - y
    return [(x, y) for x, y, _, _ in found]


def _texts(browser: Browser, cls: str) -> list[str]:
    return browser.js(
        f"Array.from(document.querySelectorAll('#replay-detail .agent-row .{cls}'))"
        ".map(td => td.textContent)"
    )


def test_grid_report_context(built):
    ctx = built["run_ctx"]
    assert ctx.kind == "conversation" and ctx.runs == 1 and ctx.left_out == 0
    assert [r["id"] for r in ctx.replays] == [built["run_id"]]
    assert ctx.status["counts"]["done"] == 1
    assert [p.key for p in ctx.plots] == [
        "moves",
        "clusters",
        "unique_hashtags",
        "message_msd",
        "hallucinations",
        "emotions",
        "hashtag-timeline",
        "projection",
    ]
    assert all(p.data_uri for p in ctx.plots), [p.note for p in ctx.plots if not p.data_uri]
    sweep = built["sweep_ctx"]
    assert [c["label"] for c in sweep.cells] == ["llm=mock:a", "llm=mock:b"]
    runs = built["sweep_runs"]  # round robin over the cells: a0, b0, a1, b1
    assert [r["id"] for r in sweep.replays] == [runs[0], runs[2], runs[1], runs[3]]
    assert sweep.status["total"] == 4 and sweep.status["complete"]


def test_the_replay_is_capped_and_says_how_many_were_left_out(built, monkeypatch):
    monkeypatch.setattr(grid_context, "REPLAY_CAP", 2)
    monkeypatch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
    store = open_store_uri(str(built["base"] / "store"))
    try:
        page, ctx = render_report(store, built["sweep_id"])
    finally:
        store.close()
    assert len(ctx.replays) == 2 and ctx.left_out == 2
    assert "2 of 4 runs" in page and "2 more runs are left out" in page
    assert page.count('<script type="application/json" id="r-') == 2


def test_the_page_is_self_contained_and_escapes_model_text(built):
    page = (built["base"] / "run.html").read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    csp = html.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)[1]
    )
    assert csp.startswith("default-src 'none'; img-src data:;") and "'sha256-" in csp
    assert "<script>document.title" not in page and "</script><img" not in page
    assert "\\u003cscript\\u003edocument.title='PWNED'" in page  # in the data, escaped
    for table in ("measures-table", "status-table"):
        assert f'id="{table}"' in page
    assert "#Cooperation" in page and "agents-table" in page


def test_cli_report_on_a_grid_run_and_a_grid_sweep(built, run_cli, monkeypatch, tmp_path):
    monkeypatch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
    for target, cells, replays in (
        (built["run_id"], "1 cell", "1 transcript"),
        (built["sweep_id"], "2 cells", "4 transcripts"),
    ):
        output = tmp_path / f"{target}.html"
        done = run_cli(["report", target, "-o", str(output)], env=built["env"])
        assert done.code == 0, done.err
        said = done.out.replace("\n", "")  # the console wraps the long path
        assert f"wrote {output}" in said and f"{cells}, {replays}" in said
        page = output.read_text(encoding="utf-8")
        assert 'id="replay-step"' in page and "Grid experiment" in page
    labelled = ["report", built["run_id"], "-o", str(tmp_path / "l.html"), "--labels", "x"]
    refused = run_cli(labelled, env=built["env"])  # the paper's labels: refused, not ignored
    assert refused.code == 2 and "--labels" in refused.err
    assert not (tmp_path / "l.html").exists()


@needs_chromium
def test_the_slider_moves_the_dots_and_shows_that_steps_texts(built, browser):
    _open(browser, built["base"] / "run.html")
    assert browser.js("document.getElementById('replay-field').dataset.run") == built["run_id"]
    assert browser.js("document.getElementById('replay-step').max") == "6"
    assert _dots(browser) == START
    assert _texts(browser, "memory") == ["no memory"] * 4

    _step(browser, 3)
    assert browser.js("document.getElementById('replay-detail').dataset.step") == "3"
    assert browser.js("document.getElementById('replay-label').textContent") == "step 3 of 6"
    assert _dots(browser) == AFTER_STEP_3
    assert _texts(browser, "message") == MESSAGES[2]
    assert _texts(browser, "memory") == [memory_text(3, i) for i in range(4)]

    _step(browser, 2)  # the hostile message is shown as text and runs nothing
    assert _texts(browser, "message")[1] == EVIL
    assert browser.js("document.title").find("PWNED") < 0
    assert browser.js("document.body.dataset.pwned") is None
    assert browser.js("document.querySelectorAll('#replay-detail img').length") == 0

    _step(browser, 6)  # play from the end starts again at the start, then advances
    browser.js("document.getElementById('replay-play').click()")
    browser.wait_for("Number(document.getElementById('replay-detail').dataset.step) >= 1", 5)
    browser.js("document.getElementById('replay-play').click()")  # pause
    assert browser.js("document.getElementById('replay-play').textContent") == "play"

    artefacts = Path(__file__).resolve().parents[2] / "test-artifacts"
    artefacts.mkdir(exist_ok=True)
    _step(browser, 3)
    browser.call(
        "Emulation.setDeviceMetricsOverride",
        session=browser.session,
        width=1280,
        height=900,
        deviceScaleFactor=1,
        mobile=False,
    )
    browser.js("document.getElementById('replay').scrollIntoView()")
    shot = browser.call("Page.captureScreenshot", session=browser.session, format="png")
    (artefacts / "grid-report.png").write_bytes(base64.b64decode(shot["data"]))


@needs_chromium
def test_a_sweep_report_replays_the_run_chosen(built, browser):
    _open(browser, built["base"] / "sweep.html")
    runs = built["sweep_runs"]
    options = browser.js("Array.from(document.querySelectorAll('#replay-run option')).length")
    assert options == 4
    browser.js(
        "(() => { const s = document.getElementById('replay-run'); s.value = '1'; "
        "s.dispatchEvent(new Event('change')); })()"
    )
    assert browser.js("document.getElementById('replay-field').dataset.run") == runs[2]
    _step(browser, 3)
    assert _dots(browser) == AFTER_STEP_3
    assert _texts(browser, "message") == MESSAGES[2]
