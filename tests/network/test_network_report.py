"""The network report: an LLM run beside its theory twin (both trajectories, the graph at the
chosen round with a node per agent), `--round` refused out of range or for another world with
nothing written, and the issue's "done when" driven through the real CLI process: the shipped
50-node experiment run with a model and with the theory, then reported side by side."""

from __future__ import annotations

import asyncio
import base64
import json
import re
import subprocess
from pathlib import Path
from xml.etree import ElementTree

import in_process
import pytest

from simulator.analysis.report import write_report
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.network.analysis import run_measures
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.engine.run import graphs_of
from simulator.worlds.network.services import runs as network_runs

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
CHAT_YAML = REPO / "prompts" / "experiments" / "prison.yaml"
SMALL = {"graph": {"type": "barabasi_albert", "n": 12, "m": 2, "seed": 2}, "rounds": 3}
SVG = "{http://www.w3.org/2000/svg}"
DATA = re.compile(r'<script type="application/json" id="network-data">(.*?)</script>', re.S)


def by_index(body: dict) -> str:
    """Agents whose index in the prompt's name list is even say Yes (7), the others No (2)."""
    text = body["messages"][-1]["content"]
    opinion = 7 if len(text) % 2 else 2
    decision = "Yes" if opinion > 5 else "No"
    return f'{{"Thought": "t", "Opinion": {opinion}, "Decision": "{decision}"}}'


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"], latency_s=0.0) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        server.reply_fn = by_index
        yield server


@pytest.fixture
def db(tmp_path):
    store = open_store_uri(str(tmp_path / "store"))
    yield store
    store.close()


def _create_and_run(store, view, **kw) -> str:
    spec = network_runs.build_spec(view, settings=SMALL, **kw)
    run_id = run_service.create_run(store, view, spec, "alice")["_id"]

    async def go():
        llms = LLMAccess(policy=RetryPolicy.no_wait(1))
        try:
            return await network_runs.run(store, run_id, llms)
        finally:
            await llms.aclose()

    assert asyncio.run(go()).status == "done"
    return run_id


def node_groups(data_uri: str) -> dict[str, int]:
    """Marks (`<use>`) per node group (`nodes-yes-0`, ...) of a matplotlib SVG data URI."""
    root = ElementTree.fromstring(base64.b64decode(data_uri.split(",", 1)[1]))
    return {
        group.get("id"): len(group.findall(f".//{SVG}use"))
        for group in root.iter(f"{SVG}g")
        if (group.get("id") or "").startswith("nodes-")
    }


def test_report_draws_the_run_beside_its_twin_at_the_chosen_round(db, stub, tmp_path):
    view = exp_service.import_yaml(db, NETWORK_YAML, "alice")
    llm = _create_and_run(db, view, llm="openai:stub", seed=5)
    twin = _create_and_run(db, view, seed=5, theory=True)
    page = tmp_path / "r.html"
    ctx = write_report(db, view.id, page, round_index=1)
    html = page.read_text()
    assert "Model and theory, side by side" in html and "script-src &#x27;none&#x27;" in html
    data = json.loads(DATA.search(html).group(1))
    (shown,) = data["runs"]  # the theory run is drawn beside its LLM run, not alone
    assert shown["id"] == llm and shown["twin"] == {"id": twin, "match": "same seed"}
    assert shown["drawn_round"] == {llm: 1, twin: 1}

    for run_id, key in ((llm, "model"), (twin, "theory")):  # both trajectories, as stored
        rows = db.network_rounds.for_run(run_id)
        opinions = [[r["opinion"] for r in rows if r["round"] == t] for t in range(4)]
        decisions = [[r["decision"] == "Yes" for r in rows if r["round"] == t] for t in range(4)]
        spec = NetworkSpec.model_validate(db.conversations.get(run_id)["spec"])
        measured = run_measures(opinions, decisions, graphs_of(spec))
        assert shown["series"][key] == {
            "rounds": [0, 1, 2, 3],
            "mean_opinion": [m["mean_opinion"] for m in measured],
            "share_yes": [m["share_yes"] for m in measured],
        }
        yes = sum(decisions[1])
        panel = 0 if key == "model" else 1
        graph = next(p for p in ctx.pairs[0]["figures"] if p.key == "graph-0")
        counts = node_groups(graph.data_uri)
        assert counts[f"nodes-yes-{panel}"] == yes
        assert counts[f"nodes-yes-{panel}"] + counts[f"nodes-no-{panel}"] == 12
    assert 0 < sum(d for d in shown["series"]["model"]["share_yes"][1:]) < 3  # Yes and No mixed
    assert f'data-run="{llm}" data-twin="{twin}"' in html  # the numbers table of both

    for bad in (99, -1):
        with pytest.raises(UserError) as refused:
            write_report(db, view.id, tmp_path / "bad.html", round_index=bad)
        assert refused.value.field == "--round" and "0 to 3" in refused.value.fix
    assert not (tmp_path / "bad.html").exists()


def test_report_without_a_twin_says_how_to_get_one_and_round_is_refused_for_a_chat(
    db, stub, tmp_path
):
    view = exp_service.import_yaml(db, NETWORK_YAML, "alice")
    llm = _create_and_run(db, view, llm="openai:stub", seed=8)
    page = tmp_path / "r.html"
    write_report(db, llm, page)
    html = page.read_text()
    assert f"llm-sim run {view.id} --theory --seed 8 --rounds 3 (its graph is not the" in html
    assert json.loads(DATA.search(html).group(1))["runs"][0]["drawn_round"] == {llm: 3}

    chat = exp_service.import_yaml(db, CHAT_YAML, "alice")
    with pytest.raises(UserError) as refused:
        write_report(db, chat.id, tmp_path / "chat.html", round_index=1)
    assert refused.value.field == "--round"
    assert not (tmp_path / "chat.html").exists()


def llm_sim(db: Path, stub, *args: str) -> subprocess.CompletedProcess:
    env = {
        "SIM_DB": str(db),
        "SIM_USER": "alice",
        "OPENAI_BASE_URL": stub.openai_base_url,
        "COLUMNS": "120",
    }
    return in_process.llm_sim(*args, env=env)


def test_done_when_the_shipped_experiment_is_reported_beside_the_theory(tmp_path, stub, run_cli):
    """Issue 12: the shipped scenario on the 50-node BA network with a model and with the
    theory, and the report shows both trajectories side by side."""
    store = tmp_path / "db"
    env = {"SIM_DB": str(store), "SIM_USER": "alice", "COLUMNS": "120"}
    exp = run_cli(["experiment", "import", str(NETWORK_YAML), "--json"], env=env).json()["id"]
    ran = llm_sim(store, stub, "run", exp, "--llm", "openai:stub", "--seed", "1")
    assert ran.returncode == 0, ran.stderr
    theory = run_cli(["run", exp, "--theory", "--seed", "1"], env=env)
    assert theory.code == 0, theory.err
    page = tmp_path / "report.html"
    done = llm_sim(store, stub, "report", exp, "-o", str(page))
    assert done.returncode == 0, done.stderr
    assert "1 run drawn, 1 beside a theory twin" in " ".join(done.stdout.split())
    (shown,) = json.loads(DATA.search(page.read_text()).group(1))["runs"]
    assert len(shown["series"]["model"]["rounds"]) == len(shown["series"]["theory"]["rounds"]) == 3

    refused = run_cli(["report", exp, "-o", str(tmp_path / "no.html"), "--round", "99"], env=env)
    assert refused.code == 2 and "--round" in refused.err and "0 to 2" in refused.err
    assert not (tmp_path / "no.html").exists()

    measured = run_cli(["measures", exp], env=env)
    assert measured.code == 0, measured.err
    assert f"distance to theory twin {shown['twin']['id']} (same seed)" in measured.out
    runs = run_cli(["measures", exp, "--json"], env=env).json()["runs"]
    assert [r["model"] for r in runs] == ["openai:stub", "theory"]
    exported = run_cli(["export", exp, "-o", str(tmp_path / "out"), "--json"], env=env).json()
    assert {f["table"]: f["rows"] for f in exported["files"]} == {
        "network_runs": 2,
        "network_rounds": 2 * 50 * 3,
        "network_round_measures": 2 * 3,
    }


def test_report_says_how_many_model_answers_were_kept_when_replies_did_not_parse(
    db, stub, tmp_path
):
    def every_other_prose(body: dict) -> str:  # half the agents never give a JSON answer
        return "I am not sure." if len(body["messages"][-1]["content"]) % 2 else by_index(body)

    stub.reply_fn = every_other_prose
    view = exp_service.import_yaml(db, NETWORK_YAML, "alice")
    llm = _create_and_run(db, view, llm="openai:stub", seed=5)
    kept = db.conversations.get(llm)["counters"]["answer_fallbacks"]
    assert 0 < kept < 12 * 3
    page = tmp_path / "r.html"
    write_report(db, llm, page)
    text = " ".join(page.read_text().split())
    assert f"<strong>{kept} of {12 * 3} model answers were kept from the round before" in text
