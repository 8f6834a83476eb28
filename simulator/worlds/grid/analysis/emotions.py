"""Emotion in the agents' messages, word by word with the NRC Emotion Lexicon (the `emotion`
extra: the NRCLex package, which ships the lexicon; nothing is downloaded).

Takata et al. (2024, section 3.4) scored every message with a BERT emotion classifier
(bert-base-uncased-emotion: sadness, joy, love, anger, fear, surprise). That model lives on a
model hub, not on PyPI, so it cannot be installed with its weights; the lexicon can. Its eight
emotions (Plutchik's: anger, anticipation, disgust, fear, joy, sadness, surprise, trust) differ
from the classifier's six: no love; anticipation, disgust and trust added. A message's score
for an emotion is that emotion's share of the message's emotion-word associations (the eight
sum to 1, as the classifier's probabilities do); a message with no emotion word has no score
and is counted apart, never read as neutral.
"""

from __future__ import annotations

import re
from collections import Counter
from functools import cache
from typing import Any

from simulator.errors import UserError
from simulator.worlds.grid.analysis.runs import GridRun

EMOTIONS = ("anger", "anticipation", "disgust", "fear", "joy", "sadness", "surprise", "trust")
WORD = re.compile(r"[a-z]+")
INSTALL = 'pip install "llm-interaction-simulator[emotion]"'


@cache
def nrc_lexicon() -> dict[str, list[str]]:
    """The NRC lexicon as NRCLex ships it (word -> categories), or a UserError naming the
    extra to install."""
    try:
        from nrclex import NRCLex
    except ImportError:
        raise UserError(
            "emotion measures left out: the NRC Emotion Lexicon (NRCLex) is not installed",
            fix=INSTALL,
        ) from None
    return NRCLex().__lexicon__  # the packaged lexicon; NRCLex's TextBlob path needs NLTK data


def emotion_note() -> list[str]:
    """Why the emotion figures are missing, or nothing."""
    try:
        nrc_lexicon()
    except UserError as exc:
        return [f"{exc.message}; {exc.fix}"]
    return []


def words_of(text: str, lexicon: dict[str, list[str]]) -> list[str]:
    """The lexicon's words in `text`: lower-cased letter runs, a plural's singular when only it
    is listed ("fears" -> "fear"); NRCLex would lemmatise with TextBlob, which needs NLTK data."""
    found = []
    for word in WORD.findall((text or "").lower()):
        if word in lexicon:
            found.append(word)
        elif word.endswith("s") and word[:-1] in lexicon:
            found.append(word[:-1])
    return found


def message_emotions(text: str, lexicon: dict[str, list[str]]) -> dict:
    """One message: `scores` per emotion (None without an emotion word), the emotion words
    found, and the `dominant` emotion ("none" without one, "tied" when two share the top)."""
    counts = Counter(
        category
        for word in words_of(text, lexicon)
        for category in lexicon[word]
        if category in EMOTIONS
    )
    total = sum(counts.values())
    if not total:
        return {"scores": None, "words": 0, "dominant": "none"}
    scores = {e: counts.get(e, 0) / total for e in EMOTIONS}
    top = max(scores.values())
    leaders = [e for e in EMOTIONS if scores[e] == top]
    return {
        "scores": scores,
        "words": total,
        "dominant": leaders[0] if len(leaders) == 1 else "tied",
    }


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def emotion_measures(run: GridRun) -> dict | None:
    """Per message (in `run.rows` order), per agent and step, per step, and per run; None when
    the lexicon is not installed."""
    try:
        lexicon = nrc_lexicon()
    except UserError:
        return None
    per_message = [message_emotions(str(r.get("message") or ""), lexicon) for r in run.rows]
    steps = range(1, run.last_step + 1)
    per_agent: dict[str, dict[str, list[float | None]]] = {
        name: {e: [None] * len(steps) for e in EMOTIONS} for name in run.names
    }
    by_step: dict[int, list[dict]] = {}
    for row, found in zip(run.rows, per_message, strict=True):
        step, name = int(row["step"]), run.names[int(row["agent_index"])]
        if found["scores"] is None:
            continue
        by_step.setdefault(step, []).append(found["scores"])
        for e in EMOTIONS:
            per_agent[name][e][step - 1] = found["scores"][e]
    scored = [m["scores"] for m in per_message if m["scores"] is not None]
    dominant = Counter(m["dominant"] for m in per_message)
    return {
        "per_message": per_message,
        "per_agent": per_agent,
        "per_step": {
            e: [_mean([s[e] for s in by_step.get(t, [])]) for t in steps] for e in EMOTIONS
        },
        "mean": {e: _mean([s[e] for s in scored]) for e in EMOTIONS},
        "dominant_shares": {k: dominant[k] / len(per_message) for k in (*EMOTIONS, "tied", "none")}
        if per_message
        else {},
        "without_emotion_share": dominant["none"] / len(per_message) if per_message else None,
    }


def emotion_summary(found: dict | None) -> dict[str, Any]:
    """The scalar figures of `measures` (None without the lexicon)."""
    found = found or {}
    mean = found.get("mean") or {}
    return {
        **{f"emotion_{e}": mean.get(e) for e in EMOTIONS},
        "emotion_none_share": found.get("without_emotion_share"),
    }
