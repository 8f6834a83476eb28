"""`llm-sim info`: where things are, so a user can find their data and logs."""

from __future__ import annotations

import click

from simulator import __version__
from simulator.cli.context import AppContext
from simulator.identity import config_file
from simulator.settings import data_dir, default_store_path, log_dir, redact_uri


def info_data(app: AppContext) -> dict:
    store = app.store
    data = {
        "version": __version__,
        "store_kind": store.connection.kind,
        "store_location": redact_uri(store.connection.location),
        "database_source": app.target.source,
        "database_name": store.db.name,
        "default_store_path": str(default_store_path()),
        "data_dir": str(data_dir()),
        "user": app.user,
        "user_identity": app.user_note,
        "user_config_file": str(config_file()),
        "log_dir": str(log_dir().resolve()),
        "experiments": store.experiments.count(),  # this tool's own
    }
    # the reference tool's documents are left out above; say how many there are, and how to
    # import them (messages are not counted: a long scan, and they follow their conversations)
    foreign = store.foreign_counts(("experiments", "conversations"))
    for name, count in foreign.items():
        if count:
            data[f"reference_tool_{name}"] = count
    if any(foreign.values()):
        data["reference_tool_import"] = store.import_command
    return data


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")
@click.pass_obj
def info(app: AppContext, as_json: bool) -> None:
    """Show the store, the user and where logs and settings live."""
    data = info_data(app)
    if as_json:
        app.print_json(data)
        return
    for key, value in data.items():
        app.console.print(f"[bold]{key.replace('_', ' ')}[/bold]: {value}")
