"""`llm-sim sweep …`: create a sweep, run it with many workers, watch it, resume it.

`status` and `list` read the store only and live here; creating and running a sweep (the
planner, the estimates, the runner and the model clients) load from sweep_work.py when one of
those commands runs, so a status from another terminal starts quickly."""

from __future__ import annotations

from typing import Any

import click
from rich.markup import escape

from simulator.cli.context import AppContext
from simulator.cli.lazy_group import LazyCommand, LazyGroup
from simulator.cli.read_only import read_only
from simulator.domain.spend import describe_spend
from simulator.services import sweep_status

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")

_WORK = "simulator.cli.commands.sweep_work"
# the first paragraph of each command's help (tests/cli/test_lazy_commands.py checks them)
COMMANDS: dict[str, LazyCommand] = {
    "create": LazyCommand(
        _WORK,
        "create_cmd",
        "Create a sweep of EXPERIMENT_ID from FILE (YAML) and/or flags; flags win over the file.",
    ),
    "run": LazyCommand(_WORK, "run_cmd", "Run a sweep until every conversation is done or failed."),
    "resume": LazyCommand(
        _WORK,
        "resume_cmd",
        "Finish a sweep after a crash; unfinished conversations continue from their last message.",
    ),
    "work": LazyCommand(
        _WORK,
        "work_cmd",
        "Join a running sweep as one more worker (any machine, same database).",
    ),
    "retry-failed": LazyCommand(
        _WORK,
        "retry_cmd",
        "Queue failed conversations again (they continue from their last message) and run.",
    ),
}


@click.group(cls=LazyGroup, lazy_commands=COMMANDS)
def sweep() -> None:
    """Batches of conversations over every combination asked for."""


@sweep.command("status")
@click.argument("sweep_id")
@json_option
@click.pass_obj
def status_cmd(app: AppContext, sweep_id: str, as_json: bool) -> None:
    """Counts by status; works from another terminal while the sweep runs."""
    status = sweep_status.status_of(app, sweep_id)
    if as_json:
        app.print_json(status)
        return
    counts = status["counts"]
    app.console.print(
        f"[bold]{sweep_id}[/bold] ({escape(str(status['name']))}) of {status['experiment_id']}: "
        f"{counts['done']}/{status['total']} done, {counts['running']} running, "
        f"{counts['failed']} failed, {counts['pending'] + counts['interrupted']} waiting; "
        f"{_regular(status['calls'], 'call')}, {_regular(status['tokens_out'], 'token')} out"
    )
    app.console.print(f"spent so far: {describe_spend(status['spend'])}", markup=False)
    for worker in status["workers"]:
        app.console.print(f"worker: {worker}", markup=False)
    for failed in status["failed"][:10]:
        cell = f" [{failed['cell']}]" if failed["cell"] else ""  # a cell label is printed as it is
        app.console.print(f"failed {failed['id']}{cell}: {failed['error']}", markup=False)


@sweep.command("list")
@click.option("--experiment", "experiment_id", help="Only sweeps of this experiment.")
@json_option
@click.pass_obj
def list_cmd(app: AppContext, experiment_id: str | None, as_json: bool) -> None:
    """List sweeps, newest first."""
    rows = []
    sweeps, counts_of = read_only(app, lambda store: _listed(store, experiment_id))
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


def _listed(store: Any, experiment_id: str | None) -> tuple[list[dict], dict]:
    """The sweeps (of the experiment), newest first, and each one's counts by status."""
    sweeps = store.sweeps.list(experiment_id)
    return sweeps, store.sweeps.status_counts_of([doc["_id"] for doc in sweeps])


def _regular(n: int, noun: str) -> str:
    """'1 call', '2,000 calls': a regular noun's plural without loading inflect's grammar
    (domain/plural.py: some 60 modules) into a status that must start quickly."""
    return f"{n:,} {noun if n == 1 else noun + 's'}"
