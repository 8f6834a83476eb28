"""Networks read from files: CSV edge lists and adjacency matrices, NumPy `.npy` matrices.

Every error names the file, the line where there is one, and the spec field it came from, so a
user can fix a thousand-line edge list without guessing. Nodes are numbered 0..n-1.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TYPE_CHECKING, Any

from simulator.errors import UserError
from simulator.worlds.network.domain.csv_text import csv_problem, read_csv_text

if TYPE_CHECKING:  # networkx loads when graphs are built: the world's flags need none
    import networkx as nx

MAX_NODES = 10_000
MAX_GRAPH_FILE_BYTES = 50_000_000


def read_graph_file(
    name: str, fmt: str, n: int | None, base_dir: Path | None, where: str
) -> list[nx.Graph]:
    """The graphs in a file (one, or one per slice of a 3-D `.npy`); `where` names the spec
    in errors (`network.snapshots[2]`)."""
    path = Path(name).expanduser()
    if not path.is_absolute() and base_dir is not None:
        path = base_dir / path
    field = f"{where}.path"
    if not path.is_file():
        raise UserError(
            f"no file at {path}.", field=field, fix="give the path of an edge list or matrix"
        )
    if path.stat().st_size > MAX_GRAPH_FILE_BYTES:
        raise UserError(
            f"{path} is over {MAX_GRAPH_FILE_BYTES // 1_000_000} MB.",
            field=field,
            fix="give a smaller network",
        )
    graphs = (
        _from_npy(path, field)
        if path.suffix.lower() == ".npy"
        else [_from_csv(path, fmt, n, field)]
    )
    for graph in graphs:
        if n is not None and graph.number_of_nodes() != n:
            raise UserError(
                f"{path} has {graph.number_of_nodes()} nodes but n = {n}.",
                field=f"{where}.n",
                fix="make n match the file, or leave it out",
            )
    return graphs


def _from_csv(path: Path, fmt: str, n: int | None, field: str) -> nx.Graph:
    """Auto format: a square table of 0s and 1s (3 x 3 or larger) is a matrix, anything else
    an edge list; say `format:` when a file could be read either way."""
    rows = _csv_rows(path, field)
    if not rows:
        raise UserError(f"{path} holds no rows.", field=field, fix="write one edge per line")
    if fmt == "auto":
        square = len(rows) > 2 and all(len(r) == len(rows) for _, r in rows)
        binary = all(v in ("0", "1") for _, r in rows for v in r)
        fmt = "adjacency" if square and binary else "edge_list"
    if fmt == "adjacency":
        matrix = [[_number(v, path, line, field) for v in row] for line, row in rows]
        return _from_matrix(matrix, f"{path}", field)
    return _from_edges(rows, n, path, field)


def _csv_rows(path: Path, field: str) -> list[tuple[int, list[str]]]:
    """(line number, stripped fields) of each non-empty row; `#` lines are comments."""
    out = []
    reader = csv.reader(io.StringIO(read_csv_text(path, field), newline=""))
    try:
        for row in reader:
            fields = [v.strip() for v in row]
            if not any(fields) or fields[0].startswith("#"):
                continue
            out.append((reader.line_num, fields))
    except csv.Error as exc:
        raise csv_problem(exc, str(path), reader.line_num, field) from None
    return out


def _numeric(fields: list[str]) -> bool:
    try:
        [float(v) for v in fields]
    except ValueError:
        return False
    return True


def _number(value: str, path: Path, line: int, field: str) -> float:
    try:
        return float(value)
    except ValueError:
        raise UserError(
            f"{path}, line {line}: {value!r} is not a number.",
            field=field,
            fix="write the adjacency matrix as numbers only (0 or 1), no header",
        ) from None


def _from_edges(
    rows: list[tuple[int, list[str]]], n: int | None, path: Path, field: str
) -> nx.Graph:
    import networkx as nx

    if not _numeric(rows[0][1][:2]):
        rows = rows[1:]  # a header row: source,target
    graph = nx.Graph()
    if n is not None:
        graph.add_nodes_from(range(n))
    for line, fields in rows:
        if len(fields) < 2:
            raise UserError(
                f"{path}, line {line}: one value where an edge needs two.",
                field=field,
                fix="write each edge as two node numbers: 0,5",
            )
        try:
            u, v = int(fields[0]), int(fields[1])
        except ValueError:
            raise UserError(
                f"{path}, line {line}: {fields[0]!r}, {fields[1]!r} are not node numbers.",
                field=field,
                fix="number the nodes 0..n-1 (whole numbers)",
            ) from None
        top = (n if n is not None else MAX_NODES) - 1
        if not (0 <= u <= top and 0 <= v <= top):
            bad = u if not 0 <= u <= top else v
            raise UserError(
                f"{path}, line {line}: node {bad} is outside 0..{top}.",
                field=field,
                fix="number the nodes 0..n-1" + (", or raise n" if n is not None else ""),
            )
        graph.add_edge(u, v)
    if n is None:
        graph.add_nodes_from(range(max(graph.nodes, default=-1) + 1))
    return _renumbered(graph)


def _from_matrix(matrix: Any, what: str, field: str) -> nx.Graph:
    """An undirected graph from a square matrix: nonzero (i, j) links i and j."""
    import networkx as nx
    import numpy as np

    linked = np.asarray(matrix, dtype=float) != 0
    n = linked.shape[0] if linked.ndim == 2 else 0
    if linked.ndim != 2 or n == 0 or n > MAX_NODES or linked.shape[1] != n:
        raise UserError(
            f"{what} is not a square matrix of 1 to {MAX_NODES} rows.",
            field=field,
            fix="give an n x n adjacency matrix (row i, column j nonzero: i and j are linked)",
        )
    uneven = np.argwhere(linked != linked.T)
    if len(uneven):
        i, j = (int(v) for v in uneven[0])
        raise UserError(
            f"{what}: entry ({i}, {j}) differs from ({j}, {i}); the network is undirected.",
            field=field,
            fix="make the matrix symmetric",
        )
    graph = nx.Graph()
    graph.add_nodes_from(range(n))
    graph.add_edges_from((int(i), int(j)) for i, j in np.argwhere(np.triu(linked)))
    return graph


def _from_npy(path: Path, field: str) -> list[nx.Graph]:
    import numpy as np

    try:
        array = np.load(path, allow_pickle=False)
    except (ValueError, OSError) as exc:
        raise UserError(
            f"{path} is not a NumPy array file ({exc}).", field=field, fix="save it with np.save"
        ) from None
    if array.ndim == 2:
        array = array[None]
    if array.ndim != 3:
        raise UserError(
            f"{path} holds a {array.ndim}-D array.",
            field=field,
            fix="give an n x n matrix, or a stack of them (snapshots x n x n)",
        )
    return [_from_matrix(m, f"{path}[{k}]", field) for k, m in enumerate(array)]


def _renumbered(graph: nx.Graph) -> nx.Graph:
    """Nodes in order 0..n-1 (an edge list adds them in the order they appear)."""
    import networkx as nx

    ordered = nx.Graph()
    ordered.add_nodes_from(sorted(graph.nodes))
    ordered.add_edges_from(graph.edges)
    return ordered
