"""Emotion per message on the scripted grid run (tests/analysis/grid_documents.py), scored
with the real NRC lexicon NRCLex ships: per message, per agent and step, per run, the figures
`measures` reports, the export's columns, and the note when the extra is not installed."""

from __future__ import annotations

import sys

import pytest
from grid_documents import MESSAGES, grid_experiment, store_run

from simulator.worlds.grid.analysis import emotions as emotions_mod
from simulator.worlds.grid.analysis import grid_measures
from simulator.worlds.grid.analysis.emotions import (
    EMOTIONS,
    message_emotions,
    nrc_lexicon,
    words_of,
)
from simulator.worlds.grid.analysis.measures import analyse_run
from simulator.worlds.grid.analysis.runs import load_runs


def _run(store) -> str:
    return store_run(store, "exp_emotions", grid_experiment())


def test_a_message_is_scored_by_its_emotion_words():
    lexicon = nrc_lexicon()
    assert words_of("Hi there, friends! #peace", lexicon) == ["friend", "peace"]
    friend = message_emotions("hi there friend", lexicon)  # friend: joy, trust (and positive)
    assert friend["scores"]["joy"] == friend["scores"]["trust"] == 0.5
    assert friend["dominant"] == "tied" and friend["words"] == 2
    quiet = message_emotions("quiet", lexicon)  # sadness (and positive)
    assert quiet["scores"]["sadness"] == 1.0 and quiet["dominant"] == "sadness"
    calm = message_emotions("calm", lexicon)  # positive only: no emotion, no score
    assert calm == {"scores": None, "words": 0, "dominant": "none"}


def test_measures_per_agent_step_and_run(store):
    run_id = _run(store)
    run = next(load_runs(store, [run_id]))
    found = analyse_run(run, None)["emotions"]
    lexicon = nrc_lexicon()
    expected = [[message_emotions(text, lexicon)["scores"] for text in step] for step in MESSAGES]
    # agent3 at step 1 said "hi there friend"; at step 2 "quiet"
    assert found["per_agent"]["agent3"]["joy"][:2] == [0.5, 0.0]
    assert found["per_agent"]["agent3"]["sadness"][:2] == [0.0, 1.0]
    scored = [s for step in expected for s in step if s is not None]
    for e in EMOTIONS:
        assert found["mean"][e] == pytest.approx(sum(s[e] for s in scored) / len(scored))
    unscored = sum(s is None for step in expected for s in step)
    assert found["without_emotion_share"] == pytest.approx(unscored / 24)
    assert 0 < unscored < 24  # the run has both kinds of message
    summary = grid_measures(store, [run_id], embed=None)
    row = summary["runs"][0]
    assert row["emotion_joy"] == pytest.approx(found["mean"]["joy"])
    assert row["series"]["emotion_sadness"][1] == pytest.approx(found["per_step"]["sadness"][1])
    assert sum(row["emotion_dominant_shares"].values()) == pytest.approx(1.0)
    assert summary["cells"][0]["emotion_joy_mean"] == pytest.approx(found["mean"]["joy"])


def test_without_nrclex_the_figures_are_left_out_with_a_note(store, monkeypatch):
    run_id = _run(store)
    monkeypatch.setitem(sys.modules, "nrclex", None)  # import nrclex now fails
    emotions_mod.nrc_lexicon.cache_clear()
    try:
        summary = grid_measures(store, [run_id], embed=None)
    finally:
        emotions_mod.nrc_lexicon.cache_clear()
    row = summary["runs"][0]
    assert row["emotion_joy"] is None and row["series"]["emotion_joy"] is None
    assert any("llm-interaction-simulator[emotion]" in note for note in summary["notes"])
    assert row["unique_hashtags"] > 0  # the other measures are still there
