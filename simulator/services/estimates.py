"""Estimates before anything runs: calls, tokens in and out, money and wall time, for one run
(`llm-sim run --dry-run`) or a whole sweep (`sweep create`, stored with the sweep).

How: each world says which calls a run of one cell makes and how big each prompt is, its real
prompts rendered with every reply standing in at the expected reply length
(services/estimate_parts.py); tokens are counted with the model's tokenizer where one is at
hand offline, else 4 characters per token (llm/token_count.py). Money comes from the price of
each LLM entry (domain/pricing.py: "price unknown" when nobody knows it, never $0); time from
the ledger's mean latency of each model, the calls of one run one after another where they wait
for each other, runs side by side up to the concurrency.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from simulator.domain.clock import now
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.plural import count
from simulator.domain.pricing import money, price_for
from simulator.llm.token_count import TokenCounter, counter_for
from simulator.services.estimate_parts import CallTally, EstimatePart, Shape
from simulator.services.experiments import ExperimentView
from simulator.services.sweep_parts import sweep_part
from simulator.store.call_stats import ModelCalls, model_calls
from simulator.store.store import Store
from simulator.store.sweep_estimates import save_estimate
from simulator.worlds import has_part, part

DEFAULT_CONCURRENCY = 8  # `sweep run`'s default: what a sweep's time is estimated at
KEYS = ("conversations", "calls", "tokens_in", "tokens_out", "cost", "seconds")


def estimate_part(kind: str) -> EstimatePart | None:
    """The world `kind`'s estimate, None when the world has none."""
    if not has_part(kind, "services.estimate"):
        return None
    return part(kind, "services.estimate")  # type: ignore[return-value]


class Estimator:
    """One estimate's shared state: the counters used, the ledger's figures per model."""

    def __init__(
        self,
        store: Store,
        models: Iterable[str],
        counter: TokenCounter | None = None,
    ) -> None:
        self._store = store
        self.stats: dict[str, ModelCalls] = model_calls(store, models)
        self._asked = set(self.stats) | set(models)
        self.methods: dict[str, None] = {}
        self._counter = counter
        self.shape = Shape(self._count_with, self._mean_reply)

    def _model(self, model: str) -> ModelCalls | None:
        """What the ledger says of `model` (asked once per model)."""
        if model not in self._asked:
            self._asked.add(model)
            self.stats.update(model_calls(self._store, [model]))
        return self.stats.get(model)

    def _mean_reply(self, model: str) -> float | None:
        stats = self._model(model)
        return stats.mean_tokens_out if stats is not None else None

    def _count_with(self, choice: LLMChoice) -> TokenCounter:
        counter = self._counter or counter_for(choice)
        self.methods[counter.name] = None
        return counter

    def cell(self, view: ExperimentView, run: Any, runs: int, parallel: int) -> tuple[dict, set]:
        """The figures of `runs` runs of the run spec `run`, and the LLM keys without a price."""
        world = estimate_part(view.kind)
        assert world is not None
        tallies = world.run_calls(view, run, self.shape)
        unknown: set[str] = set()
        cost: float | None = 0.0
        serial: float | None = 0.0
        for tally in tallies:
            price = price_for(tally.model, tally.price)
            if price is None:
                unknown.add(tally.key)
                cost = None
            elif cost is not None:
                cost += price.cost(tally.tokens_in, tally.tokens_out)
            latency = self._latency(tally)
            if latency is None:
                serial = None
            elif serial is not None:
                serial += tally.one_after_another * latency
        figures = {
            "conversations": runs,
            "calls": runs * sum(t.calls for t in tallies),
            "tokens_in": runs * sum(t.tokens_in for t in tallies),
            "tokens_out": runs * sum(t.tokens_out for t in tallies),
            "cost": None if cost is None else cost * runs,
            "seconds": None if serial is None else serial * runs / max(1, parallel),
        }
        return figures, unknown

    def _latency(self, tally: CallTally) -> float | None:
        if tally.calls == 0 or tally.one_after_another == 0:
            return 0.0
        stats = self._model(tally.model)
        return stats.mean_latency_s if stats is not None else None

    def method(self) -> str:
        return "; ".join(self.methods) or "no prompts counted"


def _total(cells: dict[str, dict]) -> dict:
    total: dict[str, Any] = {}
    for key in KEYS:
        values = [cell[key] for cell in cells.values()]
        total[key] = None if any(v is None for v in values) else sum(values)
    return total


def _document(
    estimator: Estimator, cells: dict[str, dict], unknown: set[str], concurrency: int | None
) -> dict:
    return {
        "taken_at": now(),
        "method": estimator.method(),
        "concurrency": concurrency,
        "cells": cells,
        "total": _total(cells),
        "price_unknown": sorted(unknown),
        "reply_tokens": {  # what each model's replies were sized at, and why
            model: f"ledger mean of {count(stats.calls, 'call')}"
            for model, stats in estimator.stats.items()
            if stats.mean_tokens_out is not None
        },
    }


def run_estimate(
    store: Store,
    view: ExperimentView,
    run: Any,
    models: list[LLMChoice],
    counter: TokenCounter | None = None,
) -> dict | None:
    """The estimate of one run of `run` (a world's run spec); None when the world has none."""
    world = estimate_part(view.kind)
    if world is None:
        return None
    estimator = Estimator(store, [m.model for m in models], counter)
    figures, unknown = estimator.cell(view, run, 1, 1)
    doc = _document(estimator, {"run": {"label": "this run", **figures}}, unknown, 1)
    doc["calls_at_least"] = world.calls_at_least(run)
    return doc


def sweep_estimate(
    store: Store,
    view: ExperimentView,
    spec: Any,
    planned: list[Any],
    concurrency: int = DEFAULT_CONCURRENCY,
    counter: TokenCounter | None = None,
) -> dict | None:
    """The estimate of a sweep's planned runs, cell by cell (each cell's first planned run
    sized, times its runs); None when the world has no estimate or this sweep gets none."""
    world = estimate_part(view.kind)
    if world is None or not planned:
        return None
    estimator = Estimator(store, [m.model for m in view.experiment.llms], counter)
    per_cell: dict[str, list[Any]] = {}
    for p in planned:
        per_cell.setdefault(p.cell_key, []).append(p)
    parallel = min(concurrency, len(planned))
    cells: dict[str, dict] = {}
    unknown: set[str] = set()
    at_least = False
    for key, runs in per_cell.items():
        run = _sweep_run(world, view, spec, runs[0])
        if run is None:
            return None
        figures, missing = estimator.cell(view, run, len(runs), parallel)
        cells[key] = {"label": runs[0].cell.label(), **figures}
        unknown |= missing
        at_least = at_least or world.calls_at_least(run)
    doc = _document(estimator, cells, unknown, concurrency)
    doc["calls_at_least"] = at_least
    return doc


def _sweep_run(world: EstimatePart, view: ExperimentView, spec: Any, planned: Any) -> Any:
    """A planned run's run spec: the world's own `sweep_run`, else its sweep part's
    `build_run` (the cell sweeps of services/world_sweeps.py)."""
    own = getattr(world, "sweep_run", None)
    if own is not None:
        return own(view, spec, planned)
    return sweep_part(view.kind).build_run(view, planned.cell, planned.seed)  # type: ignore[attr-defined]


def keep_with_sweep(store: Store, sweep_id: str, estimate: dict | None) -> None:
    """Store the estimate on the sweep just created (a sweep created before keeps its own)."""
    if estimate is not None:
        save_estimate(store, sweep_id, estimate)


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "time unknown (the ledger has no calls of these models yet)"
    if seconds < 90:
        return f"about {seconds:.0f} s"
    if seconds < 90 * 60:
        return f"about {seconds / 60:.0f} min"
    return f"about {seconds / 3600:.1f} h"


def at_concurrency(estimate: dict, concurrency: int) -> float | None:
    """The estimate's wall time at another concurrency than it was made at."""
    total = estimate["total"]
    seconds, made_at = total.get("seconds"), estimate.get("concurrency") or 1
    if seconds is None:
        return None
    runs = max(1, total.get("conversations") or 1)
    return seconds * min(made_at, runs) / min(concurrency, runs)


def estimate_lines(estimate: dict, concurrency: int | None = None) -> list[str]:
    """The estimate as the plan and the run header print it."""
    total = estimate["total"]
    at_least = "at least " if estimate.get("calls_at_least") else ""
    lines = [
        f"estimate: {at_least}{total['calls']:,} calls, {total['tokens_in']:,} tokens in, "
        f"{total['tokens_out']:,} tokens out; {money(total['cost'])}"
        + (
            f" (no price for {', '.join(estimate['price_unknown'])}: see llm-sim prices)"
            if estimate["price_unknown"]
            else ""
        )
    ]
    made_at = estimate.get("concurrency")
    conc = concurrency or made_at
    seconds = at_concurrency(estimate, conc) if conc else total["seconds"]
    at = f" at {count(conc, 'conversation')} at a time" if conc and conc > 1 else ""
    lines.append(f"estimate: {duration(seconds)}{at}")
    replies = estimate.get("reply_tokens") or {}
    sized = "; ".join(f"{m}: {why}" for m, why in replies.items())
    lines.append(
        f"estimate: tokens counted with {estimate['method']}; replies sized "
        + (f"by {sized}, else " if sized else "")
        + "at max_tokens (256 where none is set)"
    )
    return lines
