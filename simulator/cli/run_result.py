"""The `--json` result of a run (`llm-sim run`, a resumed run): the same fields for every
world, its kind included."""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.services.runs import RunOutcome


def print_run_json(app: AppContext, outcome: RunOutcome, kind: str) -> None:
    app.print_json(
        {
            "conversation_id": outcome.conversation_id,
            "kind": kind,
            "status": outcome.status,
            "error": outcome.error,
            "counters": outcome.counters,
        }
    )
