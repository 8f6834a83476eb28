"""A sweep's plan as `llm-sim sweep create` and the interactive sweep menu print it."""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.sweep_parts import plan_lines
from simulator.domain.plural import count
from simulator.services import sweeps as service


def print_plan(app: AppContext, plan: service.Plan, kind: str) -> None:
    """The plan once: how its cells came about and its size, what it will cost, a sample cell,
    what the world says of it (a chat's switches), and the defaults it applied."""
    conversations = count(plan.conversations, "conversation", thousands=True)
    size = f"{count(plan.cells, 'cell', thousands=True)}, {conversations}"
    if not plan.breakdown:
        head = size
    elif plan.breakdown.endswith(conversations):  # a chat's breakdown ends with its size
        head = plan.breakdown
    else:
        head = f"{plan.breakdown}; in all {size}"
    app.console.print(f"plan: {head}", markup=False, highlight=False)
    calls = f"{'at least ' if plan.calls_at_least else ''}{plan.expected_calls:,}"
    stored = count(plan.already_stored, "conversation", thousands=True)
    app.console.print(
        f"expected LLM calls: {calls} ({stored} of the plan already stored)",
        markup=False,
        highlight=False,
    )
    app.console.print(f"sample cell: {plan.sample.label()}", markup=False, highlight=False)
    for line in plan_lines(kind, plan):
        app.console.print(line, markup=False, highlight=False)
    for note in plan.defaults_applied:
        app.console.print(f"default: {note}", markup=False, highlight=False)
