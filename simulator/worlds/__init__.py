"""The worlds, one folder each, and the one table that lists them.

A world is a package `simulator/worlds/<kind>/` whose subpackages mirror the house's layers
(`domain/`, `prompting/`, `engine/`, `analysis/`, `services/`, `cli/`). The house never names a
world: it asks this registry for the world of a document (`kind_of`) and for one of the world's
parts (`part(kind, "services.runs")`), a module that implements the protocol the house layer
publishes for that part. Parts are imported only when asked for, so the domain stays free of the
upper layers and a command imports only the world it runs.

Adding a world is one folder and one row here. A world shipped in another package joins with
an entry point in the `llm_sim.worlds` group naming its `WorldRow`, or, for one process tree
(a cluster job, a test), with `SIM_WORLDS=package.module:ROW[,...]` in the environment.
"""

from __future__ import annotations

import importlib
import os
from dataclasses import dataclass, field
from functools import cache
from types import ModuleType

from simulator.errors import UserError

DEFAULT_KIND = "chat"  # a document without `kind` (every experiment stored before the worlds)


@dataclass(frozen=True)
class WorldRow:
    name: str  # the `kind:` of its experiments, specs, runs and sweeps
    package: str  # where its folder lives, e.g. "simulator.worlds.grid"
    description: str  # what a user reads in `kind:` errors and the menus
    stored_names: tuple[str, ...] = field(default=())  # older names in stored documents


_ROWS: dict[str, WorldRow] = {
    row.name: row
    for row in (
        WorldRow("chat", "simulator.worlds.chat", "a group chat", stored_names=("conversation",)),
        WorldRow("grid", "simulator.worlds.grid", "a 2D community on a grid"),
        WorldRow("network", "simulator.worlds.network", "an opinion network"),
    )
}
_plugins_loaded = False


def register(row: WorldRow) -> None:
    """Add a world (a plugin, or a toy world in a test); a name already taken is refused."""
    if row.name in _ROWS and _ROWS[row.name] != row:
        raise ValueError(f"a world named {row.name!r} is already registered")
    _ROWS[row.name] = row
    part.cache_clear()


def unregister(name: str) -> None:
    """Remove a world added with `register` (tests restore the registry with it)."""
    _ROWS.pop(name, None)
    part.cache_clear()


def _load_plugins() -> None:
    """Worlds other packages ship: `llm_sim.worlds` entry points and SIM_WORLDS (read once)."""
    global _plugins_loaded
    if _plugins_loaded:
        return
    _plugins_loaded = True
    from importlib.metadata import entry_points

    found = [point.load() for point in entry_points(group="llm_sim.worlds")]
    for named in filter(None, os.environ.get("SIM_WORLDS", "").split(",")):
        found.append(_named_row(named.strip()))
    for given in found:
        if isinstance(given, WorldRow) and given.name not in _ROWS:
            _ROWS[given.name] = given


def _named_row(named: str) -> object:
    """`package.module:ROW` from SIM_WORLDS; a wrong name is a UserError naming the variable."""
    module, _, attribute = named.partition(":")
    try:
        return getattr(importlib.import_module(module), attribute or "ROW")
    except (ImportError, AttributeError) as exc:
        raise UserError(
            f"SIM_WORLDS names {named!r}, which cannot be loaded ({exc})",
            field="SIM_WORLDS",
            fix="give package.module:ROW of an importable module defining a WorldRow, or unset it",
        ) from None


def rows() -> tuple[WorldRow, ...]:
    """Every world, the built-in ones first."""
    _load_plugins()
    return tuple(_ROWS.values())


def names() -> tuple[str, ...]:
    return tuple(row.name for row in rows())


def row(kind: str) -> WorldRow:
    """The world named `kind`; an unknown name is a UserError listing the known ones."""
    _load_plugins()
    if kind in _ROWS:
        return _ROWS[kind]
    for candidate in _ROWS.values():
        if kind in candidate.stored_names:
            return candidate
    known = ", ".join(f"'{r.name}' ({r.description})" for r in _ROWS.values())
    raise UserError(
        f"kind {kind!r} is not a world this tool knows",
        field="kind",
        fix=f"write one of {known}; a file without kind is a group chat",
    )


def kind_of(document: dict | None) -> str:
    """The world of a stored or written document (experiment, spec, run, sweep): its `kind`,
    or the group chat when it has none (documents from before the worlds)."""
    given = (document or {}).get("kind") or DEFAULT_KIND
    return row(str(given)).name


def is_kind(document: dict | None, kind: str) -> bool:
    return kind_of(document) == kind


@cache
def part(kind: str, name: str) -> ModuleType:
    """The module `<world package>.<name>` (e.g. "services.runs"): the world's implementation
    of the house's protocol for that part. Imported on first use."""
    return importlib.import_module(f"{row(kind).package}.{name}")


def has_part(kind: str, name: str) -> bool:
    """Whether the world ships the part (optional parts, e.g. a report section)."""
    try:
        part(kind, name)
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith(row(kind).package):
            return False
        raise
    return True
