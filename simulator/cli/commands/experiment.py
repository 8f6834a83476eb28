"""`llm-sim experiment …`: the whole life of an experiment without a menu."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import click
from rich.markup import escape

from simulator.cli.context import AppContext
from simulator.cli.read_only import read_only
from simulator.cli.render import experiment_detail, experiments_table, rendered_prompts
from simulator.cli.view_parts import optional, views_of
from simulator.domain.world import domain_of
from simulator.errors import UserError
from simulator.services import experiments as service
from simulator.worlds import names

# Paths are checked where they are read or written (a NUL byte makes click's own check raise).
PATH = click.STRING
json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")


@click.group()
def experiment() -> None:
    """Import (or create), list, show, duplicate, export, update and delete experiments."""


def _import_file(app: AppContext, file: str, as_json: bool) -> None:
    """`import` and `create` are one operation under two names (the reference called it import)."""
    checked = service.load_file(file)  # before the store is opened: a bad file touches nothing
    view = service.create(app.store, checked, app.user)
    if as_json:
        app.print_json(view.summary())
    else:
        app.console.print(
            f"Created experiment [bold]{view.id}[/bold] ({escape(view.experiment.name)})."
        )


@experiment.command("import")
@click.argument("file", type=PATH)
@json_option
@click.pass_obj
def import_cmd(app: AppContext, file: str, as_json: bool) -> None:
    """Read an experiment from a YAML FILE (validated whole before anything is written).

    The same as 'llm-sim experiment create FILE'.
    """
    _import_file(app, file, as_json)


@experiment.command("create")
@click.argument("file", type=PATH)
@json_option
@click.pass_obj
def create_cmd(app: AppContext, file: str, as_json: bool) -> None:
    """Create an experiment from a YAML FILE (validated whole before anything is written).

    The same as 'llm-sim experiment import FILE'.
    """
    _import_file(app, file, as_json)


@experiment.command("list")
@click.option("--mine", is_flag=True, help="Only experiments you own.")
@click.option("--favourites", is_flag=True, help="Only your favourites.")
@json_option
@click.pass_obj
def list_cmd(app: AppContext, mine: bool, favourites: bool, as_json: bool) -> None:
    """List experiments: your favourites first, then newest first."""
    views, note = read_only(
        app,
        lambda store: (
            service.list_views(store, app.user, mine=mine, favourites=favourites),
            service.foreign_note(store),
        ),
    )
    if as_json:
        app.print_json([v.summary() for v in views])
    elif not views:
        app.console.print(
            "No experiments yet. Import one: "
            "llm-sim experiment create prompts/experiments/prison.yaml"
        )
    else:
        app.console.print(experiments_table(views, app.user, app.console.width))
    if note:  # with --json on stderr, so standard output stays one JSON document
        (app.err if as_json else app.console).print(note, markup=False)


@experiment.command("show")
@click.argument("experiment_id")
@click.option(
    "--render",
    "render_counts",
    metavar="ROLE=N,…",
    help="Also show the prompts rendered for these agent counts, e.g. guard=2,prisoner=1.",
)
@json_option
@click.pass_obj
def show_cmd(app: AppContext, experiment_id: str, render_counts: str | None, as_json: bool) -> None:
    """Show one experiment (anyone may view any experiment)."""
    view = read_only(app, lambda store: service.get(store, experiment_id, app.user))
    counts = prompts = None
    if render_counts is not None:
        counts, prompts = _rendered(view, render_counts)
    if as_json:
        data = view.to_json()
        if prompts is not None:
            data["rendered"] = {"counts": counts, "prompts": prompts}
        app.print_json(data)
        return
    app.console.print(experiment_detail(view))
    if prompts is not None:
        rendered_prompts(app.console, prompts, counts)


def _rendered(view: service.ExperimentView, text: str) -> tuple[dict, dict]:
    """`--render`'s agents and prompts, by the experiment's world; a world that renders no
    prompts for agent counts refuses it."""
    rendered = optional(views_of(view.kind), "rendered")
    if rendered is None:
        takes = [domain_of(k).LABEL for k in names() if optional(views_of(k), "rendered")]
        raise UserError(
            f"it shows the prompts the agents of each role read, and {view.id} is a "
            f"{domain_of(view.kind).LABEL} experiment, which has no roles",
            field="--render",
            fix=f"leave --render out (it applies to {' and '.join(takes)} experiments)",
        )
    return rendered(view.experiment, text)


@experiment.command("duplicate")
@click.argument("experiment_id")
@click.option("--name", help="Name of the copy (default: '<name> (copy)').")
@json_option
@click.pass_obj
def duplicate_cmd(app: AppContext, experiment_id: str, name: str | None, as_json: bool) -> None:
    """Copy any experiment into one you own."""
    view = service.duplicate(app.store, experiment_id, app.user, name=name)
    if as_json:
        app.print_json(view.summary())
    else:
        app.console.print(
            f"Duplicated {escape(experiment_id)} as [bold]{view.id}[/bold] "
            f"({escape(view.experiment.name)})."
        )


@experiment.command("export")
@click.argument("experiment_id")
@click.option(
    "-o",
    "--output",
    type=PATH,
    help="Write to this file instead of standard output.",
)
@click.pass_obj
def export_cmd(app: AppContext, experiment_id: str, output: str | None) -> None:
    """Export an experiment as YAML that re-imports to the same experiment."""
    text = service.export_yaml(app.store, experiment_id, app.user)
    if output is None:
        click.echo(text, nl=False)
        return
    write_text_file(Path(output), text, "--output")
    app.err.print(f"Exported {experiment_id} to {output}.", markup=False)


def write_text_file(path: Path, text: str, field: str) -> None:
    """Write `text` to an ordinary file, or raise one UserError naming the path and the fix.

    An existing FIFO or device is refused rather than opened (opening a FIFO blocks until a
    reader appears); the folder must exist (it is not created behind the user's back).
    """
    name = str(path)
    fix = "choose a writable file path, or leave -o out to print to standard output"
    try:
        if not name.strip():
            raise UserError("the output path is empty", field=field, fix=fix)
        if os.path.lexists(path):
            mode = os.stat(path).st_mode
            if stat.S_ISDIR(mode):
                raise UserError(f"{name!r} is a folder", field=field, fix=fix)
            if not stat.S_ISREG(mode):
                raise UserError(f"{name!r} is not an ordinary file", field=field, fix=fix)
        folder = path.parent
        if not folder.is_dir():
            raise UserError(f"the folder {str(folder)!r} does not exist", field=field, fix=fix)
        path.write_text(text, encoding="utf-8")
    except (OSError, ValueError) as exc:  # ValueError: a NUL byte in the path
        reason = getattr(exc, "strerror", None) or str(exc)
        raise UserError(f"cannot write {name!r} ({reason})", field=field, fix=fix) from None


@experiment.command("update")
@click.argument("experiment_id")
@click.option("--note", help="New note (owner only).")
@click.option(
    "--favourite/--no-favourite", default=None, help="Mark or unmark as one of your favourites."
)
@json_option
@click.pass_obj
def update_cmd(
    app: AppContext, experiment_id: str, note: str | None, favourite: bool | None, as_json: bool
) -> None:
    """Change the note (owner only) or your favourite flag."""
    if note is None and favourite is None:
        raise UserError(
            "nothing to update",
            field="update",
            fix="pass --note TEXT and/or --favourite/--no-favourite",
        )
    view = service.update(app.store, experiment_id, app.user, note=note, favourite=favourite)
    if as_json:
        app.print_json(view.summary())
    else:
        app.console.print(f"Updated {experiment_id}.")


@experiment.command("delete")
@click.argument("experiment_id")
@click.option("--yes", is_flag=True, help="Do not ask for confirmation.")
@click.pass_obj
def delete_cmd(app: AppContext, experiment_id: str, yes: bool) -> None:
    """Delete an experiment you own with its conversations, messages, calls, summaries, scores
    and sweeps (after saying how many)."""
    view = service.get(app.store, experiment_id, app.user)
    counts = service.deletion_counts(app.store, experiment_id, app.user)
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(
                f"deleting needs confirmation ({service.delete_question(view, counts)})",
                field="--yes",
                fix="pass --yes when not at a terminal",
            )
        if not click.confirm(service.delete_question(view, counts), default=False):
            app.console.print("Nothing deleted.")
            return
    done = service.delete(app.store, experiment_id, app.user)
    app.console.print(service.deleted_message(experiment_id, done), markup=False)
