"""The 2D community's pure rules against the spec's own checks (shared/specs/takata-grid.md)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from simulator.worlds.grid.domain import rules as grid
from simulator.worlds.grid.domain.experiment import GridPrompts, GridWorld
from simulator.worlds.grid.domain.sweep import GridSweepSpec


def test_torus_distance_wraps_around():
    assert grid.distance((0, 0), (49, 49), 50, 50) == 1
    assert grid.distance((0, 0), (25, 25), 50, 50) == 25  # the largest on 50 x 50
    assert grid.distance((0, 0), (49, 49), 50, 50, torus=False) == 49
    assert grid.distance((3, 10), (7, 12), 50, 50) == 4  # Chebyshev: the larger axis


@pytest.mark.parametrize(
    ("reply", "move", "fallback"),
    [
        ("I choose y+1 then x-1", "y+1", False),
        ("north", "stay", True),
        ("x+1", "x+1", False),
        ("X + 1, to the east", "x+1", False),
        ("I will stay here; x-1 later", "stay", False),
        ("y-1.", "y-1", False),
        ("max+10 steps", "stay", True),  # not a command: 'x' inside a word, '+10'
        ("x+12", "stay", True),
        ("", "stay", True),
        ("Staying is boring: x-1", "x-1", False),  # 'Staying' is not the word 'stay'
    ],
)
def test_move_parser_table(reply, move, fallback):
    assert grid.parse_move(reply) == (move, fallback)


def test_radius_zero_hears_only_the_same_cell():
    positions = [(1, 1), (1, 1), (2, 1), (40, 40)]
    recipients, senders = grid.delivery(positions, 0, 50, 50)
    assert recipients == [[1], [0], [], []]
    names = grid.agent_names(4)
    assert grid.received_text(names, ["a", "b", "c", "d"], senders[2]) == grid.NO_MESSAGES
    assert grid.received_text(names, ["a", "b", "c", "d"], senders[0]) == "agent1: b"


def test_radius_25_on_50_is_a_broadcast():
    positions = grid.initial_positions(10, 50, 50, seed=4)
    recipients, senders = grid.delivery(positions, 25, 50, 50)
    assert all(len(r) == 9 for r in recipients)
    assert all(len(s) == 9 for s in senders)


@st.composite
def fields(draw):
    """A field, a radius, a wrap and agents on it: few enough cells in a window that the cell
    index is the one used, and sometimes a window wider than the field (it wraps onto itself)."""
    width, height = draw(st.integers(1, 30)), draw(st.integers(1, 30))
    radius, torus = draw(st.integers(0, 16)), draw(st.booleans())
    cell = st.tuples(st.integers(0, width - 1), st.integers(0, height - 1))
    positions = draw(st.lists(cell, max_size=90))
    return positions, radius, width, height, torus


@settings(max_examples=300, deadline=None)
@given(fields())
def test_delivery_is_every_pair_within_the_radius(field):
    """The cell index finds exactly the hearers the pairwise distance names, in agent order."""
    positions, radius, width, height, torus = field
    recipients, senders = grid.delivery(positions, radius, width, height, torus)
    pairs = [
        [
            j
            for j in range(len(positions))
            if j != i and grid.distance(positions[i], positions[j], width, height, torus) <= radius
        ]
        for i in range(len(positions))
    ]
    assert recipients == pairs
    assert senders == [
        [j for j in range(len(positions)) if i in pairs[j]] for i in range(len(positions))
    ]


def test_delivery_of_many_agents_uses_the_cell_index_and_agrees():
    """1,000 agents on 50 x 50 at radius 5: the indexed answer equals `hearers` per agent."""
    positions = grid.initial_positions(1000, 50, 50, seed=3)
    recipients, _ = grid.delivery(positions, 5, 50, 50)
    assert recipients == [grid.hearers(positions, i, 5, 50, 50) for i in range(1000)]
    assert sum(map(len, recipients)) > 1000  # many hear many: the window really is searched


def test_moves_wrap_on_a_torus_and_stop_at_a_wall():
    assert grid.moved((49, 0), "x+1", 50, 50) == (0, 0)
    assert grid.moved((0, 0), "y-1", 50, 50) == (0, 49)
    assert grid.moved((49, 0), "x+1", 50, 50, torus=False) == (49, 0)
    assert grid.moved((3, 4), "stay", 50, 50) == (3, 4)


def test_initial_positions_follow_the_seed():
    assert grid.initial_positions(5, 50, 50, 1) == grid.initial_positions(5, 50, 50, 1)
    assert grid.initial_positions(5, 50, 50, 1) != grid.initial_positions(5, 50, 50, 2)
    assert all(0 <= x < 7 and 0 <= y < 3 for x, y in grid.initial_positions(50, 7, 3, 0))


def test_templates_refuse_unknown_fields():
    good = "You are {name} at ({x}, {y}); {{literal}} braces"
    GridPrompts(message=good, memory=good, move=good)
    with pytest.raises(ValidationError, match=r"prompts.move: unknown field \{position\}"):
        GridPrompts(message=good, memory=good, move="at {position}")


def test_given_positions_must_fit_the_field():
    with pytest.raises(ValidationError, match=r"positions\[1\] = \[50, 0\] is off"):
        GridWorld(agents=2, positions=[(0, 0), (50, 0)])
    with pytest.raises(ValidationError, match="2 cells for 3 agents"):
        GridWorld(agents=3, positions=[(0, 0), (1, 0)])


def test_sweep_seeds_are_an_axis_and_repetitions_count_up():
    spec = GridSweepSpec(radius=[0, 5, 25], seeds=[1, 2])
    assert spec.run_seeds() == [1, 2] and spec.size(1) == 6
    assert GridSweepSpec(seed=10, repetitions=3).run_seeds() == [10, 11, 12]
    assert GridSweepSpec(repetitions=2).run_seeds() == [None, None]
    with pytest.raises(ValidationError, match="seeds lists the seed of every run"):
        GridSweepSpec(seeds=[1], repetitions=2)
    with pytest.raises(ValidationError, match="radius lists a value twice"):
        GridSweepSpec(radius=[5, 5])
