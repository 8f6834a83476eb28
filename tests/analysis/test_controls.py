"""Invisible characters shown as markers: every listed range, nothing else, in Python and in the
report's server-rendered HTML (the page's script uses the same list; see test_report_scale)."""

from __future__ import annotations

import re

import pytest

from simulator.analysis.report.builder import ReportContext
from simulator.analysis.report.html import render
from simulator.domain.invisible_chars import INVISIBLE_RANGES, js_class, pieces, visible

EDGES = "".join(chr(c) for first, last in INVISIBLE_RANGES for c in {first, last})
KEPT = "a\tb\nc d\u00a0é中🙂\u2764\ufe0f\u3000"  # tab, newline, spaces, text, emoji + selector


@pytest.mark.parametrize("char", list(EDGES))
def test_every_listed_character_becomes_a_marker(char):
    assert visible(f"x{char}y") == f"x⟨U+{ord(char):04X}⟩y"


def test_ordinary_text_tabs_newlines_and_emoji_stay_as_they_are():
    assert visible(KEPT) == KEPT
    assert list(pieces(KEPT)) == [(KEPT, False)]


def test_pieces_tell_markers_from_text():
    assert list(pieces("\u202eab\u200b")) == [("⟨U+202E⟩", True), ("ab", False), ("⟨U+200B⟩", True)]


def test_the_javascript_class_lists_the_same_ranges():
    ranges = re.findall(r"\\u\{([0-9A-F]+)\}-\\u\{([0-9A-F]+)\}", js_class())
    assert [(int(a, 16), int(b, 16)) for a, b in ranges] == list(INVISIBLE_RANGES)


def test_report_html_marks_invisible_characters_outside_the_data():
    ctx = ReportContext(
        title="t\u202eitle",
        generated_at="now",
        kind="experiment",
        target_id="exp_1",
        experiment_id="exp_1",
        experiment={"name": "Prison\u200b", "note": "note \u202egnirts", "starting_message": "Hi"},
        sweep=None,
        status={"total": 0, "counts": {}, "failed": [{"id": "c", "cell": "k", "error": "e\x1b"}]},
        measures=[],
        cells=[],
        plots=[],
        transcripts={"roles": [], "speakers": [], "models": [], "cells": [], "conversations": []},
    )
    page = render(ctx)
    assert "note ⟨U+202E⟩gnirts" in page and "Prison⟨U+200B⟩" in page and "e⟨U+001B⟩" in page
    assert "<title>t⟨U+202E⟩itle</title>" in page
    assert not re.search("[\u202e\u200b\x1b]", page)
