"""A world added later gets the listings, `conversation show`, the experiment menu, the main
menu's create entry and the transcript by shipping its own parts only (cli/views.py, and
services/runs.py's stored_rows where its rows are not one per step): the house names none."""

from __future__ import annotations

import io
import sys
import types
from types import SimpleNamespace

import pytest
from rich.console import Console

from simulator.cli.interactive.app import main_entries
from simulator.cli.interactive.experiment_menu import entries_for
from simulator.cli.transcript_view import listing_row, show_transcript, unit_rows
from simulator.cli.view_parts import CreateFlow, MenuEntry, views_of
from simulator.services.runs import transcript
from simulator.worlds import WorldRow, register, unregister

PACKAGE = "toy_world_for_views"


def _perform(app, view):
    return None


def _create(app):
    return None


def _module(name: str, **attributes) -> types.ModuleType:
    module = types.ModuleType(name)
    module.__dict__.update(attributes)
    return module


def _show_rows(console, data):
    for row in unit_rows(console, data, "turn"):
        console.print(f"{row['agent']} hums")


@pytest.fixture
def toy(monkeypatch):
    """A world `toy` whose parts are modules made here (no folder under simulator/worlds)."""
    parts = {
        PACKAGE: _module(PACKAGE),
        f"{PACKAGE}.cli": _module(f"{PACKAGE}.cli"),
        f"{PACKAGE}.cli.views": _module(
            f"{PACKAGE}.cli.views",
            CREATE=(CreateFlow("Create toy experiment", _create),),
            RUN_ENTRIES=(MenuEntry("Perform a toy run", _perform),),
            roles_cell=lambda view: "toy: 2 hummers",
            detail=lambda view: [],
            listing_cells=lambda doc: {
                "agents": "2 hummers",
                "messages": f"turn {doc['counters']['messages']}/3",
                "days": "-",
                "speaker": "toy",
            },
            run_line=lambda run: "toy: 2 hummers",
            show_rows=_show_rows,
        ),
        f"{PACKAGE}.services": _module(f"{PACKAGE}.services"),
        f"{PACKAGE}.services.runs": _module(
            f"{PACKAGE}.services.runs",
            stored_rows=lambda store, doc: {"turns": [{"turn": 1, "agent": "Ada"}]},
        ),
    }
    for name, module in parts.items():
        monkeypatch.setitem(sys.modules, name, module)
    register(WorldRow("toy", PACKAGE, "a toy world"))
    yield
    unregister("toy")


RUN = {
    "_id": "conv_toy",
    "kind": "toy",
    "experiment_id": "exp_toy",
    "owner": "alice",
    "status": "done",
    "counters": {"messages": 2},
    "created_at": "2026-01-02T03:04:05Z",
}


def test_a_toy_world_is_listed_and_shown_by_its_views_part(toy):
    row = listing_row(RUN)
    assert (row["agents"], row["messages"], row["speaker"]) == ("2 hummers", "turn 2/3", "toy")
    assert row["id"] == "conv_toy" and row["status"] == "done"
    console = Console(file=io.StringIO(), width=100, color_system=None)
    show_transcript(console, {"conversation": RUN, "turns": [{"turn": 1, "agent": "Ada"}]})
    text = console.file.getvalue()
    assert "conv_toy of exp_toy — done" in text and "toy: 2 hummers" in text
    assert "Turn 1" in text and "Ada hums" in text


def test_a_toy_world_gets_the_experiment_menu_and_a_create_entry(toy):
    labels = [e.label for e in entries_for(SimpleNamespace(kind="toy"))]
    assert labels == [
        "Show",
        "Update (favourite, note)",
        "Export to YAML",
        "Delete",
        "Perform a toy run",
        "Conversations",
    ]
    labels = [e.label for e in main_entries()]  # after the shipped worlds' create entries
    assert labels.index("Create toy experiment") == labels.index("Select experiment") - 1
    assert views_of("toy").roles_cell(None) == "toy: 2 hummers"


def test_a_toy_world_reads_its_rows_through_its_runs_part(toy):
    store = SimpleNamespace(conversations=SimpleNamespace(get=lambda _id: dict(RUN)))
    assert transcript(store, "conv_toy")["turns"] == [{"turn": 1, "agent": "Ada"}]


def test_the_shipped_worlds_keep_their_menus():
    """The entries each shipped world's experiment menu had before the worlds had parts."""
    assert [e.label for e in entries_for(SimpleNamespace(kind="chat"))] == [
        "Show",
        "Duplicate and update",
        "Update (favourite, note)",
        "Export to YAML",
        "Delete",
        "Perform conversation",
        "Perform conversations (sweep)",
        "Conversations",
    ]
    assert [e.label for e in entries_for(SimpleNamespace(kind="grid"))][4] == "Perform a grid run"
    assert [e.label for e in entries_for(SimpleNamespace(kind="network"))][4] == (
        "Perform a network run"
    )
    assert [e.label for e in main_entries()][:3] == [
        "Create experiment",
        "Create 2D grid experiment (Takata et al.)",
        "Select experiment",
    ]
