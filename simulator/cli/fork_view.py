"""`llm-sim conversation fork` and `conversation resume`: the header, the runs, the outcome."""

from __future__ import annotations

import asyncio
from typing import Any

from simulator.cli.context import AppContext
from simulator.cli.fork_parts import listener, live_view
from simulator.cli.interrupts import StoppedRuns, run_until_stopped
from simulator.cli.live import run_access
from simulator.cli.run_parts import run_cli_part
from simulator.cli.run_result import print_run_json
from simulator.engine import events as ev
from simulator.errors import UserError
from simulator.services import forks
from simulator.services import runs as run_service
from simulator.services.runs import RunOutcome
from simulator.worlds import kind_of


def fork_cli(
    app: AppContext, parent_id: str, at: str, *, as_json: bool, **changes: Any
) -> list[RunOutcome]:
    """Check everything, print what will run, store the continuations, run them in turn;
    `changes` are `forks.plan`'s (edit, llm, llm_for, variants, speaker, repetitions, seed)."""
    plan = forks.plan(app.store, parent_id, at, **changes)
    if not as_json:
        show_plan(app, plan)
    outcomes = run_fork(app, plan, as_json)
    if as_json:
        app.print_json(
            {
                "fork_of": plan.parent_id,
                "fork_at": plan.point.as_dict(),
                "fork_group": plan.group,
                "edited": plan.edit is not None,
                "notes": plan.notes,
                "defaults": plan.defaults,
                "conversations": [
                    {
                        "conversation_id": o.conversation_id,
                        "seed": spec.seed,
                        "status": o.status,
                        "error": o.error,
                        "counters": o.counters,
                    }
                    for o, spec in zip(outcomes, plan.specs, strict=False)
                ],
            }
        )
    return outcomes


def show_plan(app: AppContext, plan: forks.ForkPlan) -> None:
    """What a fork will run before it runs: its notes (`fork: …`), then the run header with
    the values nobody chose (`default: …`); on stderr, as `conversation fork` prints them."""
    for note in plan.notes:
        app.err.print(f"fork: {note}", markup=False, highlight=False)
    run_cli_part(plan.kind).print_header(app, plan.specs[0])


class _Live:
    """The event sink of a run of `kind`: the world's live view (a chat's message lines, a
    grid's field) and whatever else listens (a network's round lines); `close` ends it."""

    def __init__(self, app: AppContext, kind: str, as_json: bool):
        self.view = live_view(kind, app.console, as_json)
        self.rounds = listener(kind, app, as_json)

    def __call__(self, event: ev.Event) -> None:
        self.view(event)
        if self.rounds is not None:
            self.rounds(event)

    def close(self) -> None:
        self.view.close()


def run_fork(app: AppContext, plan: forks.ForkPlan, as_json: bool = False) -> list[RunOutcome]:
    """Preflight the models, store the continuations, run them one after another live (the
    commands and the menu share it); Ctrl-C stops at once (KeyboardInterrupt), what is stored
    stays, the one running marked interrupted."""
    live = _Live(app, plan.kind, as_json)
    runs = StoppedRuns(live)
    llms = run_access(app.err, as_json)
    total = len(plan.specs)

    def done(outcome: RunOutcome) -> None:
        if not as_json:
            app.console.print(
                f"{outcome.conversation_id}: fork of {plan.parent_id} at {plan.point}, "
                f"{outcome.status}",
                markup=False,
            )

    async def go(stop: asyncio.Event) -> list[RunOutcome]:
        try:
            await forks.preflight(plan, llms)
            docs = forks.create(app.store, plan, app.user)
            for doc in docs:
                runs.add(doc["_id"])
            if not as_json and total > 1:
                app.err.print(f"{total} continuations: {', '.join(d['_id'] for d in docs)}")
            return await forks.run_all(app.store, docs, llms, runs, stop, done)
        finally:
            live.close()
            await llms.aclose()

    return run_until_stopped(go, app.err, runs)


def resume_cli(app: AppContext, run_id: str, as_json: bool) -> RunOutcome:
    """Finish a stopped run that belongs to no sweep: it continues after its last stored
    message (step, round) and answers its finished calls from the ledger."""
    doc = app.store.conversations.get(run_id)
    if doc.get("status") == "done":
        raise UserError(f"{run_id} is done; there is nothing to resume")
    if doc.get("sweep_id"):
        raise UserError(
            f"{run_id} belongs to sweep {doc['sweep_id']}, which runs it under a lease",
            fix=f"run `llm-sim sweep resume {doc['sweep_id']}`",
        )
    app.store.conversations.require_owner(run_id, app.user, "resume")
    kind = kind_of(doc)
    live = _Live(app, kind, as_json)
    runs = StoppedRuns(live)
    runs.add(run_id)
    llms = run_access(app.err, as_json)

    async def go(stop: asyncio.Event) -> RunOutcome:
        try:
            return await run_service.run(app.store, run_id, llms, runs, stop)
        finally:
            live.close()
            await llms.aclose()

    outcome = run_until_stopped(go, app.err, runs)
    if as_json:  # otherwise the live view has said how the run ended
        print_run_json(app, outcome, kind)
    return outcome
