"""The files a network experiment file names, checked when the file is read.

An experiment names its agents table, its scenario and its graph files by path; a run reads
them. Checking them only at run time accepted an experiment that could never run, so reading an
experiment file also reads each named file (it exists and parses, the table has a row per graph
node, the free-chat rounds are among the rounds). A relative path is read from the experiment
file's folder and stored absolute, so a run finds the same file from any working folder.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import yaml

from simulator.errors import UserError
from simulator.worlds.network.domain.agents_table import read_agents
from simulator.worlds.network.domain.experiment import (
    SYNTHETIC_TABLE,
    NetworkExperiment,
    check_free_chat,
)
from simulator.worlds.network.domain.graphs import build_graphs
from simulator.worlds.network.domain.llm_sam_files import is_llm_sam_dir
from simulator.worlds.network.domain.scenario import SCENARIOS_DIR, load_scenario

SYNTHETIC_PATH = SCENARIOS_DIR / "agents_synthetic.csv"
T = TypeVar("T")


def check_experiment_files(
    experiment: NetworkExperiment,
    base_dir: Path,
    source: str,
    marks: dict[tuple, yaml.Mark] | None = None,
) -> NetworkExperiment:
    """The experiment with its relative paths made absolute (from `base_dir`, the experiment
    file's folder), once every file it names has been read; else one UserError that names the
    experiment file, the line of the field and the problem in the named file."""
    marks = marks or {}
    network = experiment.network
    named: list[tuple[str, str, Path]] = []  # (field, as written, absolute)
    agents = network.agents
    if agents != SYNTHETIC_TABLE:
        named.append(("agents", agents, _absolute(agents, base_dir)))
        agents = str(named[-1][2])
    scenario = network.scenario
    if _is_path(scenario):
        named.append(("scenario", scenario, _absolute(scenario, base_dir)))
        scenario = str(named[-1][2])
    graph = _graph_paths(network.graph, base_dir, named)
    settings = network.model_copy(update={"agents": agents, "scenario": scenario, "graph": graph})

    def checked(key: str, read: Callable[[], T]) -> T:
        try:
            return read()
        except UserError as exc:
            raise _in_file(exc, key, source, marks) from None

    for key, written, path in named:
        if key == "scenario" and is_llm_sam_dir(path):
            continue  # the reference's own prompt directory: read by load_scenario below
        if not path.is_file():
            problem = "is a folder" if path.is_dir() else "does not exist"
            raise _in_file(
                UserError(
                    f"{written!r} names {path}, which {problem}",
                    fix=f"a relative path is read from the experiment file's folder "
                    f"({base_dir.absolute()}); give the file's path from there, or an absolute "
                    "path",
                ),
                key,
                source,
                marks,
            )

    graphs = checked("graph", lambda: build_graphs(settings.graph))
    rows = checked(
        "agents", lambda: read_agents(SYNTHETIC_PATH if agents == SYNTHETIC_TABLE else agents)
    )
    nodes = graphs[0].number_of_nodes()
    if len(rows) < nodes:
        raise _in_file(
            UserError(
                f"the agents table has {len(rows)} rows and the graph {nodes} nodes",
                fix="give a table with a row per node, or a smaller graph",
            ),
            "agents",
            source,
            marks,
        )
    checked("scenario", lambda: load_scenario(scenario))
    checked("free_chat", lambda: check_free_chat(settings))
    return experiment.model_copy(update={"network": settings})


def _is_path(scenario: str) -> bool:
    """A scenario is a shipped name (`costly_purchase`) or a path (as `scenario_path` reads it)."""
    return "/" in scenario or "\\" in scenario or scenario.endswith((".yaml", ".yml"))


def _absolute(name: str, base_dir: Path) -> Path:
    path = Path(name).expanduser()
    return path if path.is_absolute() else (base_dir / path).absolute()


def _graph_paths(spec: Any, base_dir: Path, named: list[tuple[str, str, Path]]) -> Any:
    """A graph spec (plain data) with each `type: file` path made absolute (and added to
    `named`); the rest as given."""
    if isinstance(spec, list):
        return [_graph_paths(item, base_dir, named) for item in spec]
    if not isinstance(spec, dict):
        return spec
    out = {key: _graph_paths(value, base_dir, named) for key, value in spec.items()}
    if spec.get("type") == "file" and isinstance(spec.get("path"), str):
        path = _absolute(spec["path"], base_dir)
        named.append(("graph", spec["path"], path))
        out["path"] = str(path)
    return out


def _in_file(exc: UserError, key: str, source: str, marks: dict[tuple, yaml.Mark]) -> UserError:
    """A problem in a named file, said from the experiment file: its place and field first."""
    mark = marks.get(("network", key)) or marks.get(("network",))
    where = f"{source}, line {mark.line + 1}, column {mark.column + 1}" if mark else source
    field = f"network.{key}"
    if key == "graph" and exc.field and exc.field.startswith("network."):
        # the graph code names its fields from the spec (`network.snapshots[1].path`), which an
        # experiment holds under `network.graph`
        field = "network.graph." + exc.field.removeprefix("network.")
    return UserError(f"{where}: {field}: {exc.message}", fix=exc.fix)
