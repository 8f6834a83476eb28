"""Experiments in the store: content, owner, times, lineage. Owns every experiment query."""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from simulator.domain.clock import now
from simulator.domain.ids import content_hash, new_id
from simulator.domain.world import domain_of, experiment_kind
from simulator.errors import NotFound, PermissionRefused
from simulator.store.counting import count
from simulator.store.foreign import DEFAULT_IMPORT, foreign_refusal, is_foreign_id, ours
from simulator.store.indexes import ensure_marker_index
from simulator.worlds import DEFAULT_KIND, kind_of

SCHEMA_VERSION = 1
# fields added after experiments were stored: at their default they stay out of the stored spec
# and of the version hash, so a stored experiment keeps its version and a resumed sweep its
# conversations' keys. A world lists those it hashes even at their default (ALWAYS_FIELDS).
# A chat's `memory` is dumped only when it is not the default (its model's serializer).
LATER_FIELDS = ("memory", "probe", "measures", "personality")

# any world's experiment model (simulator/domain/world.py: WorldDomain.Experiment)
AnyExperiment = BaseModel


def spec_of(experiment: AnyExperiment) -> dict:
    """What is stored under `spec`: everything that shapes a run (not name, note, favourite)."""
    spec = experiment.model_dump(mode="json", include=set(_fields(experiment)))
    always = domain_of(experiment_kind(experiment)).ALWAYS_FIELDS
    for name in LATER_FIELDS:  # left at its default: the version its experiment always had
        if name in spec and name not in always and spec[name] == _default(experiment, name):
            del spec[name]
    return spec


def _fields(experiment: AnyExperiment) -> tuple[str, ...]:
    return domain_of(experiment_kind(experiment)).SPEC_FIELDS


def _default(experiment: AnyExperiment, name: str) -> object:
    field = type(experiment).model_fields[name]
    value = field.get_default(call_default_factory=True)
    return value.model_dump(mode="json") if hasattr(value, "model_dump") else value


def experiment_version(experiment: AnyExperiment) -> str:
    """Hash of everything that shapes a conversation (not name, note or favourite); a grid
    experiment's hash covers its kind too, so no chat experiment can share it."""
    spec = spec_of(experiment)
    kind = experiment_kind(experiment)
    if domain_of(kind).VERSION_HAS_KIND:
        return content_hash({"kind": kind, **spec})
    return content_hash(spec)


def imported_document(
    experiment: AnyExperiment, experiment_id: str, owner: str, created_at: Any, source: dict
) -> dict:
    """The document `create` writes, with an imported experiment's own id, owner and date, and
    where it came from (`source`)."""
    return {
        "_id": experiment_id,
        "schema_version": SCHEMA_VERSION,
        "name": experiment.name,
        "note": experiment.note,
        "owner": owner,
        "created_at": created_at,
        "updated_at": created_at,
        "duplicated_from": None,
        "version": experiment_version(experiment),
        "spec": experiment.model_dump(mode="json", include=set(_fields(experiment))),
        "source": source,
    }


class ExperimentsRepository:
    import_hint = DEFAULT_IMPORT  # open_store sets the command for this database

    def __init__(self, db: Any):
        self._col = db.experiments

    def ensure_indexes(self) -> None:
        self._col.create_index([("owner", 1)])
        self._col.create_index([("created_at", -1)])
        ensure_marker_index(self._col)

    def create(
        self, experiment: AnyExperiment, owner: str, duplicated_from: str | None = None
    ) -> dict:
        from pymongo.errors import DuplicateKeyError

        moment = now()
        spec = spec_of(experiment)
        world = experiment_kind(experiment)  # a chat is stored without kind, as it always was
        kind = {} if world == DEFAULT_KIND else {"kind": world}
        for _ in range(8):
            doc = {
                "_id": new_id("exp"),
                "schema_version": SCHEMA_VERSION,
                "name": experiment.name,
                "note": experiment.note,
                "owner": owner,
                "created_at": moment,
                "updated_at": moment,
                "duplicated_from": duplicated_from,
                "version": experiment_version(experiment),
                "spec": spec,
                **kind,
            }
            try:
                self._col.insert_one(doc)
                return doc
            except DuplicateKeyError:
                continue
        raise RuntimeError("could not allocate a unique experiment id")

    def insert_imported(self, doc: dict) -> bool:
        """Write an `imported_document` under its given id (`create` allocates a random one);
        False when that id is already stored (another import wrote it meanwhile)."""
        from pymongo.errors import DuplicateKeyError

        try:
            self._col.insert_one(doc)
        except DuplicateKeyError:
            return False
        return True

    def exists(self, experiment_id: str) -> bool:
        return self._col.find_one(ours({"_id": experiment_id}), {"_id": 1}) is not None

    @staticmethod
    def version_of(experiment: AnyExperiment) -> str:
        """The version a conversation run from `experiment` records (`experiment_version`)."""
        return experiment_version(experiment)

    def count(self) -> int:
        """How many experiments this tool wrote (the reference tool's are not counted)."""
        return count(self._col, ours())

    def get(self, experiment_id: str) -> dict:
        doc = self._col.find_one(ours({"_id": experiment_id}))
        if doc is None:
            if is_foreign_id(self._col, experiment_id):
                message, fix = foreign_refusal("experiment", experiment_id, self.import_hint)
                raise NotFound(message, fix=fix)
            raise NotFound(
                f"no experiment with id {experiment_id!r}",
                fix="run 'llm-sim experiment list' to see the ids",
            )
        return doc

    def list(self, owner: str | None = None) -> list[dict]:
        query = ours({"owner": owner} if owner else {})
        return list(self._col.find(query).sort("created_at", -1))

    def update_note(self, experiment_id: str, actor: str, note: str) -> dict:
        doc = self.require_owner(experiment_id, actor, "update")
        self._col.update_one({"_id": experiment_id}, {"$set": {"note": note, "updated_at": now()}})
        return {**doc, "note": note}

    def delete(self, experiment_id: str, actor: str) -> None:
        self.require_owner(experiment_id, actor, "delete")
        self._col.delete_one(ours({"_id": experiment_id}))

    def require_owner(self, experiment_id: str, actor: str, action: str) -> dict:
        doc = self.get(experiment_id)
        if doc["owner"] != actor:
            raise PermissionRefused(
                f"experiment {experiment_id} belongs to {doc['owner']!r}; only its owner may "
                f"{action} it (you are {actor!r})",
                fix=f"ask {doc['owner']} or duplicate it with 'llm-sim experiment duplicate "
                f"{experiment_id}' and change your copy",
            )
        return doc


def to_model(doc: dict, favourite: bool = False) -> AnyExperiment:
    """Rebuild the validated model of the document's world from a stored document."""
    kind = kind_of(doc)
    data = {"name": doc["name"], "note": doc.get("note", ""), "favourite": favourite, **doc["spec"]}
    return domain_of(kind).from_stored({"kind": kind, **data})
