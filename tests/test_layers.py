"""Imports go one way: cli -> services -> engine, analysis -> llm, prompting, store -> domain.

Every module under simulator/ is parsed with `ast` (nothing is imported), and each `import` or
`from … import` naming a simulator module is checked, wherever it stands: at the top, inside a
function, under `if TYPE_CHECKING:`. A module may import its own layer and the layers below,
never one above. The layers, lowest first:

  0  `simulator` (the package root: `__version__`) and `simulator.errors` (the exception types
     every layer raises; it imports nothing)
  1  `simulator.domain`: validated models and pure helpers (clock, ids, vocabulary)
  2  `simulator.settings`, `simulator.logs`, `simulator.identity`: the process's environment
     (env vars and `.env`, config and data folders, log folders, who is acting); the store, the
     backends and the recorder read it, so it sits under them
  3  `simulator.llm` (backends, retries, pools, LLMAccess), `simulator.prompting` (pure prompt
     assembly), `simulator.store` (the only code that talks to the database), and
     `simulator.testing` (the loopback stand-in for model servers, beside the backends)
  4  `simulator.engine` (the step loop, the recorder, the sweep runner) and
     `simulator.analysis` (exports, measures, scorers, report); these two are siblings that
     never import each other (they receive what they need through ports). The engine reaches
     the store only through its ports (engine/ports.py: `Recorder`, `Leases`): no engine module
     imports `simulator.store` but the recorder on the store (engine/recorder.py, in ALLOWED)
  5  `simulator.services`: the operations commands and menus share
  6  `simulator.cli`: click commands, questionary menus, rich display

A world's folder (`simulator/worlds/<kind>/`) and the memory package (`simulator/memory/`) hold
the same layers as subpackages (`domain/`, `prompting/`, `engine/`, `analysis/`, `services/`,
`cli/`), each ranked as its house layer; the registry (`simulator/worlds/__init__.py`) and a
world folder's own `__init__` are domain.

A new top-level module or package must be given a layer here (the test fails until it is).
ALLOWED lists the imports that break the rule today, each with why and what removes it; an entry
no import needs any more fails too, so the list only shrinks.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "simulator"

LAYERS = {
    "simulator": 0,
    "simulator.errors": 0,
    "simulator.domain": 1,
    "simulator.settings": 2,
    "simulator.logs": 2,
    "simulator.identity": 2,
    "simulator.llm": 3,
    "simulator.prompting": 3,
    "simulator.store": 3,
    "simulator.testing": 3,
    "simulator.engine": 4,
    "simulator.analysis": 4,
    "simulator.services": 5,
    "simulator.cli": 6,
}
# same layer, still forbidden: importer prefix -> imported prefix
SIBLINGS_APART = {
    ("simulator.analysis", "simulator.engine"),
    ("simulator.engine", "simulator.analysis"),
}
# a lower layer, still forbidden: the importer uses its ports instead (importer -> imported);
# a world's and the memory package's engine modules count as `simulator.engine`
THROUGH_PORTS = {
    ("simulator.engine", "simulator.store"),
}

# (module file relative to the repository, imported package) -> why it is allowed for now
ALLOWED = {
    # validate_placeholders is pure grammar (inflect + domain.verbs); removed when the
    # placeholder grammar moves into domain (experiment.py was mid-edit for the grid world)
    (
        "simulator/worlds/chat/domain/experiment.py",
        "simulator.prompting",
    ): "Experiment's validator checks placeholders with prompting.placeholders",
    # the implementation of the engine's Recorder port (engine/ports.py) on the store: the
    # worlds' runs, the step loop and the memory keeper are handed it and use only the port
    ("simulator/engine/recorder.py", "simulator.store"): "StoreRecorder is the engine's "
    "Recorder on the store",
}


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def owner(name: str) -> str | None:
    """The LAYERS key a dotted module name belongs to (the longest matching prefix). A world's
    folder and the memory package mirror the house: `simulator.worlds.grid.engine.run` sits in
    the engine layer, `simulator.memory.domain.stream` in the domain layer."""
    name = house_name(name)
    best = None
    for key in LAYERS:
        if (name == key or name.startswith(key + ".")) and (best is None or len(key) > len(best)):
            best = key
    return best


def house_name(name: str) -> str:
    """`simulator.worlds.<kind>.<layer>…` and `simulator.memory.<layer>…` as the house module
    of that layer (`simulator.<layer>…`); the registry itself (`simulator.worlds`, and a world
    folder's own `__init__`) is domain."""
    parts = name.split(".")
    if parts[:2] == ["simulator", "worlds"]:
        rest = parts[3:]
    elif parts[:2] == ["simulator", "memory"]:
        rest = parts[2:]
    else:
        return name
    return "simulator." + ".".join(rest) if rest else "simulator.domain"


def imported_names(tree: ast.AST, module: str, is_package: bool) -> list[tuple[int, str]]:
    """(line, dotted module) for every simulator import in the tree, at any depth."""
    found: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [
                (node.lineno, a.name) for a in node.names if a.name.split(".")[0] == "simulator"
            ]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:  # relative: resolve against this module's package
                package = module.split(".") if is_package else module.split(".")[:-1]
                package = package[: len(package) - (node.level - 1)]
                base = ".".join(package + ([base] if base else []))
            if base.split(".")[0] != "simulator":
                continue
            if base == "simulator":  # `from simulator import settings` names a module
                found += [(node.lineno, f"simulator.{a.name}") for a in node.names]
            else:
                found.append((node.lineno, base))
    return found


def violations(relative: str, module: str, source: str, is_package: bool = False) -> list[str]:
    """Each import of `source` (module `module`, file `relative`) that goes up a layer or
    crosses between siblings kept apart, as 'file:line module -> imported'."""
    here = owner(module)
    assert here is not None, f"{relative}: no layer for {module}; add it to LAYERS"
    found = []
    for line, name in imported_names(ast.parse(source), module, is_package):
        there = owner(name) or "simulator"  # e.g. `from simulator import __version__`
        upward = LAYERS[there] > LAYERS[here]
        apart = (here, there) in SIBLINGS_APART or (here, there) in THROUGH_PORTS
        if (upward or apart) and (relative, there) not in ALLOWED:
            found.append(f"{relative}:{line} {module} -> {name}")
    return found


def modules() -> list[tuple[str, str, Path]]:
    root = PACKAGE.parent
    return [
        (p.relative_to(root).as_posix(), module_name(p), p)
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    ]


def test_every_module_has_a_layer():
    unknown = [rel for rel, name, _ in modules() if owner(name) is None]
    assert not unknown, f"give these a layer in LAYERS: {unknown}"


def test_no_module_imports_a_higher_layer():
    found = []
    for relative, module, path in modules():
        found += violations(relative, module, path.read_text(), path.name == "__init__.py")
    assert not found, "imports against the layering:\n" + "\n".join(found)


def test_every_allowed_import_is_still_there():
    needed = set()
    for relative, module, path in modules():
        tree = ast.parse(path.read_text())
        for _, name in imported_names(tree, module, path.name == "__init__.py"):
            needed.add((relative, owner(name) or "simulator"))
    stale = sorted(key for key in ALLOWED if key not in needed)
    assert not stale, f"no import needs these ALLOWED entries any more; remove them: {stale}"


@pytest.mark.parametrize(
    ("relative", "module", "source", "expected"),
    [
        (  # inside a function counts
            "simulator/analysis/x.py",
            "simulator.analysis.x",
            "def f():\n    from simulator.services import sweeps\n",
            ["simulator/analysis/x.py:2 simulator.analysis.x -> simulator.services"],
        ),
        (  # siblings kept apart
            "simulator/analysis/x.py",
            "simulator.analysis.x",
            "import simulator.engine.recorder\n",
            ["simulator/analysis/x.py:1 simulator.analysis.x -> simulator.engine.recorder"],
        ),
        (  # `from simulator import cli` names the cli package
            "simulator/domain/x.py",
            "simulator.domain.x",
            "from simulator import cli\n",
            ["simulator/domain/x.py:1 simulator.domain.x -> simulator.cli"],
        ),
        (  # relative imports resolve against the package
            "simulator/store/x.py",
            "simulator.store.x",
            "from ..engine import recorder\n",
            ["simulator/store/x.py:1 simulator.store.x -> simulator.engine"],
        ),
        (  # the engine, a world's included, reaches the store through its ports
            "simulator/worlds/grid/engine/x.py",
            "simulator.worlds.grid.engine.x",
            "from simulator.store.store import Store\n",
            [
                "simulator/worlds/grid/engine/x.py:1 simulator.worlds.grid.engine.x -> "
                "simulator.store.store"
            ],
        ),
        (  # down and sideways are fine
            "simulator/store/x.py",
            "simulator.store.x",
            "from simulator.domain.clock import now\nfrom simulator.prompting import bleed\n",
            [],
        ),
    ],
)
def test_checker_sees_every_form(relative, module, source, expected):
    assert violations(relative, module, source) == expected
