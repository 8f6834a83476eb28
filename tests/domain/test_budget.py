"""Spend and caps as pure rules: a call's money (unknown is never free), spend added up and
said in one line, caps over a file's caps, and which cap a spend reached."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from simulator.domain.budget import (
    Caps,
    add_spend,
    call_cost,
    call_spend,
    describe_spend,
    empty_spend,
    price_of,
)
from simulator.domain.fork import EDIT_PURPOSE
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.pricing import Price, price_for


def test_a_calls_money_is_unknown_without_a_price_or_without_token_counts():
    price = Price(1.0, 2.0)
    assert call_cost(price, True, 1_000_000, 500_000) == pytest.approx(2.0)
    assert call_cost(None, True, 10, 10) is None  # unknown, never 0
    assert call_cost(price, True, None, 10) is None  # a reply without its counts
    assert call_cost(price, False, None, None) == 0.0  # no reply: nothing billed


def test_an_experiments_own_price_wins_and_local_models_cost_nothing():
    own = LLMChoice(model="openai:stub", price={"input": 3, "output": 4})
    assert price_of(own) == Price(3.0, 4.0, None, "experiment")
    assert price_of(LLMChoice(model="openai:stub")) is None
    assert price_for("ollama:llama3").source == "local"
    assert price_for("mock:alice").cost(1000, 1000) == 0


def test_spend_adds_rows_and_counts_unknown_prices_apart():
    total = empty_spend()
    add_spend(total, call_spend({"tokens_in": 10, "tokens_out": 5, "cost": 0.5, "latency_s": 1}))
    add_spend(total, call_spend({"tokens_in": 1, "tokens_out": 1, "cost": None, "state": "done"}))
    assert call_spend({"purpose": EDIT_PURPOSE, "cost": None}) is None  # the researcher's text
    assert total == {"calls": 2, "tokens_in": 11, "tokens_out": 6, "cost": 0.5,
                     "cost_unknown_calls": 1, "seconds": 1.0}  # fmt: skip
    line = describe_spend(total)
    assert "2 calls" in line and "17 tokens" in line and "price unknown for 1 calls" in line


def test_caps_given_win_over_the_files_and_say_which_was_reached():
    merged = Caps(max_calls=5).over(Caps(max_calls=9, max_cost=2.0))
    assert (merged.max_calls, merged.max_cost, merged.max_tokens) == (5, 2.0, None)
    assert merged.reached({"calls": 4, "cost": 1.9}) is None
    assert "call cap" in merged.reached({"calls": 5})
    assert "cost cap" in merged.reached({"cost": 2.0})
    assert "token cap" in Caps(max_tokens=10).reached({"tokens_in": 6, "tokens_out": 4})
    assert not Caps().any()
    with pytest.raises(ValidationError):
        Caps(max_cost=0)
