"""The reference tool's conversation documents, with their messages, as this tool's
conversations (pure).

A conversation keeps its experiment's entries (matched by the reference's LLM signature), its
agents by the names they spoke under, its turns in order, each day's Researcher opening verbatim,
and the day summaries read back from the next day's opening. Every conversion that changes
something is noted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.reference_experiment import ExperimentImport
from simulator.domain.reference_source import (
    TOOL,
    Unconvertible,
    convert_text,
    first_error,
    oid_text,
    parse_datetime,
    source_block,
    text_of,
)
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.spec import SPEAKER_METHODS, ConversationSpec

RESEARCHER = "Researcher"


def conversation_id_for(source_id: str) -> str:
    return f"conv_ref_{source_id}"


def conversation_key_for(source_id: str) -> str:
    return f"ref-{source_id}"


REQUIRED_CONVERSATION = (
    "_id",
    "n_messages",
    "days",
    "speaker_selection_method",
    "starting_message",
    "llm",
    "agent_combination",
    "creator",
    "creation_date",
    "messages_ids",
)
REQUIRED_MESSAGE = ("index", "day", "role", "speaker", "content")


@dataclass
class ConversationImport:
    source_id: str
    id: str
    owner: str
    experiment_id: str
    favourite: bool
    snapshot: Experiment  # the experiment as this conversation ran it
    document: dict  # for ConversationsRepository.create (the caller adds experiment_version)
    messages: list[dict]  # agent turns, for MessagesRepository.insert
    summaries: list[dict]  # for ConversationsRepository.add_summary
    openings: int
    source_messages: int
    notes: list[str] = field(default_factory=list)


def convert_conversation(
    doc: dict, messages: list[dict], parent: ExperimentImport, db_name: str
) -> ConversationImport:
    """One reference conversation with the message documents its `messages_ids` name."""
    missing = [key for key in REQUIRED_CONVERSATION if key not in doc]
    if missing:
        raise Unconvertible(f"the conversation lacks {', '.join(missing)}")
    source_id = oid_text(doc["_id"])
    cid = conversation_id_for(source_id)
    if not isinstance(doc["messages_ids"], list):
        raise Unconvertible("messages_ids is not a list")
    ids = [oid_text(i) for i in doc["messages_ids"]]
    by_id = {oid_text(m["_id"]): m for m in messages}
    absent = [i for i in ids if i not in by_id]
    if absent:
        raise Unconvertible(
            f"{len(absent)} of its {len(ids)} messages are not in the messages collection "
            f"(first: {absent[0]})"
        )
    notes: set[str] = set()
    counts = _agent_counts(doc["agent_combination"], parent.experiment)
    choice = parent.llm_for(doc["llm"])
    days = doc["days"]
    spec = _spec(doc, counts, choice)
    ordered = _ordered_messages([by_id[i] for i in ids])
    openings, turns = _split_openings(ordered, days)
    created = parse_datetime(doc["creation_date"], "creation_date")
    start = convert_text(
        text_of(doc["starting_message"], "the starting message"), parent.role_tags, notes
    )
    if openings.get(1) is not None and openings[1] != doc["starting_message"]:
        notes.add("the first day's opening differs from the conversation's starting message")
    agents, roles = _agents(turns, counts, parent.experiment, choice, notes)
    message_docs = _message_docs(cid, turns, roles, choice)
    summaries = _summaries(cid, openings, days, choice, created, notes)
    snapshot = parent.experiment.model_copy(update={"starting_message": start})
    day_split = [sum(1 for t in turns if t["day"] == d) for d in range(1, days + 1)]
    document = {
        "_id": cid,
        "key": conversation_key_for(source_id),
        "experiment_id": parent.id,
        "owner": str(doc["creator"] or "").strip(),
        "spec": spec.model_dump(mode="json"),
        "experiment": snapshot.model_dump(mode="json"),
        "agents": agents,
        "day_split": day_split,
        "status": "done",
        "error": None,
        "summaries": [{"day": s["day"], "text": s["text"]} for s in summaries],
        "counters": {
            "messages": len(message_docs),
            "empty": sum(1 for m in message_docs if m["empty"]),
            "summaries": len(summaries),
        },
        "created_at": created,
        "started_at": created,
        "finished_at": None,
        # the Researcher's message of each day, verbatim (this tool derives a day's opening
        # from the starting message and the summaries; the reference stored it)
        "openings": [{"day": d, "text": t} for d, t in sorted(openings.items())],
        "source": source_block(source_id, db_name),
    }
    return ConversationImport(
        source_id,
        cid,
        document["owner"],
        parent.id,
        bool(doc.get("favourite")),
        snapshot,
        document,
        message_docs,
        summaries,
        len(openings),
        len(ordered),
        sorted(notes),
    )


def _agent_counts(combination: Any, experiment: Experiment) -> dict[str, int]:
    if not isinstance(combination, list) or not combination:
        raise Unconvertible("agent_combination is empty")
    counts: dict[str, int] = {}
    for entry in combination:
        if not isinstance(entry, (list, tuple)) or len(entry) != 2:
            raise Unconvertible(f"agent_combination entry {entry!r} is not [role, number]")
        name, n = entry
        try:
            role = experiment.role(str(name))
        except KeyError as exc:
            raise Unconvertible(str(exc.args[0])) from None
        if not isinstance(n, int) or isinstance(n, bool) or n < 1:
            raise Unconvertible(f"agent_combination gives {n!r} agents for {name!r}")
        counts[role.name] = n
    return counts


def _spec(doc: dict, counts: dict[str, int], choice: LLMChoice) -> ConversationSpec:
    method = doc["speaker_selection_method"]
    if method not in SPEAKER_METHODS:
        raise Unconvertible(f"speaker_selection_method {method!r} is not one this tool knows")
    data = {
        "agents": counts,
        "total_messages": doc["n_messages"],
        "message_counting": "reference",
        "days": doc["days"],
        "speaker_method": method,
        "allow_repeat_speaker": False,
        "role_llms": dict.fromkeys(counts, choice),
        # the reference's group chat manager and summarizer used the conversation's model
        "manager_llm": choice if method == "auto" else None,
        "summarizer_llm": choice,
        "defaults_applied": [
            "imported from the reference tool: its model served every agent, the summarizer "
            "and (under auto) the manager; message counting as there (a day's opening counts)"
        ],
    }
    try:
        return ConversationSpec.model_validate(data)
    except ValidationError as exc:
        raise Unconvertible(first_error(exc)) from None


def _ordered_messages(messages: list[dict]) -> list[dict]:
    for message in messages:
        missing = [key for key in REQUIRED_MESSAGE if key not in message]
        if missing:
            raise Unconvertible(f"message {oid_text(message['_id'])} lacks {', '.join(missing)}")
        for key in ("index", "day"):
            if not isinstance(message[key], int) or isinstance(message[key], bool):
                raise Unconvertible(f"message {oid_text(message['_id'])} has a non-integer {key}")
        for key in ("content", "speaker"):
            text_of(message[key], f"the {key} of message {oid_text(message['_id'])}")
    return sorted(messages, key=lambda m: (m["day"], m["index"]))


def _split_openings(ordered: list[dict], days: int) -> tuple[dict[int, str], list[dict]]:
    openings: dict[int, str] = {}
    turns = []
    for message in ordered:
        if not 1 <= message["day"] <= days:
            raise Unconvertible(
                f"message {oid_text(message['_id'])} is on day {message['day']} of {days}"
            )
        if message["role"] == RESEARCHER or message["speaker"] == RESEARCHER:
            if message["day"] in openings:
                raise Unconvertible(f"day {message['day']} has two Researcher messages")
            openings[message["day"]] = str(message["content"])
        else:
            turns.append(message)
    return openings, turns


def _agents(
    turns: list[dict],
    counts: dict[str, int],
    experiment: Experiment,
    choice: LLMChoice,
    notes: set[str],
) -> tuple[list[dict], dict[str, str]]:
    """The agents by the names they spoke under, in the experiment's role order, and each
    speaker's role; an agent that never spoke (no name was stored) is listed as `Role_silentN`."""
    speakers: dict[str, list[str]] = {name: [] for name in counts}
    role_of: dict[str, str] = {}
    for message in turns:
        try:
            role = experiment.role(str(message["role"])).name
        except KeyError:
            raise Unconvertible(
                f"message {oid_text(message['_id'])} is by role {message['role']!r}, which the "
                "experiment does not have"
            ) from None
        if role not in counts:
            raise Unconvertible(f"role {role!r} speaks but has no agents in agent_combination")
        speaker = str(message["speaker"])
        if role_of.setdefault(speaker, role) != role:
            raise Unconvertible(f"{speaker} speaks as two roles")
        if speaker not in speakers[role]:
            speakers[role].append(speaker)
    agents = []
    for role in experiment.roles:
        if role.name not in counts:
            continue
        names = speakers[role.name]
        if len(names) > counts[role.name]:
            raise Unconvertible(
                f"{len(names)} {role.name} agents spoke but agent_combination gives "
                f"{counts[role.name]}"
            )
        for n in range(len(names), counts[role.name]):
            names.append(f"{role.name.capitalize()}_silent{n + 1}")
            notes.add("an agent that never spoke is listed as Role_silentN (no name was stored)")
        for name in names:
            agents.append(
                {"name": name, "role": role.name, "model": choice.model, "llm_label": choice.key}
            )
    return agents, role_of


def _message_docs(
    cid: str, turns: list[dict], roles: dict[str, str], choice: LLMChoice
) -> list[dict]:
    docs = []
    per_day: dict[int, int] = {}
    for seq, message in enumerate(turns):
        index = per_day.get(message["day"], 0)
        per_day[message["day"]] = index + 1
        text = str(message["content"])
        docs.append(
            {
                "conversation_id": cid,
                "day": message["day"],
                "index": index,
                "seq": seq,
                "speaker": str(message["speaker"]),
                "role": roles[str(message["speaker"])],
                "text": text,
                "raw_text": text,
                "trimmed": False,
                "cut_at": None,
                "cut_label": None,
                "empty": not text.strip(),
                "speaker_fallback": False,
                "speaker_notes": [],
                "model": choice.model,
                "llm_label": choice.key,
                "latency_s": None,
                "tokens_in": None,
                "tokens_out": None,
                "created_at": _oid_time(message["_id"]),
                "source": {"tool": TOOL, "id": oid_text(message["_id"])},
            }
        )
    return docs


def _oid_time(value: Any) -> datetime | None:
    """When the reference inserted the message (an ObjectId carries its creation second)."""
    from bson import ObjectId

    try:
        return ObjectId(oid_text(value)).generation_time.replace(tzinfo=None)
    except Exception:  # a time is a nicety, never a reason to refuse
        return None


def _summaries(
    cid: str,
    openings: dict[int, str],
    days: int,
    choice: LLMChoice,
    created: datetime,
    notes: set[str],
) -> list[dict]:
    """Day N's summary, read from the next day's opening (the reference appended
    "\\nDay N summary:\\n " and the text to it; the last day's summary was never stored)."""
    found = []
    for day in range(1, days):
        before, after = openings.get(day), openings.get(day + 1)
        marker = f"\nDay {day} summary:\n"
        if before is None or after is None or not after.startswith(before + marker):
            notes.add(f"no summary of day {day} could be read from the day {day + 1} opening")
            continue
        raw = after[len(before + marker) :]
        raw = raw[1:] if raw.startswith(" ") else raw
        found.append(
            {
                "_id": f"{cid}-d{day:03d}",
                "conversation_id": cid,
                "day": day,
                "text": raw.strip(),
                "raw_text": raw,
                "model": choice.model,
                "created_at": created,
                "schema_version": 1,
            }
        )
    return found
