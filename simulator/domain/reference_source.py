"""Reading the reference tool's documents (pure): what the experiment and the conversation
conversions share.

The reference LLM Interaction Simulator (mobs-fbk/llm_interaction_simulator) stores experiments,
conversations and messages with ObjectId `_id`s; this tool's ids are derived from them, so
importing twice finds the first import's documents. Here: the error a document this tool cannot
represent raises, ObjectIds, provenance, dates, validation messages, and the placeholders of its
texts in this tool's names.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from simulator.domain.verbs import is_base_form, third_person_singular

TOOL = "llm_interaction_simulator"


class Unconvertible(Exception):
    """A source document this tool cannot represent; the message says why."""


def oid_text(value: Any) -> str:
    """An ObjectId (or its hex, or extended JSON {'$oid': …}) as 24 hex characters."""
    if isinstance(value, dict) and "$oid" in value:
        value = value["$oid"]
    text = str(value)
    if not re.fullmatch(r"[0-9a-fA-F]{24}", text):
        raise Unconvertible(f"{value!r} is not an ObjectId")
    return text.lower()


def text_of(value: Any, what: str) -> str:
    """A text field as the reference stored it; anything else (a number, a list, a mapping such
    as {"$gt": 1}) makes the document unconvertible instead of being stored as its repr."""
    if isinstance(value, str):
        return value
    if value is None:
        raise Unconvertible(f"{what} is null, not text")
    shown = repr(value)
    shown = shown if len(shown) <= 60 else shown[:59] + "…"
    raise Unconvertible(f"{what} is {type(value).__name__} {shown}, not text")


def source_block(source_id: str, db_name: str) -> dict:
    return {"tool": TOOL, "id": source_id, "db": db_name}


_TAG = re.compile(r"<([A-Za-z0-9_ ]+)>")


def convert_text(text: str, role_tags: dict[str, str], notes: set[str]) -> str:
    """The reference's placeholders in this tool's names.

    `role_tags` maps the reference's tag stem (role name upper-cased) to this tool's role tag.
    `<X_VERB_MAKE>` (a base form; the reference inflected it for several agents) becomes
    `<X_VERB_MAKES>`; `<X_POSSPRON>` becomes `<X_POSS_PRON>`; the others keep their names.
    """

    def substitute(match: re.Match[str]) -> str:
        name = match.group(1)
        for stem in sorted(role_tags, key=len, reverse=True):
            if not name.startswith(stem + "_"):
                continue
            rest, tag = name[len(stem) + 1 :], role_tags[stem]
            if rest == "POSSPRON":
                notes.add(f"<{stem}_POSSPRON> became <{tag}_POSS_PRON>")
                return f"<{tag}_POSS_PRON>"
            if rest.startswith("VERB_") and len(rest) > len("VERB_"):
                verb = rest[len("VERB_") :]
                if is_base_form(verb.lower()):
                    singular = third_person_singular(verb.lower()).upper()
                    notes.add(f"<{name}> (base form) became <{tag}_VERB_{singular}>")
                    return f"<{tag}_VERB_{singular}>"
            return f"<{tag}_{rest}>"
        return match.group(0)

    return _TAG.sub(substitute, text)


def parse_datetime(value: Any, what: str) -> datetime:
    if isinstance(value, datetime):
        moment = value.replace(tzinfo=None)
    elif isinstance(value, str):
        try:
            moment = datetime.fromisoformat(value.replace("Z", "")).replace(tzinfo=None)
        except ValueError:
            raise Unconvertible(f"{what} {value!r} is not a date") from None
    else:
        raise Unconvertible(f"{what} {value!r} is not a date")
    return moment.replace(microsecond=moment.microsecond // 1000 * 1000)


def first_error(exc: ValidationError) -> str:
    error = exc.errors()[0]
    where = ".".join(str(p) for p in error.get("loc", ()))
    message = str(error.get("msg", "")).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message
