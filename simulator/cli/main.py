"""Entry point: `llm-sim` commands, or the interactive menu when no command is given."""

from __future__ import annotations

import logging
import sys

import click

from simulator import __version__
from simulator.cli.interrupts import Stopped, Terminated, sigterm_ends_the_command
from simulator.cli.lazy_group import LazyCommand, LazyGroup
from simulator.errors import StoreUnavailable, UserError
from simulator.logs import redact, start_session_logs
from simulator.settings import load_env_file, log_dir

log = logging.getLogger(__name__)

# A command's module (and what it imports: the store, models, analysis, reports) loads only when
# that command runs; `llm-sim --help` lists the summaries (the first paragraph of each command's
# help, checked against it by tests/cli/test_lazy_commands.py) and imports none of them.
COMMANDS: dict[str, LazyCommand] = {
    "experiment": LazyCommand(
        "simulator.cli.commands.experiment",
        "experiment",
        "Import (or create), list, show, duplicate, export, update and delete experiments.",
    ),
    "conversation": LazyCommand(
        "simulator.cli.commands.conversation",
        "conversation",
        "List, show, favourite and delete conversations; browse a run's memories; replay a run.",
    ),
    "run": LazyCommand(
        "simulator.cli.commands.run",
        "run_cmd",
        "Run EXPERIMENT_ID once, shown live and stored as it happens (the options under the "
        "heading of the experiment's world apply to it).",
    ),
    "sweep": LazyCommand(
        "simulator.cli.commands.sweep",
        "sweep",
        "Batches of conversations over every combination asked for.",
    ),
    "demo": LazyCommand(
        "simulator.cli.commands.demo",
        "demo",
        "Import the prison experiment if absent and run one short conversation, live.",
    ),
    "info": LazyCommand(
        "simulator.cli.commands.info",
        "info",
        "Show the store, the user and where logs and settings live.",
    ),
    "prices": LazyCommand(
        "simulator.cli.commands.prices",
        "prices_cmd",
        "What hosted models cost per million tokens, and where each figure comes from.",
    ),
    "export": LazyCommand(
        "simulator.cli.commands.analysis",
        "export_cmd",
        "Export tidy tables of an experiment, a sweep or one conversation (see docs/analysis.md).",
    ),
    "measures": LazyCommand(
        "simulator.cli.commands.analysis",
        "measures_cmd",
        "Built-in measures per cell: mean and 95% confidence interval over repetitions.",
    ),
    "score": LazyCommand(
        "simulator.cli.commands.score",
        "score",
        "Score the finished conversations of TARGET (exp_…, sweep_… or conv_…).",
    ),
    "agreement": LazyCommand(
        "simulator.cli.commands.agreement",
        "agreement_cmd",
        "Cohen's kappa, agreement and confusion matrix between two label sources.",
    ),
    "report": LazyCommand(
        "simulator.cli.commands.report",
        "report",
        "Write one HTML file: experiment, plan and status, measures, plots and transcripts.",
    ),
    "import": LazyCommand(
        "simulator.cli.commands.import_reference",
        "import_group",
        "Import another tool's data into this tool's database.",
    ),
}


@click.group(
    cls=LazyGroup,
    lazy_commands=COMMANDS,
    invoke_without_command=True,
    context_settings={"help_option_names": ["-h", "--help"]},
)
@click.option(
    "--db",
    "db",
    metavar="URI",
    help="Database: mongodb://…, mongodb+srv://…, a folder path, or mongomock://. [env SIM_DB]",
)
@click.option(
    "--db-name", metavar="NAME", help="Database name inside the server. [env SIM_DB_NAME]"
)
@click.option("--user", metavar="NAME", help="Act as this user. [env SIM_USER]")
@click.version_option(__version__, prog_name="llm-sim")
@click.pass_context
def cli(ctx: click.Context, db: str | None, db_name: str | None, user: str | None) -> None:
    """LLM Interaction Simulator: social experiments with LLM agents, stored in MongoDB."""
    from simulator.cli.context import AppContext  # rich and the store: not for --help

    app = AppContext(db_flag=db, db_name=db_name, user_flag=user)
    ctx.obj = app
    ctx.call_on_close(app.close)
    if ctx.invoked_subcommand is None:
        from simulator.cli.interactive.app import run_interactive

        run_interactive(app)


def _store_unavailable(exc: StoreUnavailable) -> None:
    """One sentence: which store stopped taking writes, that nothing stored is lost, what to do
    (exit status 75); the traceback goes to the session log only."""
    log.error("store unavailable: %s", exc.render(), exc_info=exc)
    click.echo(redact(exc.render()), err=True)
    sys.exit(exc.exit_code)


def main(argv: list[str] | None = None) -> None:
    """Run the CLI; a UserError becomes one readable paragraph and exit status 2."""
    load_env_file()
    session = start_session_logs(log_dir())  # its folder is made when a run starts
    log.info(
        "llm-sim %s: %s", __version__, redact(" ".join(sys.argv[1:] if argv is None else argv))
    )
    try:
        with sigterm_ends_the_command():
            cli.main(
                args=argv, prog_name="llm-sim", auto_envvar_prefix="SIM", standalone_mode=False
            )
    except UserError as exc:
        log.error("user error: %s", exc.render())
        click.echo(f"Error: {redact(exc.render())}", err=True)
        sys.exit(exc.exit_code)
    except StoreUnavailable as exc:
        _store_unavailable(exc)
    except Terminated as exc:
        if not exc.announced:
            click.echo("Stopped (SIGTERM).", err=True)
        sys.exit(exc.code)
    except click.exceptions.Abort as exc:
        if not isinstance(exc.__cause__, Stopped):  # a stopped run printed its own line
            click.echo("Aborted.", err=True)
        sys.exit(130)
    except click.ClickException as exc:
        exc.show()
        sys.exit(exc.exit_code)
    except KeyboardInterrupt as exc:
        if not isinstance(exc, Stopped):
            click.echo("\nInterrupted.", err=True)
        sys.exit(130)
    except click.exceptions.Exit as exc:
        sys.exit(exc.exit_code)
    except Exception as exc:
        from simulator.store.outage import classify

        outage = classify(exc)
        if outage is None:
            raise
        _store_unavailable(outage)
    finally:
        if session.folder is not None:
            log.debug("session log folder %s", session.folder)
