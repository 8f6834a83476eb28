"""How the screens show a market (simulator/cli/view_parts.py)."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.text import Text

from simulator.cli.transcript_view import shown, stored_count, unit_rows
from simulator.services.experiments import ExperimentView

RUN_ENTRIES = ()  # runs start from `llm-sim run`


def roles_cell(view: ExperimentView) -> str:
    return f"market: buyer and seller, {view.experiment.market.rounds} rounds"


def detail(view: ExperimentView) -> list[RenderableType]:
    m = view.experiment.market
    return [
        Text(
            f"kind market: {m.item}; buyer from {m.buyer_start:g}, seller from "
            f"{m.seller_start:g}; up to {m.rounds} rounds"
        )
    ]


def listing_cells(doc: dict) -> dict[str, str]:
    rounds = doc["spec"]["settings"]["rounds"]
    return {
        "agents": "buyer and seller",
        "messages": f"round {stored_count(doc) // 2}/{rounds}",
        "days": "-",
        "speaker": "market",
    }


def run_line(run: dict) -> str:
    spec = run["spec"]
    return f"market: {spec['settings']['item']}, model {spec['llm']['model']}"


def show_rows(console: Console, data: dict) -> None:
    for row in unit_rows(console, data, "round", lambda n: ""):
        kept = " (no number: last offer kept)" if row["fallback"] else ""
        console.print(f"{row['agent']} offers {row['offer']:g}{kept}: {shown(row['reply'])}")
