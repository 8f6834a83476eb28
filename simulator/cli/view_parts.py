"""How the screens show a world's experiments and runs, and what its menus offer.

Each world's `cli/views.py` (the registry's `part(kind, "cli.views")`) is a module with the
names of `WorldViews`; the listings, `experiment show`, `conversation show` and the menus read
them instead of naming a world. What every world shows the same way (an experiment's id, owner
and LLMs, a run's heading and lineage, the Show/Update/Export/Delete entries) stays in the
house; a world gives only what differs, and may leave out the names that have a default here
(`OPTIONAL`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Protocol

from rich.console import Console, RenderableType

from simulator.cli.context import AppContext
from simulator.worlds import kind_of, names, part

if TYPE_CHECKING:  # the experiments' service (and its validation) loads with what uses it
    from simulator.services.experiments import ExperimentView

BACK = "back"
# A handler gets the app and the current view; it returns None to stay on this experiment,
# BACK to leave the menu (e.g. after deleting it), or another experiment id to switch to.
Handler = Callable[[AppContext, "ExperimentView"], str | None]


@dataclass
class MenuEntry:
    """One entry of an experiment's menu."""

    label: str
    handler: Handler
    owner_only: bool = False  # not offered to other users (the service refuses them anyway)
    others_label: str | None = None  # the label other users see, where they may do less

    def label_for(self, owner: bool) -> str:
        return self.label if owner or self.others_label is None else self.others_label


@dataclass(frozen=True)
class CreateFlow:
    """A main-menu entry that creates an experiment of a world by asking questions."""

    label: str
    run: Callable[[AppContext], None]


class WorldViews(Protocol):
    # Main-menu entries creating one of its experiments (default: none; import a YAML file)
    CREATE: tuple[CreateFlow, ...]
    # Entries after Show that change a copy of the experiment (default: none)
    EDIT_ENTRIES: tuple[MenuEntry, ...]
    # Entries before Conversations that perform its runs
    RUN_ENTRIES: tuple[MenuEntry, ...]
    # How a run's progress cell reads in the conversation picker (default: the cell as is)
    PICKER_PROGRESS: str

    def roles_cell(self, view: ExperimentView) -> str:
        """The experiments table's roles column: a chat's roles, a world's size."""

    def detail(self, view: ExperimentView) -> list[RenderableType]:
        """`experiment show` below the common head (id, owner, LLMs, ...)."""

    def listing_cells(self, doc: dict) -> dict[str, str]:
        """A run's `agents`, `messages` (its progress), `days` and `speaker` cells in the
        conversations table."""

    def run_line(self, run: dict) -> str:
        """Rich markup under a run's heading in `conversation show`: its agents or world."""

    def show_rows(self, console: Console, data: dict) -> None:
        """The body of `conversation show`: what `transcript()` read for the run."""


# `rendered(experiment, text) -> (counts, prompts)`: `experiment show --render TEXT`, the
# prompts as the agents TEXT names read them (None: the world has no such rendering)
OPTIONAL = {"CREATE": (), "EDIT_ENTRIES": (), "PICKER_PROGRESS": "{}", "rendered": None}


def views_of(kind: str) -> WorldViews:
    """The world `kind`'s views part (imported on first use)."""
    return part(kind, "cli.views")  # type: ignore[return-value]


def views_for(doc: dict | None) -> WorldViews:
    """The views part of the world of a stored run (or experiment) document."""
    return views_of(kind_of(doc))


def optional(views: WorldViews, name: str):
    """One of the `OPTIONAL` names, or its default where the world leaves it out."""
    return getattr(views, name, OPTIONAL[name])


def create_flows() -> list[CreateFlow]:
    """Every world's create entries, in the registry's order."""
    return [flow for kind in names() for flow in optional(views_of(kind), "CREATE")]
