"""`llm-sim experiment …`: the whole life of an experiment without a menu."""

from __future__ import annotations

from pathlib import Path

import click

from simulator.cli.context import AppContext
from simulator.cli.render import experiment_detail, experiments_table, rendered_prompts
from simulator.errors import UserError
from simulator.services import experiments as service

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")


@click.group()
def experiment() -> None:
    """Create, list, show, duplicate, export, update and delete experiments."""


@experiment.command("create")
@click.argument("file", type=click.Path(dir_okay=False, path_type=Path))
@json_option
@click.pass_obj
def create_cmd(app: AppContext, file: Path, as_json: bool) -> None:
    """Import an experiment from a YAML FILE (validated whole before anything is written)."""
    view = service.import_yaml(app.store, file, app.user)
    if as_json:
        app.print_json(view.summary())
    else:
        app.console.print(f"Created experiment [bold]{view.id}[/bold] ({view.experiment.name}).")


@experiment.command("list")
@click.option("--mine", is_flag=True, help="Only experiments you own.")
@click.option("--favourites", is_flag=True, help="Only your favourites.")
@json_option
@click.pass_obj
def list_cmd(app: AppContext, mine: bool, favourites: bool, as_json: bool) -> None:
    """List experiments: your favourites first, then newest first."""
    views = service.list_views(app.store, app.user, mine=mine, favourites=favourites)
    if as_json:
        app.print_json([v.summary() for v in views])
    elif not views:
        app.console.print(
            "No experiments yet. Import one: "
            "llm-sim experiment create prompts/experiments/prison.yaml"
        )
    else:
        app.console.print(experiments_table(views, app.user))


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
    view = service.get(app.store, experiment_id, app.user)
    counts = service.parse_counts(render_counts, view.experiment) if render_counts else None
    prompts = service.render(view, counts) if counts else None
    if as_json:
        data = view.to_json()
        if prompts is not None:
            data["rendered"] = {"counts": counts, "prompts": prompts}
        app.print_json(data)
        return
    app.console.print(experiment_detail(view))
    if prompts is not None:
        rendered_prompts(app.console, prompts, counts)


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
            f"Duplicated {experiment_id} as [bold]{view.id}[/bold] ({view.experiment.name})."
        )


@experiment.command("export")
@click.argument("experiment_id")
@click.option(
    "-o",
    "--output",
    type=click.Path(dir_okay=False, path_type=Path),
    help="Write to this file instead of standard output.",
)
@click.pass_obj
def export_cmd(app: AppContext, experiment_id: str, output: Path | None) -> None:
    """Export an experiment as YAML that re-imports to the same experiment."""
    text = service.export_yaml(app.store, experiment_id, app.user)
    if output is None:
        click.echo(text, nl=False)
        return
    try:
        output.write_text(text, encoding="utf-8")
    except OSError as exc:
        raise UserError(
            f"cannot write {output} ({exc.strerror})",
            field="--output",
            fix="choose a writable path",
        ) from None
    app.err.print(f"Exported {experiment_id} to {output}.")


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
    """Delete an experiment you own."""
    view = service.get(app.store, experiment_id, app.user)
    app.store.experiments.require_owner(experiment_id, app.user, "delete")
    if not yes and not click.confirm(
        f"Delete {experiment_id} ({view.experiment.name})?", default=False
    ):
        app.console.print("Nothing deleted.")
        return
    service.delete(app.store, experiment_id, app.user)
    app.console.print(f"Deleted {experiment_id}.")
