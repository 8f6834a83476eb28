"""Experiment operations shared by the commands and the interactive menus."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from simulator.domain.clock import as_datetime
from simulator.domain.world import domain_of, experiment_kind
from simulator.domain.yaml_io import dump_yaml, validate_model
from simulator.domain.yaml_reading import read_yaml_file
from simulator.errors import UserError
from simulator.services.conversation_listing import foreign_note as foreign_note
from simulator.store import cascade
from simulator.store.repositories.experiments import AnyExperiment, to_model
from simulator.worlds import DEFAULT_KIND, row, rows

if TYPE_CHECKING:  # the store's code loads when a command opens it
    from simulator.store.store import Store

KIND = "experiment"


@dataclass
class ExperimentView:
    """An experiment as one user sees it: content, plus owner, times and their favourite flag."""

    id: str
    owner: str
    experiment: AnyExperiment
    created_at: object
    updated_at: object
    duplicated_from: str | None
    version: str

    @property
    def kind(self) -> str:
        """The experiment's world (simulator/worlds: "chat", "grid", "network", ...)."""
        return experiment_kind(self.experiment)

    def summary(self) -> dict:
        return {
            "id": self.id,
            "kind": self.kind,
            "name": self.experiment.name,
            "owner": self.owner,
            "note": self.experiment.note,
            "favourite": self.experiment.favourite,
            "roles": [r.name for r in getattr(self.experiment, "roles", [])],
            "llms": [llm.model for llm in self.experiment.llms],
            "created_at": _iso(self.created_at),
            "updated_at": _iso(self.updated_at),
            "duplicated_from": self.duplicated_from,
            "version": self.version,
        }

    def to_json(self) -> dict:
        return {
            **self.summary(),
            "experiment": self.experiment.model_dump(mode="json", exclude_none=True),
        }


def _iso(moment: object) -> str | None:
    return moment.isoformat(timespec="milliseconds") + "Z" if moment else None


def _view(store: Store, doc: dict, user: str) -> ExperimentView:
    favourite = store.users.is_favourite(user, KIND, doc["_id"])
    return ExperimentView(
        id=doc["_id"],
        owner=doc["owner"],
        experiment=to_model(doc, favourite),
        created_at=as_datetime(doc["created_at"]),
        updated_at=as_datetime(doc["updated_at"]),
        duplicated_from=doc.get("duplicated_from"),
        version=doc["version"],
    )


def create(
    store: Store,
    experiment: AnyExperiment,
    user: str,
    duplicated_from: str | None = None,
) -> ExperimentView:
    store.users.ensure(user)
    doc = store.experiments.create(experiment, user, duplicated_from)
    if experiment.favourite:
        store.users.set_favourite(user, KIND, doc["_id"], True)
    return _view(store, doc, user)


def load_file(path: str | Path) -> AnyExperiment:
    """Read and validate an experiment file whole; touches no store. `kind:` at the top names
    its world (`kind: grid`); without `kind` it is a group chat. What the experiment names (a
    network's agents table and graphs) is read too, relative to the file's folder."""
    data, marks = read_yaml_file(path)
    if not isinstance(data, dict):
        raise UserError(
            f"{path}: expected a mapping of experiment fields at the top level, found "
            f"{type(data).__name__}",
            fix="start the file with the experiment's fields, e.g. 'name: ...'",
        )
    experiment = validate_data(data, source=str(path), marks=marks)
    world = domain_of(experiment_kind(experiment))
    return world.after_load(experiment, Path(path).parent, str(path), marks)


def validate_data(
    data: dict, source: str | None = None, marks: dict | None = None
) -> AnyExperiment:
    """An experiment of the world `data` names (`kind: grid`, or a chat without `kind`)."""
    kind = data.get("kind")
    if kind is not None and (not isinstance(kind, str) or kind not in _kinds()):
        raise UserError(
            f"kind {kind!r} is not an experiment kind",
            field="kind",
            fix="write "
            + ", ".join(
                f"'kind: {r.name}' for {r.description}" for r in rows() if r.name != DEFAULT_KIND
            )
            + f", or leave kind out for {row(DEFAULT_KIND).description}",
        )
    world = domain_of(kind or DEFAULT_KIND)
    if kind == DEFAULT_KIND and "kind" not in world.Experiment.model_fields:
        data = {k: v for k, v in data.items() if k != "kind"}
    return validate_model(data, world.Experiment, "experiment", source=source, marks=marks)


def _kinds() -> set[str]:
    return {r.name for r in rows()}


def import_yaml(store: Store, path: str | Path, user: str) -> ExperimentView:
    """Validate the whole file first; only a valid experiment is written."""
    return create(store, load_file(path), user)


def get(store: Store, experiment_id: str, user: str) -> ExperimentView:
    return _view(store, store.experiments.get(experiment_id), user)


def list_views(
    store: Store, user: str, mine: bool = False, favourites: bool = False
) -> list[ExperimentView]:
    """Favourites first, then newest first."""
    docs = store.experiments.list(owner=user if mine else None)
    starred = store.users.favourites(user, KIND)
    if favourites:
        docs = [d for d in docs if d["_id"] in starred]
    docs.sort(key=lambda d: (d["_id"] not in starred, -as_datetime(d["created_at"]).timestamp()))
    views = []
    for doc in docs:
        views.append(
            ExperimentView(
                doc["_id"],
                doc["owner"],
                to_model(doc, doc["_id"] in starred),
                as_datetime(doc["created_at"]),
                as_datetime(doc["updated_at"]),
                doc.get("duplicated_from"),
                doc["version"],
            )
        )
    return views


def export_yaml(store: Store, experiment_id: str, user: str) -> str:
    view = get(store, experiment_id, user)
    return dump_yaml(view.experiment.model_dump(mode="json", exclude_none=True))


def duplicate(
    store: Store,
    experiment_id: str,
    user: str,
    name: str | None = None,
    changes: dict | None = None,
) -> ExperimentView:
    """Anyone may duplicate; the copy belongs to `user` and remembers where it came from."""
    if name is not None and not name.strip():
        raise UserError(
            "the name of the copy is empty",
            field="--name",
            fix="give the copy a visible name, or leave --name out to name it "
            "'NAME (copy)' after the original",
        )
    source = get(store, experiment_id, user)
    data = source.experiment.model_dump(mode="json")
    data["favourite"] = False
    data["name"] = name or f"{source.experiment.name} (copy)"
    data.update(changes or {})
    experiment = validate_data(data)
    return create(store, experiment, user, duplicated_from=experiment_id)


def update(
    store: Store,
    experiment_id: str,
    user: str,
    note: str | None = None,
    favourite: bool | None = None,
) -> ExperimentView:
    """The note is the owner's; the favourite flag is each user's own, so anyone may set theirs."""
    if note is not None:
        if len(note) > 2000:
            raise UserError(
                "the note is longer than 2000 characters", field="note", fix="shorten it"
            )
        store.experiments.update_note(experiment_id, user, note)
    else:
        store.experiments.get(experiment_id)
    if favourite is not None:
        store.users.ensure(user)
        store.users.set_favourite(user, KIND, experiment_id, favourite)
    return get(store, experiment_id, user)


def deletion_counts(store: Store, experiment_id: str, user: str) -> cascade.Cascade:
    """What deleting this experiment would remove; refused unless `user` owns it."""
    store.experiments.require_owner(experiment_id, user, "delete")
    return cascade.count_experiment(store.db, experiment_id, user)


def delete_question(view: ExperimentView, counts: cascade.Cascade) -> str:
    """'Delete exp_1 (Prison) with 12 conversations, 240 messages, 300 calls and 4 scores?'"""
    listed = counts.phrase()
    return f"Delete {view.id} ({view.experiment.name}){f' with {listed}' if listed else ''}?"


def deleted_message(experiment_id: str, counts: cascade.Cascade) -> str:
    listed = counts.phrase()
    return f"Deleted {experiment_id}{f' with {listed}' if listed else ''}."


def delete(store: Store, experiment_id: str, user: str) -> cascade.Cascade:
    """Delete an experiment the user owns with its conversations (whoever ran them, as the
    reference tool did), their messages, calls, summaries and scores, its sweeps and the stored
    prompts nothing uses any more. Returns what was removed."""
    counts = deletion_counts(store, experiment_id, user)
    cascade.delete_experiment(store.db, experiment_id)
    return counts
