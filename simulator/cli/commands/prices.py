"""`llm-sim prices [MODEL…]`: the price table, its date and page, and where each price comes
from (an experiment's `price:`, the researcher's price file, the shipped table, local)."""

from __future__ import annotations

import click

from simulator.cli.context import AppContext
from simulator.domain import pricing
from simulator.domain.model_strings import check_model_string
from simulator.errors import UserError


def _price_json(price: pricing.Price | None) -> dict | None:
    if price is None:
        return None
    return {
        "input_per_million": price.input_per_million,
        "output_per_million": price.output_per_million,
        "cached_input_per_million": price.cached_input_per_million,
        "source": price.source,
    }


def _rows(models: tuple[str, ...]) -> list[dict]:
    own = pricing.user_prices()
    if models:
        rows = []
        for model in models:
            try:
                check_model_string(model)
            except ValueError as exc:
                raise UserError(str(exc), field="MODEL", fix="give a model string") from None
            rows.append({"model": model, "price": _price_json(pricing.price_for(model))})
        return rows
    rows = [{"model": model, "price": _price_json(price)} for model, price in sorted(own.items())]
    for row in pricing.shipped_rows():
        shown = own.get(row.model.lower(), row.price)  # the researcher's file wins
        entry = {"model": row.model, "price": _price_json(shown), "page": row.page}
        if row.unsure:
            entry["unsure"] = True
        if row.model.lower() not in own:
            rows.append(entry)
    return rows


@click.command("prices")
@click.argument("models", nargs=-1)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
@click.pass_obj
def prices_cmd(app: AppContext, models: tuple[str, ...], as_json: bool) -> None:
    """What hosted models cost per million tokens, and where each figure comes from.

    Without MODEL: every price of your price file and of the shipped table. With MODEL
    (e.g. openai:gpt-4o-mini): the price a run of that model would be estimated and counted
    at. An experiment's LLM entry may set its own (price: {input: .., output: ..}), which wins
    over both. Models served locally (local:, ollama:, hf:) cost nothing."""
    rows = _rows(models)
    if as_json:
        app.print_json({"user_file": str(pricing.user_file()), "prices": rows})
        return
    width = max(len(row["model"]) for row in rows) if rows else 0
    app.console.print(
        "US dollars per million tokens: input, cached input, output; where the figure comes from",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
    for row in rows:
        price = row["price"]
        if price is None:
            said = "price unknown"
        else:
            cached = price["cached_input_per_million"]
            source = price["source"] + (" (unsure)" if row.get("unsure") else "")
            said = (
                f"in {price['input_per_million']:g}  "
                f"cached {'-' if cached is None else format(cached, 'g')}  "
                f"out {price['output_per_million']:g}  {source}"
            )
        app.console.print(
            f"{row['model']:<{width}}  {said}", markup=False, highlight=False, soft_wrap=True
        )
    pages = sorted({(r.taken, r.page) for r in pricing.shipped_rows()})
    for taken, page in pages:
        app.console.print(f"table figures taken {taken} from {page}", markup=False)
    app.console.print(
        f"your price file: {pricing.user_file()} (SIM_PRICES names another); "
        "local models (local:, ollama:, hf:) cost nothing",
        markup=False,
        highlight=False,
        soft_wrap=True,
    )
