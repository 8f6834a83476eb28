"""A sweep's plan as `llm-sim sweep create` and the interactive sweep menu print it."""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.services import sweeps as service


def print_plan(app: AppContext, plan: service.Plan) -> None:
    """The plan's factors, its size in cells, conversations and calls, a sample cell, and the
    defaults it applied."""
    if plan.breakdown:
        app.console.print(f"plan: {plan.breakdown}", markup=False, highlight=False)
    app.console.print(
        f"cells: {plan.cells}  conversations: {plan.conversations}  "
        f"expected LLM calls: {'at least ' if plan.calls_at_least else ''}"
        f"{plan.expected_calls:,}  already stored: {plan.already_stored}"
    )
    app.console.print(f"sample cell: {plan.sample.label()}")
    for note in plan.defaults_applied:
        app.console.print(f"default: {note}", markup=False, highlight=False)
