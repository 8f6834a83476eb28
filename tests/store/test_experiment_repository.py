"""The repository suite, run against mongomock, the embedded store and a wire server over TCP."""

from __future__ import annotations

import pytest

from simulator.domain.yaml_io import load_model
from simulator.errors import NotFound, PermissionRefused
from simulator.services import experiments as service
from simulator.store.migrations import SCHEMA_VERSION, current_version
from simulator.worlds.chat.domain.experiment import Experiment


@pytest.fixture
def prison(prison_path) -> Experiment:
    return load_model(prison_path, Experiment, "experiment")


def test_create_get_roundtrip_keeps_every_field(store, prison):
    view = service.create(store, prison, "alice")
    again = service.get(store, view.id, "alice")
    assert again.experiment == prison
    assert again.owner == "alice"
    assert view.id.startswith("exp_") and len(view.id) == 10
    doc = store.db.experiments.find_one({"_id": view.id})
    assert doc["schema_version"] == 1
    assert doc["created_at"].microsecond % 1000 == 0 and doc["created_at"].tzinfo is None


def test_indexes_and_migrations_at_open(store):
    assert current_version(store.db) == SCHEMA_VERSION
    names = {
        tuple(spec["key"]) if isinstance(spec["key"], list) else None
        for spec in store.db.favourites.index_information().values()
    }
    assert (("user", 1), ("kind", 1)) in {tuple(tuple(k) for k in key) for key in names if key}


def test_list_orders_favourites_first_then_newest(store, prison):
    first = service.create(store, prison, "alice")
    second = service.create(store, prison.model_copy(update={"name": "Second"}), "alice")
    third = service.create(store, prison.model_copy(update={"name": "Third"}), "bob")
    service.update(store, first.id, "alice", favourite=True)
    order = [v.id for v in service.list_views(store, "alice")]
    assert order[0] == first.id
    assert set(order[1:]) == {second.id, third.id}
    assert next(v.id for v in service.list_views(store, "alice", mine=True)) == first.id
    assert [v.id for v in service.list_views(store, "alice", favourites=True)] == [first.id]
    # favourites are per user
    assert service.list_views(store, "bob", favourites=True) == []


def test_only_owner_may_change_or_delete(store, prison):
    view = service.create(store, prison, "alice")
    with pytest.raises(PermissionRefused, match="belongs to 'alice'"):
        service.delete(store, view.id, "bob")
    with pytest.raises(PermissionRefused, match="alice"):
        service.update(store, view.id, "bob", note="mine now")
    assert service.get(store, view.id, "bob").experiment.note == prison.note
    copy = service.duplicate(store, view.id, "bob")
    assert copy.owner == "bob" and copy.duplicated_from == view.id
    assert copy.experiment.roles == prison.roles
    service.delete(store, copy.id, "bob")
    service.delete(store, view.id, "alice")
    with pytest.raises(NotFound):
        service.get(store, view.id, "alice")


def test_yaml_export_reimport_is_identical(store, prison_path):
    view = service.import_yaml(store, prison_path, "alice")
    exported = service.export_yaml(store, view.id, "alice")
    assert exported == prison_path.read_text(encoding="utf-8")
    tmp = prison_path.parent  # re-import from text via a temp file
    del tmp
    again = service.create(store, load_model_from_text(exported), "alice")
    assert service.export_yaml(store, again.id, "alice") == exported


def load_model_from_text(text: str) -> Experiment:
    import yaml

    return Experiment.model_validate(yaml.safe_load(text))


def test_version_ignores_name_and_note_but_not_prompts(store, prison):
    a = service.create(store, prison, "alice")
    b = service.create(store, prison.model_copy(update={"name": "Other", "note": "x"}), "alice")
    changed = prison.model_copy(update={"starting_message": "Start."})
    c = service.create(store, changed, "alice")
    assert a.version == b.version != c.version
