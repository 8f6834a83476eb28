"""Prices: the order they are looked up in, what they cost, and what nobody knows."""

from __future__ import annotations

import pytest

from simulator.domain import pricing
from simulator.domain.llm_choice import LLMChoice
from simulator.errors import UserError
from simulator.store.repositories.experiments import experiment_version


@pytest.fixture(autouse=True)
def own_config(tmp_path, monkeypatch):
    monkeypatch.setenv("SIM_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.delenv("SIM_PRICES", raising=False)


def test_cost_is_dollars_per_million_with_cached_input_at_its_rate():
    price = pricing.Price(2.0, 8.0, 0.5, "table")
    assert price.cost(1_000_000, 0) == pytest.approx(2.0)
    assert price.cost(0, 500_000) == pytest.approx(4.0)
    assert price.cost(1_000_000, 0, cached_in=400_000) == pytest.approx(1.2 + 0.2)
    assert pricing.Price(2.0, 8.0).cost(1_000_000, 0, cached_in=1_000_000) == pytest.approx(2.0)


def test_lookup_order_experiment_then_file_then_local_then_table(tmp_path, monkeypatch):
    table = pricing.price_for("openai:gpt-4o-mini")
    assert table is not None and table.source.startswith("table ")
    assert (table.input_per_million, table.output_per_million) == (0.15, 0.6)
    assert pricing.price_for("openai:a-model-nobody-prices") is None  # unknown, never 0
    local = pricing.price_for("ollama:llama3")
    assert local is not None and local.source == "local" and local.cost(10**6, 10**6) == 0
    for model in ("local:smollm2", "hf:/models/x", "mock:a"):
        assert pricing.price_for(model).source == "local"  # type: ignore[union-attr]

    own = tmp_path / "mine.yaml"
    own.write_text(
        "prices:\n  openai:gpt-4o-mini: {input: 1, output: 2}\n"
        "  ollama:llama3: {input: 0.01, output: 0.02}\n",
        "utf-8",
    )
    monkeypatch.setenv("SIM_PRICES", str(own))
    assert pricing.price_for("openai:gpt-4o-mini").source == f"file {own}"  # type: ignore[union-attr]
    assert pricing.price_for("ollama:llama3").input_per_million == 0.01  # type: ignore[union-attr]
    over = pricing.price_for("openai:gpt-4o-mini", {"input": 3, "output": 4})
    assert over is not None and over.source == "experiment" and over.input_per_million == 3


def test_the_default_price_file_lives_in_the_config_folder(tmp_path):
    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "prices.yaml").write_text("prices:\n  openai:x: {input: 1, output: 1}\n", "utf-8")
    assert pricing.user_file() == folder / "prices.yaml"
    assert pricing.price_for("openai:x").source.startswith("file ")  # type: ignore[union-attr]


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ("prices:\n  openai:x: {input: -1, output: 1}\n", "prices.openai:x.input"),
        ("prices:\n  openai:x: {input: 1}\n", "prices.openai:x.output"),
        ("prices:\n  openai:x: {input: 1, output: 1, extra: 2}\n", "prices.openai:x.extra"),
        ("prices:\n  gpt-4o: {input: 1, output: 1}\n", "prices.gpt-4o"),
        ("cost: 3\n", "prices"),
        ("prices: [1, 2\n", "prices"),
    ],
)
def test_a_bad_price_file_names_the_file_and_the_field(tmp_path, monkeypatch, text, field):
    own = tmp_path / "bad.yaml"
    own.write_text(text, "utf-8")
    monkeypatch.setenv("SIM_PRICES", str(own))
    with pytest.raises(UserError) as caught:
        pricing.price_for("openai:gpt-4o")
    assert caught.value.field == field and str(own) in caught.value.message


def test_money_never_prints_an_unknown_price_as_zero():
    assert pricing.money(None) == "price unknown"
    assert pricing.money(0) == "$0"
    assert pricing.money(12.345) == "$12.35"
    assert pricing.describe(None) == "price unknown"


def test_an_llm_entry_without_a_price_dumps_as_before(prison_path):
    from simulator.services.experiments import load_file

    experiment = load_file(prison_path)
    assert all("price" not in llm.model_dump() for llm in experiment.llms)
    priced = experiment.model_copy(
        update={"llms": [LLMChoice(model="openai:gpt-4o", price={"input": 1, "output": 2})]}
    )
    assert priced.llms[0].model_dump(mode="json")["price"]["input"] == 1.0
    assert experiment_version(priced) != experiment_version(experiment)
    with pytest.raises(ValueError, match=r"price\.output"):
        LLMChoice(model="openai:gpt-4o", price={"input": 1, "output": float("inf")})
