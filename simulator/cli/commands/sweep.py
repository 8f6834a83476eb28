"""`llm-sim sweep …`: create a sweep, run it with many workers, watch it, resume it."""

from __future__ import annotations

import sys
from typing import get_args

import click

from simulator.cli.commands.sweep_options import fork_header, fork_options, json_option, run_options
from simulator.cli.context import AppContext
from simulator.cli.params import SEED
from simulator.cli.sweep_display import print_plan
from simulator.cli.sweep_running import run_sweep
from simulator.domain.plural import count
from simulator.domain.sweep import SweepSpec
from simulator.domain.yaml_io import load_model
from simulator.errors import UserError
from simulator.services import experiments as exp_service
from simulator.services import fork_sweeps
from simulator.services import sweeps as service
from simulator.worlds.chat.domain.profile import PROFILE_NAMES, profile_switches
from simulator.worlds.chat.domain.spec import SPEAKER_METHODS, ReplyCleaning, SpeakerFormat
from simulator.worlds.grid.cli.sweep_options import (
    grid_sweep_options,
    grid_sweep_spec,
    refuse_grid_sweep_flags,
)
from simulator.worlds.grid.services import sweeps as grid_sweeps
from simulator.worlds.network.cli.sweep_options import network_sweep_spec
from simulator.worlds.network.services import sweeps as network_sweeps


@click.group()
def sweep() -> None:
    """Batches of conversations over every combination asked for."""


@sweep.command("create")
@click.argument("experiment_id")
@click.argument("file", required=False, type=click.STRING)  # checked by the YAML reader
@click.option("--name", help="A name to find the sweep by (default: sweep).")
@click.option("--repetitions", type=int, help="Conversations per cell.")
@click.option("--llm", "llms", multiple=True, help="One model per conversation; repeatable.")
@click.option(
    "--manager-llm", help="Model that picks speakers for --speaker auto (default: the agents')."
)
@click.option(
    "--summarizer-llm", help="Model that writes the daily summaries (default: the agents')."
)
@click.option(
    "--messages",
    "total_messages",
    type=int,
    help="Total messages of each conversation: agent turns, or with --message-counting "
    "reference as the reference tool counted them.",
)
@click.option(
    "--message-counting",
    type=click.Choice(["agent_turns", "reference"]),
    help="reference: count as the reference tool did (the day's opening is one of the "
    "messages, so 20 gives 19 agent turns; odd totals allowed).",
)
@click.option(
    "--allow-repeat-speaker",
    is_flag=True,
    default=None,
    help="Let auto / manual pick the agent who just spoke (the reference never did).",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILE_NAMES),
    help="A set of the chat switches: reference = --reply-cleaning none --speaker-format "
    "name_field (as the reference tool ran a chat); over the file, under the two flags.",
)
@click.option(
    "--reply-cleaning",
    type=click.Choice(get_args(ReplyCleaning)),
    help="What each reply's clean text leaves out (default speakers; none keeps it whole).",
)
@click.option(
    "--speaker-format",
    type=click.Choice(get_args(SpeakerFormat)),
    help="How other speakers' turns reach a model (default prefix; name_field: one message "
    "each, the speaker in the message's name field).",
)
@click.option("--days", type=int, help="Days the messages are split over (default 1).")
@click.option(
    "--every-day-count/--exact-days", default=None, help="Try every day count from 1 to --days."
)
@click.option(
    "--agents", metavar="ROLE=N,…", help="Agents per role (the maximum with --every-combination)."
)
@click.option(
    "--every-combination/--fixed-agents",
    default=None,
    help="Every agent combination up to the maximum.",
)
@click.option(
    "--speaker",
    "speakers",
    multiple=True,
    type=click.Choice([m for m in SPEAKER_METHODS if m != "manual"]),
    help="A speaker method to try (default round_robin); repeatable.",
)
@click.option(
    "--variant",
    "variants",
    multiple=True,
    metavar="SECTION=NAME,…|all",
    help="e.g. 'Guard/Personality=all'.",
)
@click.option(
    "--seed",
    type=SEED,
    help="Sweep seed: each conversation's seed is derived from it, its cell and its repetition "
    "(default: none, not reproducible).",
)
@fork_options
@grid_sweep_options
@click.option("--dry-run", is_flag=True, help="Print the plan and write nothing.")
@click.option("--yes", is_flag=True, help="Create without asking.")
@json_option
@click.pass_obj
def create_cmd(
    app: AppContext,
    experiment_id: str,
    file: str | None,
    as_json: bool,
    dry_run: bool,
    yes: bool,
    **flags,
) -> None:
    """Create a sweep of EXPERIMENT_ID from FILE (YAML) and/or flags; flags win over the file.

    A fork sweep (--fork-from CONV_ID --fork-at DAY:INDEX, or fork: in FILE) branches a stored
    chat of EXPERIMENT_ID at one message: its agents, messages and days are the parent's."""
    view = exp_service.get(app.store, experiment_id, app.user)
    fork = {k: flags.pop(k) for k in ("fork_from", "fork_at", "fork_edit")}
    if (view.kind == "network" or view.kind == "grid") and any(
        v is not None for v in fork.values()
    ):
        raise UserError(
            f"{experiment_id} is a {'network' if view.kind == 'network' else 'grid'} experiment; "
            "fork sweeps branch a stored chat conversation at one message",
            field="--fork-from",
            fix="give the chat experiment of the conversation to fork",
        )
    if view.kind == "network":
        spec = network_sweep_spec(file, flags)
        plan = network_sweeps.plan(app.store, view, spec, app.user)
        creator = network_sweeps.create
    elif view.kind == "grid":
        spec = grid_sweep_spec(file, flags)
        plan = grid_sweeps.plan(app.store, view, spec, app.user)
        creator = grid_sweeps.create
    else:
        refuse_grid_sweep_flags(flags)
        spec = _spec_from(view, file, flags, fork)
        kind = fork_sweeps if spec.fork is not None else service
        plan = kind.plan(app.store, view, spec, app.user)
        creator = kind.create
    if as_json and dry_run:
        app.print_json(plan.as_dict())
        return
    if not as_json:
        print_plan(app, plan)
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
    doc, added = creator(app.store, view, spec, app.user, plan)
    if as_json:
        app.print_json({"sweep_id": doc["_id"], "added": added, **plan.as_dict()})
    else:
        app.console.print(
            f"Sweep [bold]{doc['_id']}[/bold]: {count(added, 'new conversation')} stored. "
            f"Run it: llm-sim sweep run {doc['_id']}"
        )


def _spec_from(view, file: str | None, flags: dict, fork: dict) -> SweepSpec:
    data: dict = {}
    if file is not None:
        data = load_model(file, SweepSpec, "sweep").model_dump(mode="json", exclude_unset=True)
    overrides = {
        "name": flags["name"],
        "repetitions": flags["repetitions"],
        "llms": list(flags["llms"]) or None,
        "manager_llm": flags["manager_llm"],
        "summarizer_llm": flags["summarizer_llm"],
        "total_messages": flags["total_messages"],
        "message_counting": flags["message_counting"],
        "allow_repeat_speaker": flags["allow_repeat_speaker"],
        "days": flags["days"],
        "every_day_count": flags["every_day_count"],
        "every_agent_combination": flags["every_combination"],
        "speaker_methods": list(flags["speakers"]) or None,
        "seed": flags["seed"],
        "reply_cleaning": flags["reply_cleaning"],
        "speaker_format": flags["speaker_format"],
    }
    if flags["profile"] is not None:  # over the file's switches, under the two flags
        data.update(profile_switches(flags["profile"]))
    if flags["agents"]:
        overrides["agents"] = exp_service.parse_counts(
            flags["agents"], view.experiment, field="--agents"
        )
    if flags["variants"]:
        overrides["variants"] = service.parse_variant_flags(flags["variants"])
    if overrides["llms"] and data.get("llm_assignments"):
        data.pop("llm_assignments")
    data.update({k: v for k, v in overrides.items() if v is not None})
    named = {"from": fork["fork_from"], "at": fork["fork_at"], "edit": fork["fork_edit"]}
    if any(v is not None for v in named.values()):  # the flags win over the file's fork:
        data["fork"] = {
            **(data.get("fork") or {}),
            **{k: v for k, v in named.items() if v is not None},
        }
    if ("total_messages" not in data or "agents" not in data) and not data.get("fork"):
        raise UserError(
            "a sweep needs total messages and agents per role",
            field="sweep",
            fix="give a sweep file or --messages N --agents ROLE=N,… (a fork sweep, "
            "--fork-from CONV_ID --fork-at D:I, takes them from the conversation it forks)",
        )
    return service.validate_spec(data, source=str(file) if file else None)


def _runner_command(name: str, verb: str, doc: str) -> None:
    """`run`, `resume` and `work` are one loop: claim, run, heartbeat; only the words differ."""

    @sweep.command(name, help=doc)
    @click.argument("sweep_id")
    @run_options
    @click.pass_obj
    def command(
        app: AppContext, sweep_id: str, concurrency: int, pools, lease_ttl: float, as_json: bool
    ) -> None:
        _fork_header(app, sweep_id, as_json)
        run_sweep(app, sweep_id, concurrency, pools, lease_ttl, as_json, verb)


_runner_command("run", "Running", "Run a sweep until every conversation is done or failed.")
_runner_command(
    "resume",
    "Resuming",
    "Finish a sweep after a crash; unfinished conversations continue from their last message.",
)
_runner_command(
    "work", "Working on", "Join a running sweep as one more worker (any machine, same database)."
)


def _fork_header(app: AppContext, sweep_id: str, as_json: bool) -> None:
    """A fork sweep's run starts by saying where its branches start and what they took from
    the parent."""
    if not as_json:
        for line in fork_header(app.store.sweeps.get(sweep_id)):
            app.err.print(line, markup=False, highlight=False)


@sweep.command("retry-failed")
@click.argument("sweep_id")
@run_options
@click.pass_obj
def retry_cmd(
    app: AppContext, sweep_id: str, concurrency: int, pools, lease_ttl: float, as_json: bool
) -> None:
    """Queue failed conversations again (they continue from their last message) and run."""
    service.require_owner(app.store, sweep_id, app.user, "retry")
    reset = app.store.sweeps.reset_failed(sweep_id)
    if not as_json:
        app.err.print(f"{count(reset, 'failed conversation')} queued again.")
    _fork_header(app, sweep_id, as_json)
    run_sweep(app, sweep_id, concurrency, pools, lease_ttl, as_json, "Retrying")


@sweep.command("status")
@click.argument("sweep_id")
@json_option
@click.pass_obj
def status_cmd(app: AppContext, sweep_id: str, as_json: bool) -> None:
    """Counts by status; works from another terminal while the sweep runs."""
    status = service.status(app.store, sweep_id)
    if as_json:
        app.print_json(status)
        return
    counts = status["counts"]
    app.console.print(
        f"[bold]{sweep_id}[/bold] ({status['name']}) of {status['experiment_id']}: "
        f"{counts['done']}/{status['total']} done, {counts['running']} running, "
        f"{counts['failed']} failed, {counts['pending'] + counts['interrupted']} waiting; "
        f"{count(status['calls'], 'call', thousands=True)}, "
        f"{count(status['tokens_out'], 'token', thousands=True)} out"
    )
    for worker in status["workers"]:
        app.console.print(f"worker: {worker}")
    for failed in status["failed"][:10]:
        app.console.print(f"failed {failed['id']} [{failed['cell']}]: {failed['error']}")


@sweep.command("list")
@click.option("--experiment", "experiment_id", help="Only sweeps of this experiment.")
@json_option
@click.pass_obj
def list_cmd(app: AppContext, experiment_id: str | None, as_json: bool) -> None:
    """List sweeps, newest first."""
    rows = []
    sweeps = app.store.sweeps.list(experiment_id)
    counts_of = app.store.sweeps.status_counts_of([doc["_id"] for doc in sweeps])
    for doc in sweeps:
        counts = counts_of[doc["_id"]]
        rows.append(
            {
                "sweep_id": doc["_id"],
                "name": doc.get("name"),
                "experiment_id": doc["experiment_id"],
                "owner": doc["owner"],
                "total": sum(counts.values()),
                "done": counts.get("done", 0),
                "failed": counts.get("failed", 0),
            }
        )
    if as_json:
        app.print_json(rows)
        return
    for row in rows:
        app.console.print(
            f"{row['sweep_id']}  {row['name']}  {row['experiment_id']}  {row['owner']}  "
            f"{row['done']}/{row['total']} done, {row['failed']} failed"
        )
