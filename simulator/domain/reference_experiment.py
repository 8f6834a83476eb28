"""The reference tool's experiment documents as this tool's experiments (pure).

Its LLM entries become model strings with their sampling parameters (a model listed more than
once gets labels that tell the entries apart); its sections are laid out so every agent's prompt
reads in the order the reference rendered it; its texts' placeholders take this tool's names.
Every conversion that changes something a researcher wrote is noted.
"""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any

from pydantic import ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.domain.reference_source import (
    Unconvertible,
    convert_text,
    first_error,
    oid_text,
    parse_datetime,
    text_of,
)
from simulator.worlds.chat.domain.experiment import Experiment, Role, Section

# utility/consts.py MAX_CONTEXT_LEN: the reference built every Ollama model from a Modelfile
# with `PARAMETER num_ctx 10000`
REFERENCE_NUM_CTX = 10_000
STARTING_PROMPT = "Starting prompt"
# utility/enums.py SectionType, in its declared order (its __lt__ compares these positions)
SECTION_TYPES = ("Roles", "Private", "Shared", "Summarizer")


def experiment_id_for(source_id: str) -> str:
    return f"exp_ref_{source_id}"


# ---- LLMs: model strings and sampling parameters --------------------------------------------


def convert_model(model: str) -> str:
    """`gpt-…` went to OpenAI in the reference; every other model string was an Ollama model."""
    model = model.strip()
    return f"openai:{model}" if model.lower().startswith("gpt-") else f"ollama:{model}"


def _params(doc: dict, ollama: bool) -> GenerationParams:
    data = {key: doc.get(key) for key in ("temperature", "top_k", "top_p")}
    if ollama:
        data["num_ctx"] = REFERENCE_NUM_CTX
    try:
        return GenerationParams(**{k: v for k, v in data.items() if v is not None})
    except ValidationError as exc:
        raise Unconvertible(f"LLM {doc.get('model')!r}: {first_error(exc)}") from None


def llm_signature(doc: dict) -> tuple:
    """What identified an LLM in the reference (its Ollama model name was built from these)."""
    return (
        str(doc.get("model", "")).strip().lower(),
        doc.get("temperature"),
        doc.get("top_k"),
        doc.get("top_p"),
    )


def convert_llm(doc: dict, label: str | None = None) -> LLMChoice:
    if not isinstance(doc, dict) or not isinstance(doc.get("model"), str) or not doc["model"]:
        raise Unconvertible(f"an LLM entry has no model string: {doc!r}")
    model = convert_model(doc["model"])
    try:
        return LLMChoice(model=model, params=_params(doc, model.startswith("ollama:")), label=label)
    except ValidationError as exc:
        raise Unconvertible(f"LLM {doc['model']!r}: {first_error(exc)}") from None


def convert_llms(docs: list[dict], notes: set[str]) -> list[tuple[tuple, LLMChoice]]:
    """Every entry with its reference signature; a model listed more than once gets a label
    naming the sampling parameters that tell the entries apart ("llama3 t=0.7")."""
    if not isinstance(docs, list) or not docs:
        raise Unconvertible("the experiment lists no LLM")
    seen: dict[tuple, LLMChoice] = {}
    models = [str(d.get("model", "")).strip().lower() for d in docs if isinstance(d, dict)]
    for doc in docs:
        choice = convert_llm(doc)
        signature = llm_signature(doc)
        if signature in seen:
            notes.add(f"LLM {doc['model']} is listed twice with the same parameters; kept once")
            continue
        if models.count(signature[0]) > 1:
            label = _label(doc, [d for d in docs if llm_signature(d)[0] == signature[0]])
            choice = choice.model_copy(update={"label": label})
            notes.add(f"{doc['model']} is listed more than once: its entries are labelled")
        seen[signature] = choice
    return list(seen.items())


def _label(doc: dict, same_model: list[dict]) -> str:
    """'llama3:latest' at temperature 0.7 -> 'llama3 t=0.7' (labels may not contain ':')."""
    model = str(doc["model"]).strip().removesuffix(":latest").replace(":", " ")
    parts = [model]
    for key, short in (("temperature", "t"), ("top_k", "top_k"), ("top_p", "top_p")):
        if short == "t" or len({repr(d.get(key)) for d in same_model}) > 1:
            parts.append(f"{short}={doc.get(key)}")
    return " ".join(parts)


# ---- sections, in the order the reference rendered them ---------------------------------------


@dataclass(frozen=True)
class _RefSection:
    index: int
    title: str
    content: str
    type: str
    role: str
    position: int  # where it came from, for stable identities

    @property
    def type_rank(self) -> int:
        return SECTION_TYPES.index(self.type) if self.type in SECTION_TYPES else len(SECTION_TYPES)


def _reference_lt(a: _RefSection, b: _RefSection) -> bool:
    """Section.__lt__ of the reference: index 0 first, then by type, then index, then role."""
    if a.index == 0 or b.index == 0:
        return a.index < b.index
    if a.type == b.type:
        if a.index == b.index:
            return a.role < b.role
        return a.index < b.index
    return a.type_rank < b.type_rank


def reference_order(sections: list[_RefSection]) -> list[_RefSection]:
    """sorted(sections) as Python sorted the reference's Section objects (only `<` is used)."""

    def compare(a: _RefSection, b: _RefSection) -> int:
        return -1 if _reference_lt(a, b) else (1 if _reference_lt(b, a) else 0)

    return sorted(sections, key=functools.cmp_to_key(compare))


def ref_sections(docs: Any, where: str, offset: int) -> list[_RefSection]:
    if not isinstance(docs, list):
        raise Unconvertible(f"{where} is not a list of sections")
    found = []
    for i, doc in enumerate(docs):
        if not isinstance(doc, dict) or not isinstance(doc.get("title"), str):
            raise Unconvertible(f"{where}[{i}] is not a section with a title")
        index = doc.get("index")
        if not isinstance(index, int) or isinstance(index, bool):
            raise Unconvertible(f"section {doc['title']!r} of {where} has no whole-number index")
        found.append(
            _RefSection(
                index,
                doc["title"].strip(),
                text_of(doc.get("content") or "", f"the content of section {doc['title']!r}"),
                str(doc.get("type") or ""),
                str(doc.get("role") or ""),
                offset + i,
            )
        )
    return found


def _section(ref: _RefSection, role_tags: dict[str, str], notes: set[str]) -> Section:
    return Section(title=ref.title, content=convert_text(ref.content, role_tags, notes))


def _convert_roles(
    doc: dict, role_tags: dict[str, str], notes: set[str]
) -> tuple[list[Role], list[Section]]:
    """Roles whose sections, followed by the shared ones, read in the reference's order.

    The reference sorted each agent's shared and private sections together: the starting
    prompt (index 0) first, then private sections by index, then shared ones by index. A shared
    section that sorts before a private one (a shared starting prompt) is copied into every
    role, so each agent's prompt keeps the reference's order.
    """
    shared = ref_sections(doc.get("shared_sections", []), "shared_sections", 0)
    per_role: list[tuple[str, list[_RefSection]]] = []
    offset = len(shared)
    for i, role in enumerate(doc["roles"]):
        private = ref_sections(role.get("sections", []), f"roles[{i}].sections", offset)
        offset += len(private)
        per_role.append((role["name"], private))
    moved: set[_RefSection] = set()
    for _, private in per_role:
        order = reference_order([*shared, *private])
        last = max((order.index(s) for s in private), default=-1)
        moved.update(s for s in order[: last + 1] if s in shared)
    kept_shared = [s for s in reference_order(shared) if s not in moved]
    roles = []
    for name, private in per_role:
        order = reference_order([*shared, *private])
        own = [s for s in order if s not in kept_shared]
        if not own:
            raise Unconvertible(f"role {name!r} has no sections of its own")
        if own[0].title != STARTING_PROMPT:
            notes.add(
                f"role {name}: the first section is {own[0].title!r}, not the starting prompt; "
                "it opens the prompt without its heading"
            )
        try:
            roles.append(Role(name=name, sections=[_section(s, role_tags, notes) for s in own]))
        except ValidationError as exc:
            raise Unconvertible(f"role {name!r}: {first_error(exc)}") from None
    if moved:
        notes.add("a shared starting prompt was copied into every role, where it was rendered")
    return roles, [_section(s, role_tags, notes) for s in kept_shared]


# ---- experiments ------------------------------------------------------------------------------


@dataclass
class ExperimentImport:
    source_id: str
    id: str
    owner: str
    created_at: datetime
    favourite: bool
    experiment: Experiment
    llms: list[tuple[tuple, LLMChoice]]  # reference signature -> entry, to match conversations
    role_tags: dict[str, str]
    notes: list[str] = field(default_factory=list)

    def llm_for(self, doc: dict) -> LLMChoice:
        """The experiment's entry for a conversation's `llm` document (else converted alone)."""
        signature = llm_signature(doc) if isinstance(doc, dict) else None
        for known, choice in self.llms:
            if known == signature:
                return choice
        return convert_llm(doc)


REQUIRED_EXPERIMENT = ("_id", "starting_message", "llms", "roles", "creator", "creation_date")


def convert_experiment(doc: dict, owner_ok: Any = None) -> ExperimentImport:
    """One reference experiment document; `owner_ok(name)` may refuse a creator's name."""
    missing = [key for key in REQUIRED_EXPERIMENT if key not in doc]
    if missing:
        raise Unconvertible(f"the experiment lacks {', '.join(missing)}")
    source_id = oid_text(doc["_id"])
    creator = str(doc["creator"] or "").strip()
    if owner_ok is not None:
        owner_ok(creator)
    if not isinstance(doc["roles"], list) or not doc["roles"]:
        raise Unconvertible("the experiment has no roles")
    for i, role in enumerate(doc["roles"]):
        if not isinstance(role, dict) or not isinstance(role.get("name"), str):
            raise Unconvertible(f"roles[{i}] has no name")
    notes: set[str] = set()
    role_tags = {r["name"].upper(): _our_tag(r["name"]) for r in doc["roles"]}
    llms = convert_llms(doc["llms"], notes)
    roles, shared = _convert_roles(doc, role_tags, notes)
    summarizer_refs = reference_order(
        ref_sections(doc.get("summarizer_sections", []), "summarizer_sections", 0)
    )
    if summarizer_refs and summarizer_refs[0].title != STARTING_PROMPT:
        notes.add("the summarizer's first section opens its prompt without its heading")
    created = parse_datetime(doc["creation_date"], "creation_date")
    note = str(doc.get("note") or "")
    data = {
        "name": _experiment_name(note, roles, created),
        "note": note,
        "favourite": bool(doc.get("favourite")),
        "starting_message": convert_text(
            text_of(doc["starting_message"], "the starting message"), role_tags, notes
        ),
        "llms": [choice for _, choice in llms],
        "roles": roles,
        "shared_sections": shared,
        "summarizer_sections": [_section(s, role_tags, notes) for s in summarizer_refs],
    }
    try:
        experiment = Experiment.model_validate(data)
    except ValidationError as exc:
        raise Unconvertible(first_error(exc)) from None
    return ExperimentImport(
        source_id,
        experiment_id_for(source_id),
        creator,
        created,
        bool(doc.get("favourite")),
        experiment,
        llms,
        role_tags,
        sorted(notes),
    )


def _our_tag(name: str) -> str:
    return re.sub(r"[^A-Z0-9]+", "_", name.upper()).strip("_")


def _experiment_name(note: str, roles: list[Role], created: datetime) -> str:
    """The note's first line (the reference listed experiments by note), else roles and date."""
    first = note.strip().splitlines()[0].strip() if note.strip() else ""
    if first:
        return first if len(first) <= 80 else first[:79] + "…"
    names = " & ".join(r.name.capitalize() for r in roles)
    return f"{names} ({created:%Y-%m-%d %H:%M})"
