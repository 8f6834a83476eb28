"""The experiment menu's 'Conversations' entry: its runs, whatever their world, and for one of
them View, prompts, memories, fork, replay, favourite and delete.

It goes through the same services as `llm-sim conversation …`, so a run browsed here is the one
the commands list, show and delete. How a world's runs are performed is its views part's
(simulator/cli/view_parts.py).
"""

from __future__ import annotations

from simulator.cli.context import AppContext
from simulator.cli.interactive import fork_menu
from simulator.cli.interactive import prompts as ask
from simulator.cli.transcript_view import (
    lineage_lines,
    listing_row,
    show_prompts,
    show_transcript,
)
from simulator.cli.view_parts import optional, views_for
from simulator.errors import NotFound
from simulator.memory.cli import menu as memory_menu
from simulator.services import conversation_deletion as deletion
from simulator.services import conversation_listing as listing_service
from simulator.services import runs
from simulator.services.experiments import ExperimentView

PAGE_CALLS = 20  # more calls than this are shown in a pager


def _label(doc: dict, user: str) -> str:
    """A conversation in the picker: a chat's messages, a grid run's steps, a network run's
    rounds (the fields `conversation list` shows)."""
    row = listing_row(doc)
    done = optional(views_for(doc), "PICKER_PROGRESS").format(row["messages"])
    owner = f"{doc['owner']} (you)" if doc["owner"] == user else doc["owner"]
    star = "★" if doc.get("favourite") else " "
    lineage = fork_menu.lineage_label(doc)
    return (
        f"{star} {row['id']} — {row['status']} — {row['agents']} — {done} — "
        f"{row['speaker']} — {row['created']} — {owner}" + (f" — {lineage}" if lineage else "")
    )


MORE = "\x00more"  # the picker's "show more" choice (no conversation id starts with NUL)


def browse(app: AppContext, view: ExperimentView) -> None:
    """This experiment's conversations, favourites first, one page at a time (the page that
    `llm-sim conversation list` shows); Back returns to the experiment."""
    limit = listing_service.PAGE
    while True:
        listing = listing_service.list_page(app.store, app.user, experiment_id=view.id, limit=limit)
        if not listing.docs:
            app.console.print(
                "No conversations of this experiment yet; use 'Perform conversation'."
            )
            return
        choices = [(_label(d, app.user), d["_id"]) for d in listing.docs]
        if listing.partial:
            more = min(listing_service.PAGE, listing.total - len(listing.docs))
            shown = f"{len(listing.docs):,} of {listing.total:,} shown"
            choices.append((f"Show {more} more ({shown})", MORE))
        picked = ask.select("Which conversation?", [*choices, ("Back", "")])
        if not picked:
            return
        if picked == MORE:
            limit += listing_service.PAGE
            continue
        _one(app, view.id, picked)


def _find(app: AppContext, experiment_id: str, conversation_id: str) -> dict | None:
    """The conversation as listed (with this user's favourite flag); None once deleted."""
    try:
        doc = listing_service.listed(app.store, app.user, conversation_id)
    except NotFound:
        return None
    return doc if doc.get("experiment_id") == experiment_id else None


def _one(app: AppContext, experiment_id: str, conversation_id: str) -> None:
    """View, prompts, memories, fork, replay, favourite, delete for one conversation, until
    Back or it is deleted."""
    first = True
    while True:
        doc = _find(app, experiment_id, conversation_id)
        if doc is None:
            return
        if first:  # where it comes from: the run it replays, the message it was forked at
            for line in lineage_lines(doc):
                app.console.print(line, markup=False, highlight=False)
            first = False
        star = " ★" if doc["favourite"] else ""
        fav = "Remove from favourites" if doc["favourite"] else "Add to favourites"
        choices = [("View", "view"), ("View prompts", "prompts")]
        if memory_menu.offered(app, doc):  # a run without a memory stream has none to browse
            choices.append(("Browse memories", "memories"))
        choices.append(("Fork here (continue from a chosen message)", "fork"))
        if doc["status"] == "done":  # a replay is compared with a finished run
            choices.append(("Replay (re-run exactly and compare)", "replay"))
        choices.append((fav, "favourite"))
        if doc["owner"] == app.user:  # only the owner may delete
            choices.append(("Delete", "delete"))
        choices.append(("Back", "back"))
        picked = ask.select(f"Conversation {conversation_id} ({doc['status']}){star}", choices)
        if picked == "back":
            return
        if picked == "view":
            show_transcript(app.console, runs.transcript(app.store, conversation_id))
        elif picked == "prompts":
            _prompts(app, conversation_id)
        elif picked == "memories":
            memory_menu.browse(app, conversation_id)
        elif picked == "fork":
            fork_menu.fork_here(app, conversation_id)
        elif picked == "replay":
            fork_menu.replay(app, conversation_id)
        elif picked == "favourite":
            runs.set_favourite(app.store, conversation_id, app.user, not doc["favourite"])
            change = "removed from" if doc["favourite"] else "added to"
            app.console.print(f"{conversation_id} {change} your favourites.")
        elif _delete(app, doc):
            return


def _prompts(app: AppContext, conversation_id: str) -> None:
    """Every call's exact messages; a long ledger goes through the pager, as plain text: the
    default pager (less without -R) shows colour codes as literal `ESC[1m` text."""
    calls = runs.prompts(app.store, conversation_id)
    if not calls:
        app.console.print("No calls recorded yet.")
    elif len(calls) > PAGE_CALLS and app.console.is_terminal:
        with app.console.pager(styles=False):
            show_prompts(app.console, calls)
    else:
        show_prompts(app.console, calls)


def _delete(app: AppContext, doc: dict) -> bool:
    """Only the owner deletes (after confirming); True when it is gone."""
    cid = doc["_id"]
    if doc["owner"] != app.user:
        app.console.print(
            f"Conversation {cid} belongs to {doc['owner']}; only its owner may delete it.",
            markup=False,
        )
        return False
    # the question names every fork deleted with it (conversation_deletion.py's rule)
    planned = deletion.plan(app.store, cid, app.user, with_forks=True)
    if not ask.confirm(planned.question(), default=False):
        app.console.print("Nothing deleted.")
        return False
    done = deletion.delete(app.store, cid, app.user, with_forks=True)
    app.console.print(done.done_message(), markup=False)
    return True
