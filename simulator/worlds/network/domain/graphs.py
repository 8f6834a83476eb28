"""Who sees whom: the network an LLM-SAM run plays on, as a validated spec and its graphs.

A `GraphSpec` names one of the reference's networks (complete groups with self-loops, so an
agent sees its own last answer; Barabasi-Albert, Watts-Strogatz, Erdos-Renyi), a file (an edge
list or adjacency matrix as CSV, or a NumPy `.npy` matrix as the reference stores them), or a
dynamic network (snapshots listed one by one, or a base graph rewired step by step).
`build_graphs(spec)` turns it into networkx graphs with nodes 0..n-1: one per round for a
dynamic network, else one. Every generator takes a seed, so a spec always builds the same graph.
"""

from __future__ import annotations

import random
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, RootModel, ValidationError, model_validator

from simulator.domain.limits import MAX_SEED
from simulator.errors import UserError
from simulator.worlds.network.domain.graph_files import MAX_NODES, read_graph_file

if TYPE_CHECKING:  # networkx loads when graphs are built: the world's flags need none
    import networkx as nx

MAX_COMPLETE_NODES = 2_000  # a complete graph of n has n(n-1)/2 edges: 2,000 is 2 million
MAX_SNAPSHOTS = 1_000
MAX_EDGES = 5_000_000  # expected edges of a generated graph: ~1 GB of networkx dicts


def _few_enough(edges: float, what: str) -> None:
    if edges > MAX_EDGES:
        raise ValueError(
            f"{what} gives about {edges:,.0f} edges, over the {MAX_EDGES:,} this tool builds; "
            "choose a smaller or sparser network"
        )


Seed = Annotated[int, Field(ge=0, le=MAX_SEED)]
Nodes = Annotated[int, Field(ge=1, le=MAX_NODES)]


class _Spec(BaseModel):
    model_config = ConfigDict(extra="forbid")

    @property
    def nodes(self) -> int | None:
        """The node count when the spec fixes it without reading a file."""
        return getattr(self, "n", None)


class CompleteGraph(_Spec):
    """Everyone sees everyone (the reference's groups of 3, 4 and 5 agents)."""

    type: Literal["complete"]
    n: int = Field(ge=1, le=MAX_COMPLETE_NODES)
    self_loops: bool = True  # the reference adds them: each agent also sees its own last answer


class BarabasiAlbertGraph(_Spec):
    """Preferential attachment: n nodes, each new one linking to m earlier ones."""

    type: Literal["barabasi_albert"]
    n: Nodes
    m: int = Field(ge=1)
    seed: Seed = 0

    @model_validator(mode="after")
    def _m_below_n(self) -> BarabasiAlbertGraph:
        if self.m >= self.n:
            raise ValueError(
                f"m = {self.m} must be smaller than n = {self.n} (each new node links to m "
                f"earlier ones); choose m from 1 to {self.n - 1}"
            )
        _few_enough(self.m * (self.n - self.m), f"n = {self.n}, m = {self.m}")
        return self


class WattsStrogatzGraph(_Spec):
    """A ring where each node links to its k nearest neighbours, each edge rewired with p."""

    type: Literal["watts_strogatz"]
    n: Nodes
    k: int = Field(ge=2)
    p: float = Field(ge=0.0, le=1.0)
    seed: Seed = 0

    @model_validator(mode="after")
    def _k_even_below_n(self) -> WattsStrogatzGraph:
        if self.k % 2:
            raise ValueError(
                f"k = {self.k} is odd; networkx links k/2 neighbours on each side, so use an "
                f"even k (e.g. {self.k - 1} or {self.k + 1})"
            )
        if self.k >= self.n:
            raise ValueError(f"k = {self.k} must be smaller than n = {self.n}")
        _few_enough(self.n * self.k / 2, f"n = {self.n}, k = {self.k}")
        return self


class ErdosRenyiGraph(_Spec):
    """Each pair of nodes linked with probability p."""

    type: Literal["erdos_renyi"]
    n: Nodes
    p: float = Field(ge=0.0, le=1.0)
    seed: Seed = 0

    @model_validator(mode="after")
    def _sparse_enough(self) -> ErdosRenyiGraph:
        _few_enough(self.p * self.n * (self.n - 1) / 2, f"n = {self.n}, p = {self.p}")
        return self


class FileGraph(_Spec):
    """A network read from a file. CSV: an edge list (two node numbers a row, an optional
    header row, further columns ignored) or a square 0/1 adjacency matrix with no header;
    `.npy`: a NumPy adjacency matrix (2-D), or in a dynamic network a stack of them (3-D).
    A relative path is read from the folder given to `build_graphs` (the YAML file's)."""

    type: Literal["file"]
    path: str = Field(min_length=1, max_length=4096)
    format: Literal["auto", "edge_list", "adjacency"] = "auto"
    n: Nodes | None = None  # edge lists: the node count, when the last nodes have no edges


StaticGraph = Annotated[
    CompleteGraph | BarabasiAlbertGraph | WattsStrogatzGraph | ErdosRenyiGraph | FileGraph,
    Field(discriminator="type"),
]


class DynamicGraph(_Spec):
    """A network that changes between rounds. Either `snapshots` lists one static spec per
    round (a 3-D `.npy` file counts as one snapshot per slice), or `snapshots` is a count and
    `base` is rewired `rewire` edges per step: each step drops `rewire` random edges and adds
    as many new ones (never one just dropped), so the edge count stays fixed."""

    type: Literal["dynamic"]
    snapshots: list[StaticGraph] | int
    base: StaticGraph | None = None
    rewire: int | None = Field(default=None, ge=0)
    seed: Seed = 0

    @model_validator(mode="after")
    def _one_form(self) -> DynamicGraph:
        if isinstance(self.snapshots, int):
            if not 1 <= self.snapshots <= MAX_SNAPSHOTS:
                raise ValueError(f"snapshots = {self.snapshots}; give 1 to {MAX_SNAPSHOTS}")
            if self.base is None or self.rewire is None:
                raise ValueError(
                    "a snapshot count needs `base` (the first graph, e.g. {type: "
                    "barabasi_albert, n: 50, m: 5}) and `rewire` (edges changed per step)"
                )
            return self
        if not 1 <= len(self.snapshots) <= MAX_SNAPSHOTS:
            raise ValueError(f"list 1 to {MAX_SNAPSHOTS} snapshots")
        if self.base is not None or self.rewire is not None:
            raise ValueError(
                "listed snapshots take no `base` or `rewire`; give either a list of snapshots, "
                "or a snapshot count with `base` and `rewire`"
            )
        sizes = {s.nodes for s in self.snapshots if s.nodes is not None}
        if len(sizes) > 1:
            raise ValueError(f"every snapshot needs the same node count; found {sorted(sizes)}")
        return self


class GraphSpec(RootModel):
    """One network spec, chosen by `type`."""

    root: Annotated[StaticGraph | DynamicGraph, Field(discriminator="type")]


TYPES: dict[str, type[_Spec]] = {
    "complete": CompleteGraph,
    "barabasi_albert": BarabasiAlbertGraph,
    "watts_strogatz": WattsStrogatzGraph,
    "erdos_renyi": ErdosRenyiGraph,
    "file": FileGraph,
    "dynamic": DynamicGraph,
}


def parse_graph_spec(data: Any, where: str = "network") -> GraphSpec:
    """A spec from plain data (a YAML mapping), or one UserError naming the field and fix."""
    try:
        return GraphSpec.model_validate(data)
    except ValidationError as exc:
        raise _spec_error(exc, where) from None


def _spec_error(exc: ValidationError, where: str) -> UserError:
    """pydantic's first problem as `network.snapshots[1].m: ...` with the fix (the types, or
    the fields of the type in question). The discriminator's tags leave the field path."""
    first = exc.errors()[0]
    kind = first.get("type", "")
    path, tag = where, None
    for part in first.get("loc", ()):
        if isinstance(part, str) and part in TYPES:
            tag = part  # pydantic names the chosen type in the path: `barabasi_albert.m`
            continue
        if isinstance(part, str) and (part == "int" or not part.isidentifier()):
            continue  # the branch of `snapshots: list | int` pydantic tried
        path += f"[{part}]" if isinstance(part, int) else f".{part}"
    message = first.get("msg", "invalid value").removeprefix("Value error, ")
    if kind in ("union_tag_invalid", "union_tag_not_found", "model_attributes_type"):
        fix = f"give `type:` one of {', '.join(TYPES)}"
    elif kind == "extra_forbidden":
        fix = f"remove '{path}' or correct its spelling"
        if tag is not None:
            fix += f"; a {tag} network has {', '.join(TYPES[tag].model_fields)}"
    elif kind == "missing":
        fix = f"add '{path}'"
    else:
        fix = f"correct '{path}' as the message says"
    return UserError(message.rstrip(".") + ".", field=path, fix=fix)


def build_graphs(
    spec: GraphSpec | BaseModel | dict, base_dir: Path | None = None
) -> list[nx.Graph]:
    """The graphs of a spec: one per snapshot for a dynamic network, else exactly one."""
    if isinstance(spec, dict):
        spec = parse_graph_spec(spec)
    if isinstance(spec, GraphSpec):
        spec = spec.root
    if isinstance(spec, DynamicGraph):
        return _dynamic(spec, base_dir)
    graphs = _static(spec, base_dir, "network")
    if len(graphs) != 1:
        raise UserError(
            f"{getattr(spec, 'path', 'the file')} holds {len(graphs)} matrices; a static "
            "network takes one.",
            field="network.path",
            fix="use a 2-D matrix, or `type: dynamic` with this file as its one snapshot",
        )
    return graphs


def snapshot_graphs(snapshots: Sequence[Sequence[Sequence[int]]], n: int) -> list[nx.Graph]:
    """Stored snapshots (edge lists) as graphs on nodes 0..n-1, as a run and its analysis
    read them back."""
    import networkx as nx

    graphs = []
    for edges in snapshots or [[]]:
        graph = nx.Graph()
        graph.add_nodes_from(range(n))
        graph.add_edges_from((int(u), int(v)) for u, v in edges)
        graphs.append(graph)
    return graphs


def graph_for_round(graphs: Sequence[nx.Graph], round_index: int) -> nx.Graph:
    """The graph round t uses: snapshot t-1 for t >= 1 (round 0 reads the table, no one
    listens; it is measured on snapshot 0), the last snapshot once the list runs out."""
    return graphs[min(max(round_index - 1, 0), len(graphs) - 1)]


def _static(spec: BaseModel, base_dir: Path | None, where: str) -> list[nx.Graph]:
    import networkx as nx

    if isinstance(spec, CompleteGraph):
        graph = nx.complete_graph(spec.n)
        if spec.self_loops:
            graph.add_edges_from((i, i) for i in range(spec.n))
        return [graph]
    if isinstance(spec, BarabasiAlbertGraph):
        return [nx.barabasi_albert_graph(spec.n, spec.m, seed=spec.seed)]
    if isinstance(spec, WattsStrogatzGraph):
        return [nx.watts_strogatz_graph(spec.n, spec.k, spec.p, seed=spec.seed)]
    if isinstance(spec, ErdosRenyiGraph):
        return [nx.gnp_random_graph(spec.n, spec.p, seed=spec.seed)]
    if isinstance(spec, FileGraph):
        return read_graph_file(spec.path, spec.format, spec.n, base_dir, where)
    raise TypeError(f"not a static graph spec: {spec!r}")


def _dynamic(spec: DynamicGraph, base_dir: Path | None) -> list[nx.Graph]:
    if isinstance(spec.snapshots, int):
        assert spec.base is not None and spec.rewire is not None  # checked by the validator
        first = _static(spec.base, base_dir, "network.base")
        if len(first) != 1:
            raise UserError(
                "the base file holds several matrices.",
                field="network.base.path",
                fix="use a 2-D matrix as the base",
            )
        rng = random.Random(spec.seed)
        graphs = [first[0]]
        for _ in range(spec.snapshots - 1):
            graphs.append(rewired(graphs[-1], spec.rewire, rng))
        return graphs
    graphs = []
    for i, snapshot in enumerate(spec.snapshots):
        graphs += _static(snapshot, base_dir, f"network.snapshots[{i}]")
    sizes = [g.number_of_nodes() for g in graphs]
    if len(set(sizes)) > 1:
        raise UserError(
            f"the snapshots have different node counts: {sizes}.",
            field="network.snapshots",
            fix="give every snapshot the same agents (nodes 0..n-1)",
        )
    if len(graphs) > MAX_SNAPSHOTS:
        raise UserError(
            f"{len(graphs)} snapshots; at most {MAX_SNAPSHOTS}.",
            field="network.snapshots",
            fix="list fewer snapshots",
        )
    return graphs


def rewired(graph: nx.Graph, count: int, rng: random.Random) -> nx.Graph:
    """A copy of `graph` with `count` random edges dropped and `count` new ones added (never a
    self-loop, never one just dropped): the next snapshot differs by exactly `count` each way.
    Self-loops stay where they are."""
    n = graph.number_of_nodes()
    edges = sorted(tuple(sorted(e)) for e in graph.edges() if e[0] != e[1])
    free = n * (n - 1) // 2 - len(edges)
    if count > len(edges) or count > free:
        raise UserError(
            f"rewire = {count} but the graph has {len(edges)} edges and {free} free pairs.",
            field="network.rewire",
            fix=f"choose rewire from 0 to {min(len(edges), free)}",
        )
    dropped = rng.sample(edges, count)
    added: set[tuple[int, int]] = set()
    if free <= 4 * count or n <= 200:
        pairs = [(u, v) for u in range(n) for v in range(u + 1, n) if not graph.has_edge(u, v)]
        added = set(rng.sample(pairs, count))
    else:  # sparse enough that random pairs are mostly free
        while len(added) < count:
            u, v = sorted((rng.randrange(n), rng.randrange(n)))
            if u != v and not graph.has_edge(u, v):
                added.add((u, v))
    nxt = graph.copy()
    nxt.remove_edges_from(dropped)
    nxt.add_edges_from(sorted(added))
    return nxt
