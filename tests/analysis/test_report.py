"""The HTML report end to end: a real sweep, the real CLI, the page opened in headless Chromium.

A stored reply carries a `<script>` and an `onerror` handler; the page must show it as text and
run neither. Screenshots land in test-artifacts/report.png (the top) and report-full.png.
"""

from __future__ import annotations

import asyncio
import base64
import html
import re
import shutil
import subprocess
import sys
from pathlib import Path

import in_process
import pytest

from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.sweep_runs import SweepRunner
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
EVIL = (
    "<script>document.title='PWNED'</script><img src=x onerror=\"document.body.dataset.pwned='1'\">"
)
CHROMIUM = shutil.which("chromium")
needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
)


def _run_sweep(store, sweep_id: str) -> None:
    async def go() -> None:
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            await SweepRunner(store, sweep_id, llms, poll_s=0.05, concurrency=4).run()
        finally:
            await llms.aclose()

    asyncio.run(go())


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> dict:
    """A finished two-model, two-variant sweep with scores and one hostile reply, reported."""
    base = tmp_path_factory.mktemp("report")
    store = open_store_uri(str(base / "store"))
    view = exp_service.import_yaml(store, REPO / "prompts/experiments/prison.yaml", "alice")
    spec = SweepSpec(
        total_messages=6,
        days=2,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a", "mock:b"],
        repetitions=2,
        variants={"Prisoner/Goal": "all"},
        seed=5,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    _run_sweep(store, sweep["_id"])
    conversations = store.sweeps.conversations(sweep["_id"])
    for n, conv in enumerate(conversations):
        store.scores.add(
            "judge",
            "conversation",
            conv["_id"],
            {"hostility": (n % 4) / 4, "verdict": "yes" if n % 2 else "no"},
            conversation_id=conv["_id"],
            sweep_id=sweep["_id"],
        )
    victim = store.messages.for_conversation(conversations[0]["_id"])[1]
    store.db.messages.update_one({"_id": victim["_id"]}, {"$set": {"text": EVIL, "raw_text": EVIL}})
    store.close()

    output = base / "report.html"
    env = {
        "SIM_DB": str(base / "store"),
        "SIM_USER": "alice",
        "SIM_DATA_DIR": str(base / "data"),
        "SIM_CONFIG_DIR": str(base / "config"),
        "SIM_LOG_DIR": str(base / "logs"),
    }
    done = in_process.llm_sim("report", sweep["_id"], "-o", str(output), env=env, cwd=base)
    assert done.returncode == 0, done.stderr
    assert "wrote" in done.stdout
    return {
        "base": base,
        "output": output,
        "sweep_id": sweep["_id"],
        "experiment_id": view.id,
        "conversations": conversations,
        "victim": victim,
    }


def _chromium(base: Path, *args: str) -> str:
    command = [
        CHROMIUM,
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--disable-background-networking",
        "--disable-component-update",
        "--disable-sync",
        "--no-first-run",
        "--disable-quic",
        f"--user-data-dir={base / 'chromium-profile'}",
        "--virtual-time-budget=3000",
        *args,
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=90)
    assert done.returncode == 0, done.stderr[-2000:]
    return done.stdout


@needs_chromium
def test_report_renders_in_chromium_and_runs_no_injected_script(built):
    url = built["output"].as_uri()
    dom = _chromium(built["base"], "--dump-dom", url)

    title = html.unescape(re.search(r"<title>(.*?)</title>", dom, re.S).group(1))
    assert "PWNED" not in title and "Prison experiment" in title
    assert "data-pwned" not in dom
    assert not re.search(r"<img[^>]*\bsrc=\"?x\b", dom)  # the reply's <img> never became one
    assert "<div class=\"text\">&lt;script&gt;document.title='PWNED'&lt;/script&gt;" in dom

    assert 'id="measures-table"' in dom and 'id="status-table"' in dom
    for conv in built["conversations"]:
        assert html.escape(conv["cell_label"], quote=False) in dom
    plots = re.findall(
        r'<img class="plot" id="plot-(\w+)"[^>]*src="data:image/svg\+xml;base64', dom
    )
    assert sorted(plots) == ["length", "rates", "scores"]

    shown = re.search(r'<div id="transcript" data-shown="([^"]+)"', dom)
    assert shown and shown.group(1) == built["conversations"][0]["_id"]
    assert re.search(r'class="speaker" style="color: [^"]+">Guard_1</span>', dom)
    assert re.search(r'class="speaker"[^>]*>Prisoner_1</span>', dom)
    assert '<div class="day">Day 1</div>' in dom and '<div class="day">Day 2</div>' in dom
    assert "Summary of day 1" in dom and "Summary of day 2" in dom

    artefacts = REPO / "test-artifacts"
    artefacts.mkdir(exist_ok=True)
    shot = artefacts / "report.png"
    shot.unlink(missing_ok=True)
    _chromium(built["base"], f"--screenshot={shot}", "--window-size=1280,2000", url)
    assert shot.stat().st_size > 10_000
    full = artefacts / "report-full.png"  # down to the transcript browser
    _chromium(built["base"], f"--screenshot={full}", "--window-size=1280,3600", url)
    assert full.stat().st_size > shot.stat().st_size // 2


@needs_chromium
def test_transcripts_filter_by_cell(built):
    other = built["conversations"][-1]
    url = built["output"].as_uri() + f"#cell={other['cell_key']}"
    dom = _chromium(built["base"], "--dump-dom", url)
    listed = re.findall(r'<li><button type="button"[^>]*>([^<]+)</button>', dom)
    in_cell = [c["_id"] for c in built["conversations"] if c["cell_key"] == other["cell_key"]]
    assert len(listed) == len(in_cell) == 2
    assert all(html.unescape(item).split(" · ")[0] in in_cell for item in listed)


def test_report_is_self_contained_and_keeps_model_text_out_of_markup(built):
    page = built["output"].read_text(encoding="utf-8")
    assert not re.search(r"""(?:src|href)\s*=\s*["']?\s*(?:https?:)?//""", page, re.I)
    assert "<link" not in page and "@import" not in page and "url(" not in page
    csp = html.unescape(
        re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)[1]
    )
    assert csp.startswith("default-src 'none'; img-src data:;") and "'sha256-" in csp
    assert "document.title='PWNED'" in page  # the reply is there, but only in escaped form:
    assert "<script>document.title" not in page and "</script><img" not in page
    bodies = re.findall(r'<script type="application/json" id="t-\d+">(.*?)</script>', page, re.S)
    assert len(bodies) == len(built["conversations"])  # one data tag per transcript
    assert "\\u003cscript\\u003edocument.title='PWNED'\\u003c/script\\u003e" in bodies[0]
    for uri in re.findall(r'src="data:image/svg\+xml;base64,([^"]+)"', page):
        assert b"<svg" in base64.b64decode(uri)[:2000]


@pytest.mark.parametrize("kind", ["experiment", "conversation"])
def test_report_on_an_experiment_or_one_conversation(built, kind):
    from simulator.analysis.report import render_report

    store = open_store_uri(str(built["base"] / "store"))
    try:
        target = (
            built["experiment_id"] if kind == "experiment" else built["victim"]["conversation_id"]
        )
        page, ctx = render_report(store, target, per_cell=1)
    finally:
        store.close()
    assert ctx.kind == kind
    expected = 4 if kind == "experiment" else 1  # one per cell with per_cell=1
    assert len(ctx.transcripts["conversations"]) == expected
    assert ctx.left_out == (4 if kind == "experiment" else 0)
    assert 'id="measures-table"' in page and "<script>document.title" not in page


def test_missing_matplotlib_is_a_user_error_naming_the_extra(monkeypatch):
    from simulator.analysis.report import plots

    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(UserError, match=r"pip install -e '\.\[analysis\]'"):
        plots.require_matplotlib()
