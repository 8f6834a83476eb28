"""Import labelled transcripts from spreadsheets: read and check everything, then write.

`plan` reads the mapping's workbooks (never writing them), checks every cell it uses and finds
what the store already holds; that is the dry run. `apply` writes one experiment for the
mapping, then per conversation its messages and scores and, last, the conversation itself, so
a conversation that is present is complete. Ids come from (mapping name, conversation id), so a
second import finds everything present; a failure while writing removes what this run wrote.
"""

from __future__ import annotations

import functools
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

from simulator.domain.clock import now
from simulator.domain.ids import content_hash
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.table_mapping import TableMapping, load_mapping
from simulator.domain.table_rows import ImportRow, Sheet, build_rows
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services.table_reading import read_sheets, sha256
from simulator.store.repositories.experiments import imported_document
from simulator.store.store import Store
from simulator.worlds.chat.domain.experiment import Experiment, Role, Section
from simulator.worlds.chat.domain.spec import ConversationSpec

TOOL = "table"
MAPPINGS_DIR = PROMPTS_DIR / "mappings"
PLACEHOLDER_MODEL = "mock:imported"  # an experiment names a model; the source's are in the cells


def experiment_id_for(mapping_name: str) -> str:
    return f"exp_{content_hash([TOOL, mapping_name], 8)}"


def conversation_id_for(mapping_name: str, source_id: str) -> str:
    return f"conv_{content_hash([TOOL, mapping_name, source_id], 12)}"


def cell_label(factors: dict[str, str]) -> str:
    return " ".join(f"{name}={value}" for name, value in factors.items())


@dataclass
class TablePlan:
    mapping: TableMapping
    folder: str
    hashes: dict[str, str]
    rows: list[ImportRow]
    experiment_present: bool = False
    present: set[str] = field(default_factory=set)  # conversation ids already stored

    @functools.cached_property
    def experiment(self) -> Experiment:
        return experiment_for(self.mapping, self.rows)

    @property
    def experiment_id(self) -> str:
        return experiment_id_for(self.mapping.name)

    def conversation_id(self, row: ImportRow) -> str:
        return conversation_id_for(self.mapping.name, row.source_id)

    @property
    def new_rows(self) -> list[ImportRow]:
        return [r for r in self.rows if self.conversation_id(r) not in self.present]

    def by_factor(self, factor: str | None) -> dict[str, dict[str, int]]:
        """Conversations and failed ones per value of `factor` (all under "all" when None)."""
        table: dict[str, Counter] = {}
        for row in self.rows:
            key = row.factors.get(factor, "") if factor else "all"
            counts = table.setdefault(key, Counter())
            counts["conversations"] += 1
            counts["failed"] += row.failed
        return {k: dict(v) for k, v in sorted(table.items())}

    def to_json(self, dry_run: bool) -> dict:
        new = self.new_rows
        factor = "model" if any("model" in r.factors for r in self.rows) else None
        return {
            "dry_run": dry_run,
            "mapping": self.mapping.name,
            "experiment_id": self.experiment_id,
            "experiment_present": self.experiment_present,
            "folder": self.folder,
            "files": self.hashes,
            "conversations": len(self.rows),
            "added": len(new),
            "already_present": len(self.rows) - len(new),
            "failed": sum(r.failed for r in self.rows),
            "messages_added": sum(len(r.turns) for r in new),
            "scores_added": sum(len(r.labels) + len(r.scores) for r in new),
            "by": factor,
            "counts": self.by_factor(factor),
        }


def read_rows(mapping: TableMapping, folder: Path) -> tuple[list[ImportRow], dict[str, str]]:
    """Every row the mapping names, checked; the source files' sha256 by name."""
    tables = []
    for table in mapping.tables:
        sheets: list[Sheet] = []
        for name in table.files:
            sheets += read_sheets(folder / name, table.sheets)
        tables.append((table, sheets))
    joins = [
        read_sheets(folder / j.file, [j.sheet] if j.sheet else None, first_only=True)[0]
        for j in mapping.joins
    ]
    rows = build_rows(mapping, tables, joins)
    return rows, {name: sha256(folder / name) for name in mapping.files()}


def find_mapping(given: str | Path) -> Path:
    """A mapping file, or the name of a shipped one (prompts/mappings/NAME.yaml)."""
    path = Path(given)
    shipped = MAPPINGS_DIR / f"{given}.yaml"
    return shipped if not path.exists() and shipped.is_file() else path


def plan(store: Store, mapping_path: str | Path, folder: str | Path | None) -> TablePlan:
    mapping_path = find_mapping(mapping_path)
    mapping = load_mapping(mapping_path)
    base = Path(folder) if folder is not None else Path(mapping_path).parent
    rows, hashes = read_rows(mapping, base)
    result = TablePlan(mapping, str(base), hashes, rows)
    result.experiment_present = store.experiments.exists(result.experiment_id)
    ids = [result.conversation_id(r) for r in rows]
    result.present = {d["_id"] for d in store.conversations.get_many(ids)}
    return result


def experiment_for(mapping: TableMapping, rows: list[ImportRow]) -> Experiment:
    """A chat experiment that names the roles the transcripts speak in; the prompts that made
    them are not in the source, so its texts say so."""
    roles = list(dict.fromkeys(t.role for r in rows for t in r.turns)) or ["speaker"]
    said = f"Imported with the table mapping {mapping.name!r}; the prompts are not in the source."
    return Experiment(
        name=mapping.experiment,
        note=mapping.note,
        starting_message=said,
        llms=[LLMChoice(model=PLACEHOLDER_MODEL)],
        roles=[
            Role(name=role, sections=[Section(title="Imported", content=said)]) for role in roles
        ],
    )


def spec_for(row: ImportRow) -> ConversationSpec:
    """What the transcript shows of how it ran: its roles, speakers and length."""
    speakers: dict[str, set[str]] = {}
    for turn in row.turns:
        speakers.setdefault(turn.role, set()).add(turn.speaker)
    model = LLMChoice(model=PLACEHOLDER_MODEL)
    return ConversationSpec(
        agents={role: len(names) for role, names in speakers.items()},
        total_messages=max(2, len(row.turns)),
        role_llms=dict.fromkeys(speakers, model),
        defaults_applied=["imported from a table: models, prompts and sampling are not stored"],
    )


def apply(store: Store, result: TablePlan, owner: str) -> TablePlan:
    """Write what the plan found new; on any failure remove what this run wrote and re-raise."""
    mapping = result.mapping
    written: list[str] = []
    wrote_experiment = False
    try:
        if not result.experiment_present:
            source = {"tool": TOOL, "mapping": mapping.name, "files": result.hashes}
            doc = imported_document(result.experiment, result.experiment_id, owner, now(), source)
            doc["imported"] = True
            wrote_experiment = store.experiments.insert_imported(doc)
        for row in result.new_rows:
            cid = result.conversation_id(row)
            written.append(cid)
            if not _write_conversation(store, result, row, cid, owner):
                written.pop()
                result.present.add(cid)
    except BaseException:
        for cid in written:
            store.messages.delete_for(cid)
            store.scores.delete_for(cid)
            store.conversations.delete(cid)
        if wrote_experiment:
            store.experiments.delete(result.experiment_id, owner)
        raise
    return result


def _write_conversation(
    store: Store, result: TablePlan, row: ImportRow, cid: str, owner: str
) -> bool:
    from pymongo.errors import DuplicateKeyError

    moment = now()
    model = row.factors.get("model", "unknown")  # shown beside each speaker; not a backend
    store.messages.insert_all(
        [
            {
                "conversation_id": cid,
                "day": 1,
                "index": index,
                "seq": index,
                "speaker": turn.speaker,
                "role": turn.role,
                "text": turn.text,
                "raw_text": turn.text,
                "turn": turn.turn,
                "empty": not turn.text,
                "trimmed": False,
                "speaker_fallback": False,
                "model": model,
                "llm_label": model,
                "created_at": moment,
                "source": {"tool": TOOL},
            }
            for index, turn in enumerate(row.turns)
        ]
    )
    where = {"file": row.file, "sheet": row.sheet, "row": row.row}
    for source, values in row.labels.items():
        store.scores.add(
            f"label:{source}", "conversation", cid, values, conversation_id=cid, details=where
        )
    for source, value in row.scores.items():
        store.scores.add(
            f"score:{source}", "conversation", cid, {"value": value},
            conversation_id=cid, details=where,
        )  # fmt: skip
    failed = result.mapping.failed
    speakers = dict.fromkeys((t.speaker, t.role) for t in row.turns)
    doc = {
        "_id": cid,
        "key": f"{TOOL}:{result.mapping.name}:{row.source_id}",
        "experiment_id": result.experiment_id,
        "owner": owner,
        "sweep_id": None,
        "status": "failed" if row.failed else "done",
        "error": (
            f"marked failed in the source: {failed.label} is {row.labels[failed.label]['label']}"
            if row.failed and failed
            else None
        ),
        "spec": spec_for(row).model_dump(mode="json"),
        "experiment": result.experiment.model_dump(mode="json"),
        "cell": dict(row.factors),
        "cell_key": content_hash(row.factors, 16),
        "cell_label": cell_label(row.factors),
        "agents": [
            {"name": name, "role": role, "model": model, "llm_label": model}
            for name, role in speakers
        ],
        "day_split": [len(row.turns)],
        "counters": {"messages": len(row.turns), "empty": sum(not t.text for t in row.turns)},
        "started_at": moment,
        "finished_at": moment,
        "imported": True,
        "source": {"tool": TOOL, "mapping": result.mapping.name, "id": row.source_id, **where},
    }
    try:
        store.conversations.create(doc)
    except DuplicateKeyError:
        return False
    return True
