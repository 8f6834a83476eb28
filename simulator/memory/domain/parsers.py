"""Reading the model's answers for the memory stream: importance ratings, salient questions,
insights with the numbers of the records they rest on.

Each parser says whether it fell back, so a run can count how often the model's words were not
used (the spec: an unparseable importance becomes 4, recorded). Lenient where the meaning is
plain ("Rating: 7/10", "**7**", "I'd say 7 out of 10", "7.0"), strict where it is not: number
words ("seven") and ratings outside 1..10 fall back rather than being guessed.
"""

from __future__ import annotations

import json
import math
import re
from typing import NamedTuple

from simulator.memory.domain.records import MAX_IMPORTANCE, MIN_IMPORTANCE

FALLBACK_IMPORTANCE = 4
_NUMBER = r"[-+]?\d+(?:\.\d+)?"
_OUT_OF = re.compile(rf"({_NUMBER})\s*(?:/|out\s+of)\s*10\b", re.IGNORECASE)
# "on a scale of 1 to 10", "(1-10)", "1 to 10": the scale, not the rating
_SCALE = re.compile(
    r"(?:\bscale\s+(?:of|from)\s+)?\b1\s*(?:-|–|to)\s*10\b(?!\s*(?:/|out\s+of))", re.IGNORECASE
)
_FIRST_NUMBER = re.compile(rf"(?<![\w.]){_NUMBER}")
_LIST_MARK = re.compile(r"^\s*(?:[-*•]+|\(?\d{1,2}[.):]|[A-Za-z][.)])\s+")
_BECAUSE = re.compile(
    r"[\s,;:.-]*\(\s*because\s+of\b(?P<cited>[^()]*)\)\s*[.;]?\s*$", re.IGNORECASE
)
_CITED_NUMBER = re.compile(r"\d+")


class ImportanceRating(NamedTuple):
    value: int  # 1..10
    fallback: bool  # the reply held no rating in 1..10: `value` is FALLBACK_IMPORTANCE


class Insight(NamedTuple):
    text: str
    evidence: list[int]  # the numbers of the records cited, as the model wrote them
    fallback: bool  # no "(because of ...)" was found: the insight cites nothing


def parse_importance(reply: str, fallback: int = FALLBACK_IMPORTANCE) -> ImportanceRating:
    """The rating in a reply to "rate this memory from 1 to 10": "7", "Rating: 7/10" and
    "7 out of 10" give 7; "seven", "11" or nothing give the fallback, flagged."""
    text = (reply or "").strip().replace("**", "")
    match = _OUT_OF.search(text)
    if match is None:
        match = _FIRST_NUMBER.search(_SCALE.sub(" ", text))
    if match is None:
        return ImportanceRating(fallback, True)
    number = float(match.group(1) if match.re is _OUT_OF else match.group(0))
    value = math.floor(number + 0.5)  # 7.5 -> 8: half up, not Python's half to even
    if not MIN_IMPORTANCE <= value <= MAX_IMPORTANCE:
        return ImportanceRating(fallback, True)
    return ImportanceRating(int(value), False)


def strip_list_mark(line: str) -> str:
    """A list item without its "1.", "2)", "-" or "*" mark."""
    return _LIST_MARK.sub("", line, count=1).strip()


def parse_evidence(line: str) -> Insight:
    """ "insight text (because of 0, 2)" -> ("insight text", [0, 2]); no "because of" -> the
    whole line, no evidence, flagged. Numbers are kept as written (duplicates and out-of-range
    ones included): `reflection.cited` decides which records they name."""
    text = strip_list_mark(line)
    match = _BECAUSE.search(text)
    if match is None:
        return Insight(text, [], True)
    numbers = [int(n) for n in _CITED_NUMBER.findall(match.group("cited"))]
    return Insight(text[: match.start()].strip(), numbers, False)


def parse_insights(reply: str, limit: int = 5) -> list[Insight]:
    """Up to `limit` insights, one per non-empty line of the reply (list marks removed)."""
    found = [parse_evidence(line) for line in _lines(reply)]
    return [insight for insight in found if insight.text][:limit]


def parse_questions(reply: str, limit: int = 3) -> list[str]:
    """Up to `limit` questions, one per non-empty line (list marks removed); an empty list
    when the reply held none, for the caller to count."""
    return [strip_list_mark(line) for line in _lines(reply)][:limit]


def _lines(reply: str) -> list[str]:
    return [line for line in (reply or "").splitlines() if strip_list_mark(line)]


_HOUR = re.compile(r"^\s*(?:[-*•]\s*)?\**(\d{1,2})[:.](\d{2})\**\s*[-–:)]?\s*(?P<what>.+)$")


def parse_plan_items(reply: str, limit: int = 8) -> list[str]:
    """Up to `limit` plan items, one per non-empty line (list marks removed)."""
    return [strip_list_mark(line) for line in _lines(reply)][:limit]


def parse_hourly_plan(reply: str, start: int, end: int) -> dict[int, str]:
    """{hour: what} for lines starting "HH:MM" with start <= HH <= end; the first line of an
    hour wins; lines without a time are left out (the caller counts an empty result)."""
    found: dict[int, str] = {}
    for line in (reply or "").splitlines():
        match = _HOUR.match(line)
        if match is None:
            continue
        hour = int(match.group(1))
        if start <= hour <= end and hour not in found and match.group("what").strip():
            found[hour] = match.group("what").strip()
    return found


def parse_reaction(reply: str) -> str:
    """The reaction in a reply to "should X react?": the text after a first line starting
    with "yes" (or the rest of that line); '' for no, or for a reply that says neither."""
    lines = [line.strip() for line in (reply or "").strip().splitlines() if line.strip()]
    if not lines or not re.match(r"^\W*yes\b", lines[0], re.IGNORECASE):
        return ""
    rest = re.sub(r"^\W*yes\b[\s,.:;-]*", "", lines[0], flags=re.IGNORECASE)
    return " ".join(([rest] if rest else []) + lines[1:]).strip()


class Action(NamedTuple):
    minutes: int
    text: str


_DURATION = re.compile(
    r"^(?P<what>.*?)[\s,;:-]*\(\s*duration\s+in\s+minutes\s*:\s*(?P<minutes>\d+)[^)]*\)",
    re.IGNORECASE,
)


def parse_actions(reply: str, total: int) -> list[Action]:
    """5-15-minute actions from a reply in the reference code's task_decomp format
    ("1) Sam is mixing paint (duration in minutes: 15, minutes left: 45)"), fitted to `total`
    minutes as the code's cleanup does: items past the total are dropped, the last one cut to
    end on it or stretched to reach it. Lines without a duration are left out; [] when none
    has one (the caller counts it and keeps the block as one action)."""
    found = []
    for line in _lines(reply):
        match = _DURATION.match(strip_list_mark(line))
        if match is None:
            continue
        minutes, what = int(match.group("minutes")), match.group("what").strip(" .")
        if minutes > 0 and what:
            found.append(Action(minutes, what))
    fitted: list[Action] = []
    used = 0
    for action in found:
        if used >= total:
            break
        minutes = min(action.minutes, total - used)
        fitted.append(Action(minutes, action.text))
        used += minutes
    if fitted and used < total:
        fitted[-1] = Action(fitted[-1].minutes + total - used, fitted[-1].text)
    return fitted


def parse_yes_no(reply: str) -> bool | None:
    """A yes/no answer: the reply's first word, or the word after "Answer ...:" ("Reasoning:
    ... Answer in yes or no: Yes" -> True, as the reference code's decide_to_talk is read);
    None when it says neither there (the caller counts it)."""
    text = (reply or "").replace("**", "")
    answer = re.search(r"answer[^:\n]*:\s*(yes|no)\b", text, re.IGNORECASE)
    if answer is None:
        answer = re.match(r"\W*(yes|no)\b", text, re.IGNORECASE)
    return None if answer is None else answer.group(1).lower() == "yes"


class Utterance(NamedTuple):
    text: str
    end: bool  # the speaker's line ends the conversation
    fallback: bool  # the reply was not the asked JSON: the whole text is the line, not ending


_JSON_OBJECT = re.compile(r"\{.*\}", re.S)


def parse_utterance(reply: str) -> Utterance:
    """The next line of a conversation from {"utterance": "...", "end": true/false} (the
    reference code's iterative_convo answer, in our key names); anything else is the whole
    reply as the line, flagged; an empty reply ends the conversation, flagged."""
    text = (reply or "").strip()
    match = _JSON_OBJECT.search(text)
    if match is not None:
        try:
            data = json.loads(match.group(0))
        except ValueError:
            data = None
        if isinstance(data, dict) and isinstance(data.get("utterance"), str):
            end = data.get("end", False)
            ended = end is True or str(end).strip().lower() in ("true", "yes")
            if data["utterance"].strip():
                return Utterance(data["utterance"].strip(), ended, False)
    if not text:
        return Utterance("", True, True)
    return Utterance(text, False, True)
