"""The opinion network's graphs: generated edge counts, seeds, dynamic rewiring, files, errors."""

from __future__ import annotations

import itertools

import networkx as nx
import numpy as np
import pytest

from simulator.errors import UserError
from simulator.worlds.network.domain.graphs import build_graphs, graph_for_round, parse_graph_spec


def edges(graph: nx.Graph) -> set[tuple[int, int]]:
    return {tuple(sorted(e)) for e in graph.edges()}


def one(spec: dict) -> nx.Graph:
    graphs = build_graphs(spec)
    assert len(graphs) == 1
    return graphs[0]


def test_barabasi_albert_101_m10_has_910_edges():
    graph = one({"type": "barabasi_albert", "n": 101, "m": 10, "seed": 1})
    assert graph.number_of_edges() == 10 * 91
    assert sorted(graph.nodes) == list(range(101))
    assert one({"type": "barabasi_albert", "n": 50, "m": 5}).number_of_edges() == 5 * 45


@pytest.mark.parametrize("n", [3, 4, 5])
def test_complete_groups_include_self_loops_by_default(n):
    graph = one({"type": "complete", "n": n})
    assert graph.number_of_edges() == n * (n - 1) // 2 + n
    assert all(graph.has_edge(i, i) for i in range(n))
    plain = one({"type": "complete", "n": n, "self_loops": False})
    assert plain.number_of_edges() == n * (n - 1) // 2
    assert nx.number_of_selfloops(plain) == 0


def test_watts_strogatz_keeps_nk_over_2_edges_and_its_seed():
    spec = {"type": "watts_strogatz", "n": 101, "k": 18, "p": 0.2, "seed": 7}
    first, again = one(spec), one(spec)
    assert first.number_of_edges() == 101 * 18 // 2
    assert edges(first) == edges(again)
    assert edges(first) != edges(one({**spec, "seed": 8}))


def test_erdos_renyi_is_reproducible_for_a_seed():
    spec = {"type": "erdos_renyi", "n": 101, "p": 0.2, "seed": 3}
    first = one(spec)
    assert edges(first) == edges(one(spec))
    assert edges(first) != edges(one({**spec, "seed": 4}))
    expected = 0.2 * 101 * 100 / 2  # 1010; the count is binomial, sd ~ 28
    assert abs(first.number_of_edges() - expected) < 6 * 28
    assert one({"type": "erdos_renyi", "n": 10, "p": 0.0}).number_of_edges() == 0


def test_dynamic_snapshots_differ_by_the_rewire_count():
    spec = {
        "type": "dynamic",
        "snapshots": 10,
        "base": {"type": "barabasi_albert", "n": 50, "m": 5, "seed": 2},
        "rewire": 20,
        "seed": 9,
    }
    graphs = build_graphs(spec)
    assert len(graphs) == 10
    for before, after in itertools.pairwise(graphs):
        assert len(edges(after) - edges(before)) == 20
        assert len(edges(before) - edges(after)) == 20
        assert after.number_of_edges() == before.number_of_edges() == 5 * 45
        assert nx.number_of_selfloops(after) == 0
    assert [edges(g) for g in graphs] == [edges(g) for g in build_graphs(spec)]
    assert edges(build_graphs({**spec, "seed": 10})[1]) != edges(graphs[1])


def test_dynamic_rewiring_a_dense_graph_and_too_much_rewiring():
    dense = {"type": "complete", "n": 6, "self_loops": False}
    graphs = build_graphs({"type": "dynamic", "snapshots": 3, "base": dense, "rewire": 0})
    assert all(edges(g) == edges(graphs[0]) for g in graphs)
    with pytest.raises(UserError, match=r"network\.rewire.*free pairs"):
        build_graphs({"type": "dynamic", "snapshots": 2, "base": dense, "rewire": 1})


def test_round_t_plays_on_snapshot_t_minus_1():
    graphs = ["g0", "g1", "g2"]
    assert [graph_for_round(graphs, t) for t in range(6)] == ["g0", "g0", "g1", "g2", "g2", "g2"]


def test_files_edge_list_adjacency_and_npy_stack(tmp_path):
    (tmp_path / "edges.csv").write_text("source,target\n0,1\n1,2\n\n# a comment\n2,3\n")
    (tmp_path / "matrix.csv").write_text("0,1,0\n1,0,1\n0,1,0\n")
    stack = np.zeros((2, 4, 4), dtype=int)
    stack[0, 0, 1] = stack[0, 1, 0] = 1
    stack[1, 2, 3] = stack[1, 3, 2] = 1
    np.save(tmp_path / "stack.npy", stack)
    path = one({"type": "file", "path": str(tmp_path / "edges.csv")})
    assert edges(path) == {(0, 1), (1, 2), (2, 3)}
    padded = build_graphs({"type": "file", "path": "edges.csv", "n": 6}, base_dir=tmp_path)[0]
    assert sorted(padded.nodes) == list(range(6))
    matrix = build_graphs({"type": "file", "path": "matrix.csv"}, base_dir=tmp_path)[0]
    assert edges(matrix) == {(0, 1), (1, 2)}
    snapshots = build_graphs(
        {
            "type": "dynamic",
            "snapshots": [
                {"type": "file", "path": "stack.npy"},
                {"type": "file", "path": "edges.csv"},
            ],
        },
        base_dir=tmp_path,
    )
    assert [edges(g) for g in snapshots] == [{(0, 1)}, {(2, 3)}, {(0, 1), (1, 2), (2, 3)}]
    with pytest.raises(UserError, match="2 matrices"):
        build_graphs({"type": "file", "path": "stack.npy"}, base_dir=tmp_path)


def test_file_errors_name_the_line_and_the_field(tmp_path):
    (tmp_path / "bad.csv").write_text("0,1\n1,x\n")
    (tmp_path / "far.csv").write_text("0,1\n1,2\n2,9\n")
    (tmp_path / "uneven.csv").write_text("0,1,1\n0,0,1\n1,1,0\n")
    with pytest.raises(UserError, match=r"bad\.csv, line 2: '1', 'x' are not node numbers"):
        build_graphs({"type": "file", "path": str(tmp_path / "bad.csv")})
    with pytest.raises(UserError, match=r"line 3: node 9 is outside 0\.\.4"):
        build_graphs({"type": "file", "path": str(tmp_path / "far.csv"), "n": 5})
    with pytest.raises(UserError, match=r"entry \(0, 1\) differs from \(1, 0\)"):
        build_graphs({"type": "file", "path": str(tmp_path / "uneven.csv")})
    with pytest.raises(UserError, match=r"network\.snapshots\[1\]\.path: no file at"):
        build_graphs(
            {
                "type": "dynamic",
                "snapshots": [{"type": "complete", "n": 3}, {"type": "file", "path": "nope.csv"}],
            },
            base_dir=tmp_path,
        )


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ({"type": "barabasi_albert", "n": 5, "m": 10}, r"m = 10 must be smaller than n = 5"),
        ({"type": "watts_strogatz", "n": 101, "k": 17, "p": 0.1}, r"k = 17 is odd.*16 or 18"),
        ({"type": "erdos_renyi", "n": 10, "p": 2}, r"^network\.p: .*less than or equal to 1"),
        ({"type": "erdos_renyi", "p": 0.1}, r"network\.n: .*Fix: add 'network\.n'"),
        ({"type": "ring", "n": 3}, r"Fix: give `type:` one of complete, barabasi_albert"),
        ({"n": 3}, r"Fix: give `type:` one of"),
        (
            {"type": "complete", "n": 3, "selfloops": True},
            r"network\.selfloops: .*a complete network has type, n, self_loops",
        ),
        ({"type": "dynamic", "snapshots": 3}, r"needs `base`.*and `rewire`"),
        ({"type": "erdos_renyi", "n": 10_000, "p": 0.5}, r"about 24,997,500 edges, over the"),
        (
            {"type": "dynamic", "snapshots": [{"type": "barabasi_albert", "n": 4, "m": 0}]},
            r"^network\.snapshots\[0\]\.m: ",
        ),
        (
            {"type": "dynamic", "snapshots": [{"type": "complete", "n": 3}], "rewire": 2},
            r"listed snapshots take no `base` or `rewire`",
        ),
        (
            {
                "type": "dynamic",
                "snapshots": [{"type": "complete", "n": 3}, {"type": "complete", "n": 4}],
            },
            r"same node count; found \[3, 4\]",
        ),
    ],
)
def test_spec_errors_are_one_paragraph_with_the_field_and_fix(spec, expected):
    with pytest.raises(UserError, match=expected) as caught:
        parse_graph_spec(spec)
    assert "Fix: " in str(caught.value)
    assert "\n" not in str(caught.value)
