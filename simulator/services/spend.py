"""Spend and caps as the commands use them: the budget of a run or a sweep, the refusal of a
money cap whose price is unknown, a sweep's caps from its file under the command's, and the
sweep's spend counters kept as its calls finish."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Iterable

from pydantic import ValidationError

from simulator.domain.budget import Caps, add_spend, call_spend, empty_spend, price_of
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.pricing import price_for
from simulator.domain.yaml_reading import read_yaml_file
from simulator.engine.budget import Budget
from simulator.errors import UserError
from simulator.llm.embeddings import parse, priced_as
from simulator.memory.domain.embedder_strings import DEFAULT_EMBEDDER
from simulator.store.spend import SweepSpend
from simulator.store.store import Store


def sweep_spend(store: Store) -> SweepSpend:
    return SweepSpend(store.db, store.connection.lock_path)


def run_budget(caps: Caps | None, stop: asyncio.Event | None = None) -> Budget | None:
    """A single run's budget: its caps apply to its own spend. None without a cap."""
    if caps is None or not caps.any():
        return None
    return Budget(caps, lambda local: local or {}, stop)


def sweep_budget(
    meter: SweepMeter, caps: Caps | None, stop: asyncio.Event | None = None
) -> Budget | None:
    """A sweep's budget: its caps apply to the spend of the whole sweep as the store counts it
    (every worker's, this one's pending calls first), read before each claim and each call.
    None without a cap."""
    if caps is None or not caps.any():
        return None
    return Budget(caps, lambda local: meter.total(), stop)


class SweepMeter:
    """This worker's share of a sweep's spend counters. An increment costs about 3 ms on the
    embedded store (its update and the file lock between processes), so the calls heard add up
    here and go to the sweep's document at most every `every_s`, before every cap check (so the
    other workers see them) and when the worker stops (`flush`)."""

    def __init__(self, store: Store, sweep_id: str, every_s: float = 1.0):
        self._store = store
        self._counters = sweep_spend(store)
        self._sweep_id = sweep_id
        self._every_s = every_s
        self._pending = empty_spend()
        self._dirty = False
        self._flushed = time.monotonic()

    def heard(self, call: dict) -> None:
        spent = call_spend(call)
        if spent is None:
            return
        add_spend(self._pending, spent)
        self._dirty = True
        if time.monotonic() - self._flushed >= self._every_s:
            self.flush()

    def flush(self) -> None:
        """Add what this worker spent since the last flush to the sweep's counters."""
        self._flushed = time.monotonic()
        if not self._dirty or self._store.unreachable is not None:
            return
        pending, self._pending, self._dirty = self._pending, empty_spend(), False
        self._counters.add(self._sweep_id, pending)

    def total(self) -> dict:
        """The sweep's spend, every worker's, this one's included."""
        self.flush()
        return self._counters.read(self._sweep_id)


def file_caps(data: dict) -> tuple[dict, Caps | None]:
    """A sweep file's mapping without its `caps:` (checked here), and those caps."""
    if "caps" not in data:
        return data, None
    rest = {k: v for k, v in data.items() if k != "caps"}
    given = data["caps"]
    if not isinstance(given, dict):
        raise UserError(
            "caps must be a mapping",
            field="caps",
            fix="write e.g. caps: {max_cost: 5.0, max_tokens: 2000000, max_calls: 10000}",
        )
    try:
        return rest, Caps.model_validate(given)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first.get("loc", ()))
        raise UserError(
            f"{where}: {first.get('msg')}",
            field="caps",
            fix="give max_cost (dollars, above 0), max_tokens and max_calls (1 or more)",
        ) from None


def stored_caps(store: Store, sweep_id: str) -> Caps | None:
    """The caps the sweep's file gave, kept on the sweep (None: none)."""
    caps = store.sweeps.get(sweep_id).get("caps")
    return Caps(**caps) if caps else None


def keep_file_caps(store: Store, sweep_id: str, caps: Caps | None) -> None:
    """Keep a sweep file's caps on the sweep (a re-created sweep takes the file's new ones)."""
    if caps is not None:
        sweep_spend(store).set_caps(sweep_id, caps.model_dump(exclude_none=True))


def sweep_caps(store: Store, sweep_id: str, given: Caps | None) -> Caps:
    """The caps a sweep runs under: the command's over the file's."""
    return (given or Caps()).over(stored_caps(store, sweep_id))


def require_prices(choices: Iterable[LLMChoice], caps: Caps | None) -> None:
    """A cap on money needs every model's price: refuse (exit 2) naming the first without."""
    if caps is None or caps.max_cost is None:
        return
    for choice in choices:
        if price_of(choice) is None:
            raise UserError(
                f"the price of {choice.model} is unknown, so a cost cap cannot be kept",
                field="--max-cost",
                fix=f"give the experiment's LLM entry {choice.key!r} its price in dollars per "
                "million tokens (price: {input: 0.15, output: 0.6}), or cap --max-tokens or "
                "--max-calls instead",
            )


def require_embedder_prices(embedders: Iterable[str | None], caps: Caps | None) -> None:
    """A cap on money needs the price of every memory stream's embedder that sends requests
    (an `openai:` one; those in this process cost nothing): refuse (exit 2) naming the first
    without one."""
    if caps is None or caps.max_cost is None:
        return
    for embedder in embedders:
        parse(embedder)  # a UserError naming memory.embedder when it does not parse
        model = priced_as(embedder or DEFAULT_EMBEDDER)
        if price_for(model) is None:
            raise UserError(
                f"the price of the memory stream's embedder {model} is unknown, so a cost cap "
                "cannot be kept",
                field="memory.embedder",
                fix=f"price it in your price file (SIM_PRICES, see docs/costs.md): "
                f"'{model}: {{input: 0.02, output: 0}}' in dollars per million tokens, or cap "
                "--max-tokens or --max-calls instead",
            )


def run_embedders(spec: object) -> list[str | None]:
    """The embedder a run's memory stream uses ([] without a stream)."""
    memory = getattr(spec, "memory", None)
    return [memory.embedder] if memory is not None and memory.is_stream else []


def sweep_embedders(store: Store, sweep_id: str) -> list[str | None]:
    """The embedders a sweep's runs may use: the experiment's stream's, and every
    `embedder:` the sweep file names."""
    sweep = store.sweeps.get(sweep_id)
    memory = (sweep.get("experiment") or {}).get("memory") or {}
    found: list[str | None] = [memory.get("embedder")] if memory.get("kind") == "stream" else []
    pending: list[object] = [sweep.get("spec") or {}]
    while pending:
        item = pending.pop()
        if isinstance(item, dict):
            named = item.get("embedder")
            if isinstance(named, str):
                found.append(named)
            pending.extend(item.values())
        elif isinstance(item, list):
            pending.extend(item)
    return found


def sweep_models(store: Store, sweep_id: str) -> list[LLMChoice]:
    """The LLM entries a sweep may call: the experiment's, and any model its file names that
    the experiment does not list."""
    sweep = store.sweeps.get(sweep_id)
    stored = (sweep.get("experiment") or {}).get("llms", [])
    listed = [LLMChoice.model_validate(c, context={"stored": True}) for c in stored]
    known = {c.key for c in listed} | {c.model for c in listed}
    named = (sweep.get("spec") or {}).get("llms") or []
    extra = [LLMChoice(model=m) for m in named if isinstance(m, str) and m not in known]
    return [*listed, *extra]


def metered(meter: SweepMeter, on_call: Callable[[dict], None]) -> Callable[[dict], None]:
    """`on_call` that also counts each finished call into the sweep's spend."""

    def heard(call: dict) -> None:
        on_call(call)
        meter.heard(call)

    return heard


def caps_in_file(file: str | None) -> Caps | None:
    """The `caps:` of a sweep file (None: the file gives none)."""
    if file is None:
        return None
    raw, _ = read_yaml_file(file)
    return file_caps(raw)[1] if isinstance(raw, dict) else None
