"""Ids drawn in blocks look and spread like ids drawn one at a time."""

from __future__ import annotations

import itertools
import re
import secrets

from simulator.domain.ids import new_id, new_ids


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
