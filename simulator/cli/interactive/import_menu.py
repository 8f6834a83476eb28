"""Menu: import the reference tool's database (the `llm-sim import reference` service)."""

from __future__ import annotations

from simulator.cli.commands.import_reference import (
    confirm_question,
    nothing_message,
    print_summary,
)
from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.services import reference_import as service
from simulator.settings import db_timeout_ms, redact_uri

CURRENT = "current"
OTHER = "other"


def run_import_reference(app: AppContext) -> None:
    """Ask where the reference's database is, show the dry run, confirm, import."""
    uri = _ask_source(app)
    db_name = _ask_db_name(uri)
    source = service.open_source(uri, db_name, db_timeout_ms())
    try:
        plan = service.plan(app.store, source, db_name)
    finally:
        source.close()
    print_summary(app.console, plan, dry_run=True)
    if not plan.new_experiments and not plan.new_conversations:
        app.console.print(nothing_message(plan), markup=False)
        return
    if not ask.confirm(confirm_question(plan), default=True):
        app.console.print("Nothing was imported.")
        return
    service.apply(app.store, plan)
    print_summary(app.console, plan, dry_run=False)


def _ask_source(app: AppContext) -> str:
    """The current database by default (shown without its password), or another location."""
    current = app.target.uri
    picked = ask.select(
        "Where is the reference tool's database?",
        [
            (f"This tool's database: {redact_uri(current)}", CURRENT),
            ("Somewhere else (a mongodb:// URI or an embedded store's folder)", OTHER),
        ],
        default=CURRENT,
    )
    if picked == CURRENT:
        return current
    return ask.ask_required(
        "Location", note="A mongodb://USER:PASSWORD@HOST:PORT address, or a folder."
    )


def _ask_db_name(uri: str) -> str:
    """Pick from the server's databases when it lists them, as the reference did at login."""
    names = service.list_databases(uri, db_timeout_ms())
    default = service.DEFAULT_SOURCE_DB
    if names:
        ordered = sorted(names)
        choices = [(name, name) for name in ordered] + [("Another name…", OTHER)]
        start = default if default in names else ordered[0]
        picked = ask.select("Which database holds the reference's data?", choices, start)
        if picked != OTHER:
            return picked
    return ask.ask_required("Database name", default=default)
