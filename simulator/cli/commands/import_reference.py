"""`llm-sim import reference`: a reference-tool database as this tool's experiments and
conversations, read-only on the source, idempotent, with a summary of what it did."""

from __future__ import annotations

import sys

import click
from rich.console import Console, Group
from rich.markup import escape
from rich.table import Table

from simulator.cli.context import AppContext
from simulator.cli.interrupts import Stopped, Terminated
from simulator.domain.plural import count
from simulator.errors import UserError
from simulator.services import reference_import as service
from simulator.settings import db_timeout_ms

ROW_NAMES = {
    "experiments": "experiments",
    "conversations": "conversations",
    "messages": "messages (openings included)",
}


@click.group("import")
def import_group() -> None:
    """Import another tool's data into this tool's database."""


@import_group.command("reference")
@click.option(
    "--from",
    "source_uri",
    required=True,
    metavar="MONGODB_URI_OR_DB",
    help="Where the reference tool's database is: mongodb://…, mongodb+srv://…, mongomock://…, "
    "or an embedded store's folder. Only read, never written.",
)
@click.option(
    "--db-name",
    "source_db",
    default=service.DEFAULT_SOURCE_DB,
    show_default=True,
    metavar="NAME",
    help="The reference's database name on that server.",
)
@click.option("--dry-run", is_flag=True, help="Show what would be imported; write nothing.")
@click.option("--yes", is_flag=True, help="Import without asking for confirmation.")
@click.option(
    "--strict", is_flag=True, help="Fail (exit 2, nothing written) if any document is skipped."
)
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
@click.pass_obj
def reference_cmd(
    app: AppContext,
    source_uri: str,
    source_db: str,
    dry_run: bool,
    yes: bool,
    strict: bool,
    as_json: bool,
) -> None:
    """Import the reference LLM Interaction Simulator's experiments, conversations and messages.

    Each imported document keeps its source id, creator and date; a second import adds nothing.
    The target is this tool's database (--db / SIM_DB).
    """
    source = service.open_source(source_uri, source_db, db_timeout_ms())
    try:
        plan = service.plan(app.store, source, source_db)
    finally:
        source.close()
    if strict and plan.skipped:
        if not as_json:
            print_summary(app.console, plan, dry_run=True)
        service.check_strict(plan)
    nothing = not plan.new_experiments and not plan.new_conversations
    if dry_run or nothing:
        _report(app, plan, dry_run=dry_run, as_json=as_json, nothing=nothing)
        return
    if not yes:
        if not sys.stdin.isatty():
            raise UserError(
                "the import asks for confirmation, and there is no terminal to ask on",
                field="--yes",
                fix="add --yes to import, or --dry-run to see what would be imported",
            )
        print_summary(app.console, plan, dry_run=True)
        if not click.confirm(confirm_question(plan), default=False):
            app.console.print("Nothing was imported.")
            return
    try:
        service.apply(app.store, plan)  # all or nothing: a stop removes what it wrote
    except (KeyboardInterrupt, Terminated) as exc:
        app.err.print(
            "Stopped: nothing was imported (what the import had written is removed again); "
            "run the same command again to import.",
            markup=False,
        )
        if isinstance(exc, Terminated):
            exc.announced = True
            raise
        raise Stopped() from None  # the line above said it all
    _report(app, plan, dry_run=False, as_json=as_json, nothing=False)


def _report(
    app: AppContext, plan: service.ImportPlan, dry_run: bool, as_json: bool, nothing: bool
) -> None:
    if as_json:
        app.print_json(plan.to_json(dry_run))
        return
    print_summary(app.console, plan, dry_run=dry_run)
    if nothing:
        app.console.print(nothing_message(plan))


def nothing_message(plan: service.ImportPlan) -> str:
    if not plan.tallies["experiments"].found and not plan.tallies["conversations"].found:
        return f"{plan.db_name} at {plan.source} holds no reference-tool documents."
    return "Nothing new to import: every convertible document is already present."


def confirm_question(plan: service.ImportPlan) -> str:
    return (
        f"Import {count(len(plan.new_experiments), 'experiment')} and "
        f"{count(len(plan.new_conversations), 'conversation')}?"
    )


def summary_table(plan: service.ImportPlan, dry_run: bool) -> Table:
    table = Table(
        title=escape(f"Reference import from {plan.source} ({plan.db_name})"),
        caption="dry run: nothing was written" if dry_run else None,
    )
    table.add_column("")
    table.add_column("found", justify="right")
    table.add_column("would import" if dry_run else "imported", justify="right")
    table.add_column("already present", justify="right")
    table.add_column("skipped", justify="right")
    for row, label in ROW_NAMES.items():
        tally = plan.tallies[row]
        table.add_row(
            label, str(tally.found), str(tally.imported), str(tally.present), str(tally.skipped)
        )
    return table


def summary_lines(plan: service.ImportPlan) -> list[str]:
    """Skipped documents with their reasons, then what the conversion changed (markup-safe)."""
    lines = []
    if plan.skipped:
        lines.append("[bold]Skipped[/bold] (left unchanged in the source):")
        lines += [f"  {s.kind} {s.source_id}: {escape(s.reason)}" for s in plan.skipped]
    notes = plan.notes()
    if notes:
        lines.append("[bold]Conversions[/bold]:")
        lines += [f"  - {escape(note)}" for note in notes]
    return lines


def print_summary(console: Console, plan: service.ImportPlan, dry_run: bool) -> None:
    console.print(Group(summary_table(plan, dry_run), *summary_lines(plan)))


def _add_table_command() -> None:
    from simulator.cli.commands.import_table import table_cmd

    import_group.add_command(table_cmd)


_add_table_command()
