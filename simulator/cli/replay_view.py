"""`llm-sim conversation replay`: the header, the run, the verdict (plain lines or --json)."""

from __future__ import annotations

import asyncio

from simulator.cli.context import AppContext
from simulator.cli.interrupts import StoppedRuns, run_until_stopped
from simulator.cli.live import run_access
from simulator.domain.replay_verdict import Verdict
from simulator.services import replays
from simulator.services.replays import ReplayResult


def replay_cli(
    app: AppContext, run_id: str, *, llm: str | None, force: bool, as_json: bool
) -> None:
    """Check the original and the model, store and run the replay, print the verdict."""
    plan = replays.plan(app.store, run_id, llm)
    llms = run_access(app.err, as_json)
    runs = StoppedRuns()

    def header(checked: replays.ReplayPlan) -> None:
        if as_json:
            return
        for note in checked.notes:
            app.err.print(f"replay: {note}", markup=False, highlight=False)
        for warning in checked.warnings:
            app.err.print(f"warning: {warning}", markup=False, highlight=False)

    async def go(stop: asyncio.Event) -> ReplayResult:
        try:
            return await replays.replay(
                app.store,
                plan,
                llms,
                app.user,
                force=force,
                on_event=runs,
                stop=stop,
                on_checked=header,
            )
        finally:
            await llms.aclose()

    result = run_until_stopped(go, app.err, runs)
    if as_json:
        app.print_json(
            {
                "replay_id": result.outcome.conversation_id,
                "replay_of": plan.original_id,
                "kind": plan.kind,
                "status": result.outcome.status,
                "error": result.outcome.error,
                "llm": plan.llm,
                "notes": plan.notes,
                "warnings": plan.warnings,
                **result.verdict.to_json(),
            }
        )
        return
    outcome = result.outcome
    app.console.print(
        f"{outcome.conversation_id}: replay of {plan.original_id}, {outcome.status}",
        markup=False,
    )
    if outcome.error:
        app.console.print(f"error: {outcome.error}", markup=False)
    print_verdict(app, result.verdict)


def print_verdict(app: AppContext, verdict: Verdict) -> None:
    app.console.print(f"verdict: {verdict.headline()}", markup=False)
    if verdict.caveat:
        app.console.print(verdict.caveat, markup=False)
    if verdict.divergence is not None and verdict.divergence.diff:
        app.console.print(verdict.divergence.diff, markup=False, highlight=False, soft_wrap=True)
