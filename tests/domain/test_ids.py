"""Ids drawn in blocks look and spread like ids drawn one at a time; a run of ids is consecutive."""

from __future__ import annotations

import itertools
import re
import secrets

from simulator.domain.ids import id_run, new_id, new_ids


def test_ids_drawn_in_blocks_have_the_shape_of_one_drawn_alone(monkeypatch):
    draws: list[int] = []
    real = secrets.token_hex

    def counted(n: int) -> str:
        draws.append(n)
        return real(n)

    monkeypatch.setattr(secrets, "token_hex", counted)
    ids = list(itertools.islice(new_ids("conv", block=100), 250))
    assert draws == [400, 400, 400]  # 4 bytes an id, 100 ids a draw
    shape = re.compile(r"conv_[0-9a-f]{8}")
    assert all(shape.fullmatch(i) for i in ids) and shape.fullmatch(new_id("conv"))
    assert len(set(ids)) == 250
    assert all(re.fullmatch(r"exp_[0-9a-f]{6}", i) for i in itertools.islice(new_ids("exp"), 3))


def test_a_run_of_ids_counts_up_from_a_random_start_within_the_width(monkeypatch):
    ids = list(id_run("conv", 1000))
    numbers = [int(i.removeprefix("conv_"), 16) for i in ids]
    assert all(re.fullmatch(r"conv_[0-9a-f]{8}", i) for i in ids)
    assert numbers == list(range(numbers[0], numbers[0] + 1000))
    assert ids == sorted(ids)  # each lands after the one before in a tree keyed by id
    monkeypatch.setattr(secrets, "randbelow", lambda n: n - 1)  # the last start there is
    last = list(id_run("exp", 3))
    assert last == ["exp_fffffd", "exp_fffffe", "exp_ffffff"]


def test_a_run_longer_than_half_the_space_is_drawn_at_random():
    ids = list(itertools.islice(id_run("exp", 2**23 + 1), 1000))
    assert all(re.fullmatch(r"exp_[0-9a-f]{6}", i) for i in ids)
    assert sum(a < b for a, b in itertools.pairwise(ids)) < 800  # not counting up
