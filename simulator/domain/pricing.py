"""What a model's tokens cost: the shipped price table, the researcher's own price file and an
experiment's per-LLM `price:`, looked up in that order.

Why one module: estimates before a sweep, the costs a sweep has run up and the caps that stop it
all read the same figure, with where it came from, so a number on screen can be traced to a
table row, a file or an experiment. A price nobody knows is None, never 0: a hosted model
missing from the table must read "price unknown", not "free". Models served on the researcher's
own machine (local:, ollama:, hf:, and the mock) cost 0 money; their tokens and time still count.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from importlib.resources import files
from pathlib import Path

import platformdirs
import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from simulator.errors import UserError

LOCAL_PROVIDERS = frozenset({"local", "ollama", "hf", "mock"})  # run here: no money per token
USER_FILE_NAME = "prices.yaml"
_SHIPPED = "prompts/prices/prices.yaml"


@dataclass(frozen=True)
class Price:
    """Money per million tokens, in US dollars, and where the figure came from."""

    input_per_million: float
    output_per_million: float
    cached_input_per_million: float | None = None
    source: str = ""  # e.g. "table 2025-08-15", "experiment", "file ~/.config/...", "local"

    def cost(self, tokens_in: int, tokens_out: int, cached_in: int = 0) -> float:
        """Dollars for these tokens; cached prompt tokens at the cached rate where one is set."""
        cached_in = max(0, min(cached_in, tokens_in))
        cached_rate = self.cached_input_per_million
        if cached_rate is None:
            cached_rate = self.input_per_million
        fresh = (tokens_in - cached_in) * self.input_per_million
        return (fresh + cached_in * cached_rate + tokens_out * self.output_per_million) / 1e6


class PriceFields(BaseModel):
    """A price as written in a file or an experiment: dollars per million tokens."""

    model_config = ConfigDict(extra="forbid")

    input: float = Field(ge=0, allow_inf_nan=False)
    output: float = Field(ge=0, allow_inf_nan=False)
    cached_input: float | None = Field(default=None, ge=0, allow_inf_nan=False)

    def price(self, source: str) -> Price:
        return Price(self.input, self.output, self.cached_input, source)


class _TableRow(PriceFields):
    unsure: bool = False  # not read off the source page on the date given


class _ProviderTable(BaseModel):
    model_config = ConfigDict(extra="forbid")

    taken: str  # the date the figures were read
    source: str  # the page they were read from
    models: dict[str, _TableRow]


class _Table(BaseModel):
    model_config = ConfigDict(extra="forbid")

    providers: dict[str, _ProviderTable]


class _UserFile(BaseModel):
    model_config = ConfigDict(extra="forbid")

    prices: dict[str, PriceFields]  # model string ("openai:gpt-4o") -> its price


@dataclass(frozen=True)
class TableRow:
    """One row of the shipped table as `llm-sim prices` lists it."""

    model: str  # "openai:gpt-4o-mini"
    price: Price
    taken: str
    page: str
    unsure: bool


def _split(llm: str) -> tuple[str, str]:
    provider, _, name = llm.partition(":")
    return provider.strip().lower(), name.strip()


@lru_cache(maxsize=1)
def _shipped() -> _Table:
    text = (files("simulator") / _SHIPPED).read_text("utf-8")
    return _Table.model_validate(yaml.safe_load(text))


def shipped_rows() -> list[TableRow]:
    """Every row of the shipped table, provider by provider."""
    rows = []
    for provider, table in _shipped().providers.items():
        for name, row in table.models.items():
            price = row.price(f"table {table.taken}")
            rows.append(
                TableRow(f"{provider}:{name}", price, table.taken, table.source, row.unsure)
            )
    return rows


def _table_price(llm: str) -> Price | None:
    provider, name = _split(llm)
    table = _shipped().providers.get(provider)
    row = table.models.get(name.lower()) if table is not None else None
    return row.price(f"table {table.taken}") if row is not None and table is not None else None


def user_file() -> Path:
    """The researcher's price file: SIM_PRICES, else prices.yaml in llm-sim's config folder
    (SIM_CONFIG_DIR when set)."""
    named = os.environ.get("SIM_PRICES")
    if named:
        return Path(named).expanduser()
    folder = os.environ.get("SIM_CONFIG_DIR") or platformdirs.user_config_dir("llm-sim")
    return Path(folder) / USER_FILE_NAME


def user_prices() -> dict[str, Price]:
    """The prices of the researcher's file by model string ({} when there is none); a file that
    cannot be read is one UserError naming the file and the field (exit status 2)."""
    path = user_file()
    if not path.is_file():
        if os.environ.get("SIM_PRICES"):
            raise UserError(
                f"the price file {path} does not exist",
                field="SIM_PRICES",
                fix="point SIM_PRICES at a YAML file with 'prices:' (see docs/costs.md), "
                "or unset it",
            )
        return {}
    stat = path.stat()
    return _read_user_file(str(path), stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=4)
def _read_user_file(path: str, _mtime: int, _size: int) -> dict[str, Price]:
    fix = (
        "write it as 'prices:' then one line per model string, e.g. "
        "'openai:gpt-4o: {input: 2.5, output: 10}' (dollars per million tokens)"
    )
    try:
        data = yaml.safe_load(Path(path).read_text("utf-8"))
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as exc:
        raise UserError(
            f"cannot read the price file {path}: {exc}", field="prices", fix=fix
        ) from None
    try:
        parsed = _UserFile.model_validate(data if data is not None else {"prices": {}})
    except ValidationError as exc:
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"]) or "prices"
        raise UserError(f"the price file {path}: {error['msg']}", field=where, fix=fix) from None
    for model in parsed.prices:
        if ":" not in model:
            raise UserError(
                f"the price file {path}: {model!r} is not a model string",
                field=f"prices.{model}",
                fix="name the model with its provider, e.g. openai:gpt-4o-mini",
            )
    return {
        model.strip().lower(): fields.price(f"file {path}")
        for model, fields in parsed.prices.items()
    }


def price_for(llm: str, override: Mapping[str, float] | None = None) -> Price | None:
    """The price of model string `llm` (e.g. "openai:gpt-4o-mini", "ollama:llama3",
    "hf:...", "local:smollm2"): the experiment LLM's `price:` override first (keys input,
    output, cached_input), then the user's price file, then the shipped table; local, Ollama,
    hf and llama.cpp models cost 0 (source "local"). None: the price is unknown (never 0)."""
    if override is not None:
        fields = override if isinstance(override, PriceFields) else PriceFields(**override)
        return fields.price("experiment")
    own = user_prices().get(llm.strip().lower())
    if own is not None:
        return own
    provider, _ = _split(llm)
    if provider in LOCAL_PROVIDERS:
        return Price(0.0, 0.0, 0.0, "local")
    return _table_price(llm)


def describe(price: Price | None) -> str:
    """A price as a line of text: "$0.15 in / $0.60 out per 1M tokens", or "price unknown"."""
    if price is None:
        return "price unknown"
    if price.source == "local":
        return "no charge (runs locally)"
    text = f"${price.input_per_million:g} in / ${price.output_per_million:g} out per 1M tokens"
    if price.cached_input_per_million is not None:
        text += f" (${price.cached_input_per_million:g} cached in)"
    return text


def money(amount: float | None) -> str:
    """Dollars as a researcher reads them; None is "price unknown", never $0."""
    if amount is None:
        return "price unknown"
    if amount == 0:
        return "$0"
    if amount < 0.01:
        return f"${amount:.4f}"
    return f"${amount:,.2f}"
