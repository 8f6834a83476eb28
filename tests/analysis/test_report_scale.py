"""The report at scale, in headless Chromium: 1,000 transcripts, five 1 MB replies, hidden text.

The data goes straight into the store (a sweep's planned conversations, then messages through
the messages repository): no engine runs. One of the big replies is mixed-direction text full of
U+202E (RIGHT-TO-LEFT OVERRIDE); as one paragraph it kept Chromium busy for minutes. The page
must be ready within LOAD_LIMIT_S (generous: a time limit is the point of this test), show only
the opened conversation, cut long replies with "show more", and mark invisible characters.
"""

from __future__ import annotations

import re
import time
import uuid
from pathlib import Path

import pytest
from cdp_browser import CHROMIUM, Browser  # tests/analysis/cdp_browser.py
from stored_messages import message_doc

from simulator.analysis.report import write_report
from simulator.analysis.report.assets import PREVIEW_CHARS, STEP_CHARS
from simulator.domain.invisible_chars import INVISIBLE_RANGES, visible
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
LOAD_LIMIT_S = 60
CONVERSATIONS = 1000
HOSTILE_UNIT = "\u202eabc \u05d0\u05d1\u05d2 \u0627\u0644\u0639 \u200b\u2066x\u2069\x1b[31m "
HOSTILE = (HOSTILE_UNIT * (1_000_000 // len(HOSTILE_UNIT) + 1))[:1_000_000]
EVERY_EDGE = "".join(chr(c) for first, last in INVISIBLE_RANGES for c in (first, last))
KEPT = "a\tb\nc d\u00a0é中🙂\u2764\ufe0f"
PARITY = f"{KEPT}|{EVERY_EDGE}|{KEPT}"  # the page must mark exactly what Python marks
MARKER = re.compile(r"⟨U\+[0-9A-F]{4,6}⟩")
PLAIN_MEGABYTE = ("All quiet in block C, line up for the yard.\n" * 25_000)[:1_000_000]

needs_chromium = pytest.mark.skipif(
    CHROMIUM is None,
    reason="Debian's chromium is not installed (.ci/run installs it: apt-get install chromium)",
)


@pytest.fixture(scope="module")
def big_report(tmp_path_factory) -> dict:
    """1,000 stored conversations of 3 messages: a 1 MB reply in conversations 0 and 2-5, every
    invisible character in conversation 1."""
    base = tmp_path_factory.mktemp("scale")
    store = open_store_uri(f"mongomock://{uuid.uuid4().hex}")
    view = exp_service.import_yaml(store, REPO / "prompts/experiments/prison.yaml", "alice")
    spec = SweepSpec(
        total_messages=4,  # (at least 2 per day and even; 3 are stored: one still to come)
        days=1,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a", "mock:b"],
        repetitions=CONVERSATIONS // 4,
        variants={"Prisoner/Goal": "all"},
        seed=7,
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    conversations = store.sweeps.conversations(sweep["_id"])
    assert len(conversations) == CONVERSATIONS
    for n, conv in enumerate(conversations):
        cid = conv["_id"]
        long_reply = {0: HOSTILE, 1: PARITY}.get(n, PLAIN_MEGABYTE if n < 6 else None)
        texts = [
            f"Conversation {n}: stand up for the count.",
            long_reply or f"Prisoner {n} asks for yard time, politely, number {n * 7}.",
            f"Guard {n} answers: not today ({n % 13}).",
        ]
        for seq, text in enumerate(texts):
            store.messages.insert(message_doc(cid, seq, text))
        store.db.conversations.update_one({"_id": cid}, {"$set": {"status": "done"}})
    output = base / "report.html"
    write_report(store, sweep["_id"], output, per_cell=CONVERSATIONS)
    store.close()
    return {"base": base, "output": output, "conversations": conversations}


@pytest.fixture(scope="module")
def page(big_report):
    browser = Browser(big_report["base"] / "profile", timeout=LOAD_LIMIT_S)
    started = time.monotonic()
    browser.open(big_report["output"].as_uri())
    browser.wait_for(
        "document.body && document.body.dataset.ready === '1' && "
        "document.getElementById('transcript').dataset.shown",
        LOAD_LIMIT_S,
    )
    load_s = time.monotonic() - started
    first_shown = browser.js("document.getElementById('transcript').dataset.shown")
    size_mb = big_report["output"].stat().st_size / 1e6
    print(f"\nreport of {CONVERSATIONS} transcripts ({size_mb:.1f} MB) ready in {load_s:.2f} s")
    yield browser, load_s, first_shown
    browser.close()


def _open(browser: Browser, conversation_id: str) -> None:
    """Click the conversation in the list (rebuilding its transcript from the start)."""
    browser.js(
        "Array.from(document.querySelectorAll('#conv-list button'))"
        f".find(b => b.textContent.startsWith('{conversation_id} '))"
        ".click()"
    )
    assert browser.js("document.getElementById('transcript').dataset.shown") == conversation_id


TEXT_OF_REPLY = "document.querySelectorAll('#transcript .msg')[1].querySelector('.text')"


def _shown_prefix(browser: Browser) -> str:
    """The part of HOSTILE on screen, checked to be exactly its start with a marker for each
    invisible character; returned as the original characters (to count them)."""
    shown = browser.js(f"{TEXT_OF_REPLY}.textContent")
    size = len(shown) - sum(len(m) - 1 for m in MARKER.findall(shown))
    assert visible(HOSTILE[:size]) == shown, shown[:200]
    return HOSTILE[:size]


@needs_chromium
def test_a_thousand_transcripts_with_megabyte_replies_open_quickly(big_report, page):
    browser, load_s, first_shown = page
    assert load_s < LOAD_LIMIT_S
    first = big_report["conversations"][0]["_id"]
    assert first_shown == first
    _open(browser, first)
    assert browser.js("document.querySelectorAll('#conv-list button').length") == CONVERSATIONS
    # only the opened conversation is in the DOM: its 3 messages, not 3,000
    assert browser.js("document.querySelectorAll('#transcript .msg').length") == 3
    shown = _shown_prefix(browser)
    assert PREVIEW_CHARS * 0.8 <= len(shown) <= PREVIEW_CHARS  # ends at a space when one is near
    bar = browser.js(f"{TEXT_OF_REPLY}.nextElementSibling.textContent")
    assert f"{1_000_000 - len(shown):,} more characters" in bar
    assert "show more" in bar and "show all" in bar


@needs_chromium
def test_invisible_characters_are_shown_as_markers(big_report, page):
    browser, _, _ = page
    _open(browser, big_report["conversations"][0]["_id"])
    marks = browser.js(
        f"Array.from({TEXT_OF_REPLY}.querySelectorAll('.ctl')).map(n => n.textContent)"
    )
    assert {"⟨U+202E⟩", "⟨U+200B⟩", "⟨U+2066⟩", "⟨U+2069⟩", "⟨U+001B⟩"} <= set(marks)
    raw = browser.js(f"{TEXT_OF_REPLY}.textContent")
    assert not any(ch in raw for ch in "\u202e\u200b\u2066\u2069\x1b")


@needs_chromium
def test_show_more_then_show_all_reveals_the_whole_reply(big_report, page):
    browser, _, _ = page
    _open(browser, big_report["conversations"][0]["_id"])
    browser.js(f"{TEXT_OF_REPLY}.nextElementSibling.querySelectorAll('button')[0].click()")
    more = _shown_prefix(browser)
    assert PREVIEW_CHARS + STEP_CHARS * 0.9 <= len(more) <= PREVIEW_CHARS + STEP_CHARS
    started = time.monotonic()
    browser.js(f"{TEXT_OF_REPLY}.nextElementSibling.querySelectorAll('button')[1].click()")
    browser.wait_for(f"!{TEXT_OF_REPLY}.nextElementSibling", LOAD_LIMIT_S)  # the bar is gone
    print(f"\nshow all of a 1 MB mixed-direction reply: {time.monotonic() - started:.2f} s")
    assert browser.js(f"{TEXT_OF_REPLY}.textContent") == visible(HOSTILE)


@needs_chromium
def test_opening_another_conversation_builds_only_that_one(big_report, page):
    browser, _, _ = page
    _open(browser, big_report["conversations"][2]["_id"])
    assert browser.js("document.querySelectorAll('#transcript .msg').length") == 3
    shown = browser.js(f"{TEXT_OF_REPLY}.textContent")
    assert PLAIN_MEGABYTE.startswith(shown) and PREVIEW_CHARS * 0.8 <= len(shown) <= PREVIEW_CHARS


@needs_chromium
def test_the_page_marks_exactly_the_characters_python_marks(big_report, page):
    browser, _, _ = page
    _open(browser, big_report["conversations"][1]["_id"])
    assert browser.js(f"{TEXT_OF_REPLY}.textContent") == visible(PARITY)
