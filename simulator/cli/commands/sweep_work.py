"""`llm-sim sweep create|run|resume|work|retry-failed`: plan and store a sweep, run it with many
workers, resume it. Loaded when one of them runs (simulator/cli/commands/sweep.py)."""

from __future__ import annotations

import sys
from collections.abc import Callable

import click

from simulator.cli.caps import caps_from, file_caps_line
from simulator.cli.commands.sweep_options import fork_header, json_option, run_options
from simulator.cli.context import AppContext
from simulator.cli.estimate_display import print_estimate, print_stored_estimate, sweep_estimate
from simulator.cli.params import SEED
from simulator.cli.sweep_display import print_plan
from simulator.cli.sweep_parts import (
    FORK,
    WorldOptionsCommand,
    add_world_options,
    apply_world_values,
    sweep_spec,
    takes,
)
from simulator.cli.sweep_running import run_sweep
from simulator.domain.plural import count
from simulator.engine.gc_budget import fewer_collections
from simulator.errors import UserError
from simulator.services import estimates
from simulator.services import experiments as exp_service
from simulator.services import spend as spend_service
from simulator.services import sweeps as service
from simulator.services.sweep_parts import sweep_part


@click.command("create", cls=WorldOptionsCommand)
@click.argument("experiment_id")
@click.argument("file", required=False, type=click.STRING)  # checked by the YAML reader
@click.option("--name", help="A name to find the sweep by (default: sweep).")
@click.option("--repetitions", type=int, help="Runs per cell.")
@click.option("--llm", "llms", multiple=True, help="One model per run; repeatable.")
@click.option(
    "--seed",
    type=SEED,
    help="Sweep seed: each run's seed is derived from it (default: none, not reproducible).",
)
@click.option("--dry-run", is_flag=True, help="Print the plan and write nothing.")
@click.option("--yes", is_flag=True, help="Create without asking.")
@json_option
@click.pass_context
def create_cmd(
    ctx: click.Context,
    experiment_id: str,
    file: str | None,
    as_json: bool,
    dry_run: bool,
    yes: bool,
    **flags,
) -> None:
    """Create a sweep of EXPERIMENT_ID from FILE (YAML) and/or flags; flags win over the file.

    Each world takes its own flags (listed below by world); -W KEY=VALUE gives any of them by
    name. A fork sweep (--fork-from CONV_ID --fork-at DAY:INDEX, or fork: in FILE) branches a
    stored chat of EXPERIMENT_ID at one message: its agents, messages and days are the
    parent's."""
    app: AppContext = ctx.obj
    view = exp_service.get(app.store, experiment_id, app.user)
    apply_world_values(flags, ctx)
    if not takes(view.kind, FORK) and any(flags.get(k) is not None for k in FORK):
        raise UserError(
            f"{experiment_id} is a {view.kind} experiment; "
            "fork sweeps branch a stored chat conversation at one message",
            field="--fork-from",
            fix="give the chat experiment of the conversation to fork",
        )
    spec = sweep_spec(view.kind, file, flags, view)
    caps = spend_service.caps_in_file(file)  # kept on the sweep for its runners
    part = sweep_part(view.kind)
    with fewer_collections():  # engine/gc_budget.py: a plan holds every conversation
        plan = part.plan(app.store, view, spec, app.user)
    estimate = sweep_estimate(app, view, spec, plan)
    if as_json and dry_run:
        shown = None if estimate is None else {k: v for k, v in estimate.items() if k != "taken_at"}
        kept = None if caps is None else caps.model_dump(exclude_none=True)
        app.print_json({**plan.as_dict(), "estimate": shown, "caps": kept})  # same plan, same
        return
    if not as_json:
        print_plan(app, plan, view.kind)
        print_estimate(app, estimate)
        line = file_caps_line(caps)
        if line is not None:
            app.console.print(line, markup=False, highlight=False)
    note = service.embedded_scale_note(app.store, plan.conversations)
    if note:
        app.err.print(note, markup=False, highlight=False)
    if dry_run:
        return
    if (
        not yes
        and not as_json
        and sys.stdin.isatty()
        and not click.confirm("Create this sweep?", default=True)
    ):
        app.console.print("Nothing created.")
        return
    with fewer_collections():
        doc, added = part.create(app.store, view, spec, app.user, plan)
    estimates.keep_with_sweep(app.store, doc["_id"], estimate)
    spend_service.keep_file_caps(app.store, doc["_id"], caps)
    if as_json:
        shown = {"sweep_id": doc["_id"], "experiment_id": doc["experiment_id"], "added": added}
        app.print_json({**shown, **plan.as_dict(), "estimate": estimate})
        return
    stored = count(added, "new conversation", thousands=True)
    app.console.print(
        f"Sweep [bold]{doc['_id']}[/bold]: {stored} stored. Run it: llm-sim sweep run {doc['_id']}"
    )
    if doc["experiment_id"] != view.id:  # sweeps are keyed by content and owner, not by id
        app.console.print(
            f"{view.id} shapes its conversations as your {doc['experiment_id']} does, which "
            "has this sweep already: they share its conversations (a --seed of its own "
            "makes new ones).",
            markup=False,
        )


add_world_options(create_cmd, before="dry_run")


def _runner_command(
    name: str, verb: str, doc: str, before: Callable[[AppContext, str, bool], None] | None = None
) -> click.Command:
    """`run`, `resume`, `work` and `retry-failed` are one loop: claim, run, heartbeat; only the
    words differ, and what happens `before` it (retry-failed queues the failed ones again)."""

    @click.command(name, help=doc)
    @click.argument("sweep_id")
    @run_options
    @click.pass_obj
    def command(
        app: AppContext,
        sweep_id: str,
        concurrency: int,
        pools,
        lease_ttl: float,
        as_json: bool,
        max_cost: float | None,
        max_tokens: int | None,
        max_calls: int | None,
    ) -> None:
        if before is not None:
            before(app, sweep_id, as_json)
        _fork_header(app, sweep_id, as_json, concurrency)
        caps = caps_from(max_cost, max_tokens, max_calls)
        run_sweep(app, sweep_id, concurrency, pools, lease_ttl, as_json, verb, caps)

    return command


run_cmd = _runner_command(
    "run", "Running", "Run a sweep until every conversation is done or failed."
)
resume_cmd = _runner_command(
    "resume",
    "Resuming",
    "Finish a sweep after a crash; unfinished conversations continue from their last message.",
)
work_cmd = _runner_command(
    "work", "Working on", "Join a running sweep as one more worker (any machine, same database)."
)


def _fork_header(app: AppContext, sweep_id: str, as_json: bool, concurrency: int) -> None:
    """A fork sweep's run starts by saying where its branches start and what they took from
    the parent; any sweep's by what it was estimated at when it was created."""
    if not as_json:
        sweep = app.store.sweeps.get(sweep_id)
        for line in fork_header(sweep):
            app.err.print(line, markup=False, highlight=False)
        print_stored_estimate(app, sweep, concurrency)


def _queue_failed_again(app: AppContext, sweep_id: str, as_json: bool) -> None:
    service.require_owner(app.store, sweep_id, app.user, "retry")
    reset = app.store.sweeps.reset_failed(sweep_id)
    if not as_json:
        app.err.print(f"{count(reset, 'failed conversation')} queued again.")


retry_cmd = _runner_command(
    "retry-failed",
    "Retrying",
    "Queue failed conversations again (they continue from their last message) and run.",
    _queue_failed_again,
)
