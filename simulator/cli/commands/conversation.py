"""`llm-sim conversation …`: list, show, favourite and delete conversations; browse a run's
memories; replay, fork or resume a run.

`list` reads the store only and lives here; the others (the run engine, the model clients, the
memory views) load from conversation_work.py when one of them runs, so a listing starts
quickly."""

from __future__ import annotations

import click

from simulator.cli.context import AppContext
from simulator.cli.lazy_group import LazyCommand, LazyGroup
from simulator.cli.transcript_view import print_conversations
from simulator.services import conversation_listing as listing

json_option = click.option("--json", "as_json", is_flag=True, help="Machine-readable output only.")

_WORK = "simulator.cli.commands.conversation_work"
# the first paragraph of each command's help (tests/cli/test_lazy_commands.py checks them)
COMMANDS: dict[str, LazyCommand] = {
    "show": LazyCommand(
        _WORK, "show_cmd", "Show a conversation (anyone may view any conversation)."
    ),
    "memory": LazyCommand(
        _WORK,
        "memory_cmd",
        "Browse a run's memory streams: each agent's memories over time with their importance, "
        "the evidence under each thought (--tree), and what one step's prompts showed (--step).",
    ),
    "replay": LazyCommand(
        _WORK,
        "replay_cmd",
        "Re-run a stored run (chat, grid or network) exactly, as a new run linked to it, and say "
        "whether every call got the same prompt and reply, or where it first diverged.",
    ),
    "fork": LazyCommand(
        _WORK,
        "fork_cmd",
        "Branch a conversation at one message: the new conversation shares the messages before it"
        " (read from the original, not copied), optionally says your text there, and continues "
        "under the changed settings, once per repetition. A grid run branches at a step and a "
        "network run at a round (--at N): the fork shares the steps (rounds) before N and "
        "continues under --llm and --seed.",
    ),
    "resume": LazyCommand(
        _WORK,
        "resume_cmd",
        "Finish a run that stopped (killed, interrupted, failed) and belongs to no sweep.",
    ),
    "favourite": LazyCommand(
        _WORK, "favourite_cmd", "Mark a conversation as one of your favourites."
    ),
    "delete": LazyCommand(
        _WORK,
        "delete_cmd",
        "Delete a conversation you own with its messages, calls, summaries and scores; with "
        "--with-forks, together with its forks (listed and counted before you confirm).",
    ),
}


@click.group(cls=LazyGroup, lazy_commands=COMMANDS)
def conversation() -> None:
    """List, show, favourite and delete conversations; browse a run's memories; replay a run."""


@conversation.command("list")
@click.option("--experiment", "experiment_id", help="Only conversations of this experiment.")
@click.option("--mine", is_flag=True, help="Only conversations you own.")
@click.option("--limit", type=int, help=f"Show the newest N (default {listing.PAGE}).")
@click.option("--all", "every", is_flag=True, help="Show every conversation (no page).")
@json_option
@click.pass_obj
def list_cmd(
    app: AppContext,
    experiment_id: str | None,
    mine: bool,
    limit: int | None,
    every: bool,
    as_json: bool,
) -> None:
    """List conversations, your favourites first, then newest first, one page at a time."""
    size = listing.check_limit(limit, every)
    page, note = listing.page_and_note(app, app.user, experiment_id, mine, size)
    docs = page.docs
    showing = page.showing()
    if as_json:
        app.print_json([{k: v for k, v in d.items() if k != "experiment"} for d in docs])
    elif not docs:
        app.console.print(
            "No conversations yet. Start one with: llm-sim run EXP_ID --agents … --messages …"
        )
    else:
        print_conversations(app.console, docs)
    if showing:  # with --json on stderr, so standard output stays one JSON document
        (app.err if as_json else app.console).print(showing, markup=False)
    if note:
        (app.err if as_json else app.console).print(note, markup=False)
