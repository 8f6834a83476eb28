"""`llm-sim run` of a market experiment: its flag, header and a line per round."""

from __future__ import annotations

from typing import Any

import click

from market_world.domain.kind import Spec
from simulator.cli.context import AppContext
from simulator.cli.run_parts import RunChoices, plan_and_execute
from simulator.engine import events as ev
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome

GROUP = "Market options"
THIS = "a market experiment"
THESE = "market experiments"
TAKES = "a market run takes --rounds, --llm, --seed and --pool"
OPTIONS = (  # --rounds as the opinion network declares it: one flag of the command
    click.Option(
        ["--rounds"],
        type=click.IntRange(min=1),
        help="Rounds of offers at most (default: the experiment's market.rounds).",
    ),
)


def run(
    app: AppContext, view: ExperimentView, options: dict[str, Any], choices: RunChoices
) -> RunOutcome:
    return plan_and_execute(app, view, options, choices)


def print_header(app: AppContext, spec: Spec) -> None:
    s = spec.settings
    lines = [
        f"market: a buyer (from {s.buyer_start:g}) and a seller (from {s.seller_start:g}) of "
        f"{s.item}, up to {s.rounds} rounds ({spec.calls} calls at most)",
        f"model: {spec.llm.key}" + ("" if spec.seed is None else f"; seed {spec.seed}"),
        *(f"default: {note}" for note in spec.defaults_applied),
    ]
    for line in lines:
        app.err.print(line, markup=False, highlight=False)


class RoundLines:
    """The run's id when it ends, and a line per finished round (stderr)."""

    def __init__(self, app: AppContext, quiet: bool):
        self.app, self.quiet = app, quiet

    def __call__(self, event: ev.Event) -> None:
        if self.quiet:
            return
        if isinstance(event, ev.ConversationFinished):
            self.app.console.print(f"{event.conversation_id}: {event.status}", markup=False)

    def close(self) -> None:
        pass


def live_view(app: AppContext, as_json: bool) -> RoundLines:
    return RoundLines(app, as_json)
