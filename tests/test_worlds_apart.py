"""The house never names a world: the registry (simulator/worlds/__init__.py) is the only place
that lists them, and a world's code stays in its folder.

Every module is parsed with `ast` (nothing is imported). Outside `simulator/worlds/<kind>/`:
- no comparison of a kind with a world's name (`kind == "grid"`, `doc["kind"] in ("chat",
  "network")`) and no mapping keyed by world names: the house asks the world's part instead
  (a memory record's type "chat" is no world);
- no import of a world's folder, except the group chat's by the modules of CHAT_FEATURES (each
  with why), which serve the chat alone; an entry no import needs any more fails, so the list
  only shrinks.
And no world imports another world's folder.
"""

from __future__ import annotations

import ast
from pathlib import Path

from simulator.worlds import names

PACKAGE = Path(__file__).resolve().parents[1] / "simulator"
WORLDS = PACKAGE / "worlds"

# house modules that serve the group chat alone (they import its folder): why each is the chat's
CHAT_FEATURES = {
    "simulator/services/sweeps.py": "the chat's sweep service beside the plan every world's "
    "sweep shares",
    "simulator/services/table_import.py": "imports the prison paper's labelled chats",
    "simulator/domain/reference_experiment.py": "reads the reference tool's chat experiments",
    "simulator/domain/reference_conversation.py": "reads the reference tool's chat conversations",
    "simulator/domain/sweep_names.py": "names in a chat sweep: roles and their LLMs",
    "simulator/cli/commands/demo.py": "the demo runs the prison chat",
    "simulator/analysis/scorers/judge.py": "the prison-goal judge reads a chat's roles",
    "simulator/analysis/tables.py": "the chat's tables of a sweep's cells and messages",
}


def house_modules() -> list[tuple[str, ast.AST]]:
    return [
        (path.relative_to(PACKAGE.parent).as_posix(), ast.parse(path.read_text()))
        for path in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in path.parts and WORLDS not in path.parents
    ]


def world_of(path: Path) -> str | None:
    rest = path.relative_to(WORLDS).parts if WORLDS in path.parents else ()
    return rest[0] if len(rest) > 1 else None


def imported(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.append((node.lineno, node.module))
            found += [(node.lineno, f"{node.module}.{a.name}") for a in node.names]
        elif isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
    return found


def world_named(module: str) -> str | None:
    """The world whose folder `module` is in (`simulator.worlds.grid.engine.run` -> grid);
    None for the registry's own names (`simulator.worlds.kind_of`) and the house."""
    parts = module.split(".")
    if parts[:2] == ["simulator", "worlds"] and len(parts) > 2 and parts[2] in names():
        return parts[2]
    return None


def named_worlds(tree: ast.AST) -> list[int]:
    """Lines where code compares with a world's name or keys a mapping by world names."""
    kinds = set(names())

    def is_world(node: ast.AST) -> bool:
        if isinstance(node, ast.Constant):
            return node.value in kinds
        if isinstance(node, ast.Tuple | ast.List | ast.Set):
            return any(is_world(e) for e in node.elts)
        return False

    def about_kind(node: ast.AST) -> bool:  # `kind`, `doc["kind"]`, `view.kind`, `kind_of(d)`
        return "kind" in ast.unparse(node)

    lines = []
    for node in ast.walk(tree):
        sides = [node.left, *node.comparators] if isinstance(node, ast.Compare) else []
        compared = any(is_world(c) for c in sides) and any(about_kind(c) for c in sides)
        keyed = isinstance(node, ast.Dict) and sum(is_world(k) for k in node.keys if k) >= 2
        if compared or keyed:
            lines.append(node.lineno)
    return lines


def test_the_house_compares_with_no_world_name():
    found = [
        f"{relative}:{line}" for relative, tree in house_modules() for line in named_worlds(tree)
    ]
    assert not found, "ask the world's part instead of naming the world:\n" + "\n".join(found)


def test_the_house_imports_a_world_only_for_the_chats_own_features():
    found, needed = [], set()
    for relative, tree in house_modules():
        for line, module in imported(tree):
            if world_named(module) is None:
                continue
            if module.startswith("simulator.worlds.chat") and relative in CHAT_FEATURES:
                needed.add(relative)
                continue
            found.append(f"{relative}:{line} -> {module}")
    assert not found, "reach a world through simulator.worlds.part:\n" + "\n".join(found)
    stale = sorted(set(CHAT_FEATURES) - needed)
    assert not stale, f"no longer imports the chat; remove from CHAT_FEATURES: {stale}"


def test_no_world_imports_another():
    found = []
    for path in sorted(WORLDS.rglob("*.py")):
        own = world_of(path)
        if own is None or "__pycache__" in path.parts:
            continue
        for line, module in imported(ast.parse(path.read_text())):
            if world_named(module) not in (None, own):
                found.append(f"{path.relative_to(PACKAGE.parent)}:{line} -> {module}")
    assert not found, "a world's code stays in its folder:\n" + "\n".join(found)


def test_the_checks_see_a_comparison_and_a_table():
    source = 'x = kind == "grid"\nT = {"grid": 1, "network": 2}\ny = doc["kind"] in ("chat",)\n'
    assert named_worlds(ast.parse(source)) == [1, 2, 3]
    fine = 'z = kind == "sweep"\nT = {"grid": 1}\nr = record.type == "chat"\n'
    assert named_worlds(ast.parse(fine)) == []
    assert world_named("simulator.worlds.grid.engine.run") == "grid"
    assert world_named("simulator.worlds.kind_of") is None
