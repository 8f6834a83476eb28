"""The experiment menu's 'Perform conversation' and 'Conversations' entries.

Both go through the same services as `llm-sim run` and `llm-sim conversation …`, so a conversation
started here is the one the commands list, show and delete.
"""

from __future__ import annotations

from collections.abc import Sequence

from simulator.cli.commands import run as run_cmd
from simulator.cli.context import AppContext
from simulator.cli.interactive import fork_menu
from simulator.cli.interactive import prompts as ask
from simulator.cli.transcript_view import (
    lineage_lines,
    listing_row,
    show_prompts,
    show_transcript,
)
from simulator.domain.experiment import LLMChoice
from simulator.domain.limits import MAX_SEED
from simulator.errors import NotFound
from simulator.memory.cli import menu as memory_menu
from simulator.services import conversation_deletion as deletion
from simulator.services import conversation_listing as listing_service
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.domain.spec import MIN_MESSAGES_PER_DAY, SPEAKER_METHODS, split_messages
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.engine.speakers import InputFunction, TurnState
from simulator.worlds.chat.services import runs as conv_service
from simulator.worlds.grid.domain.experiment import is_grid
from simulator.worlds.network.domain.experiment import is_network

SPEAKER_HELP = {
    "round_robin": "agents in order, one after another",
    "random": "a random agent, never the same twice in a row",
    "role_alternating": "roles take turns; agents within a role rotate",
    "auto": "a manager LLM picks who speaks next",
    "manual": "you pick who speaks next, every turn",
}
PAGE_CALLS = 20  # more calls than this are shown in a pager


# -- Perform conversation ----------------------------------------------------------------------


def _pick_model(app: AppContext, message: str, models: Sequence[LLMChoice]) -> str:
    """One of the experiment's LLM entries, by its key (label or model); asked only when there
    is a choice."""
    if len(models) == 1:
        app.console.print(f"{message}: {llm_name(models[0])}", markup=False)
        return models[0].key
    return ask.select(message, [(llm_name(m), m.key) for m in models], default=models[0].key)


def enough_messages(total: int) -> str | None:
    """The check on a total of messages (a conversation's or a sweep's), or None when enough."""
    if total < MIN_MESSAGES_PER_DAY:
        return f"{total} is too few: a conversation needs at least {MIN_MESSAGES_PER_DAY} messages"
    return None


COUNTING_CHOICES = [
    ("agent turns — the total is the number of agent messages", "agent_turns"),
    (
        "as the reference tool — each day's opening counts as a message (20 gives 19 turns)",
        "reference",
    ),
]


def manual_picker() -> InputFunction:
    """The engine's input function for the manual method: a select of the agents' names.

    It runs on the conversation's event loop (`run_async`) and leaves SIGINT alone, so the
    run's own Ctrl-C handler (cancel the request in flight, stop) stays in place between picks.
    Ctrl-C at the pick itself stops the conversation at once (marked interrupted).
    """

    async def pick(state: TurnState) -> str:
        names = [a.name for a in state.agents]
        after = names.index(state.previous) + 1 if state.previous in names else 0
        default = names[after % len(names)]
        if default == state.barred:  # the previous speaker is not offered (no repeats)
            default = names[(after + 1) % len(names)]
        last = f"; last: {state.previous}" if state.previous else ""
        question = ask.select_question(
            f"Day {state.day}, message {state.turn + 1}{last}. Who speaks next?",
            [(f"{a.name} ({a.role})", a.name) for a in state.eligible],
            default=default,
        )
        try:
            answer = await question.application.run_async(
                handle_sigint=False, set_exception_handler=False
            )
        except EOFError:
            raise KeyboardInterrupt from None
        if answer is None:
            raise KeyboardInterrupt
        return answer

    return pick


def perform(app: AppContext, view: ExperimentView) -> None:
    """Ask every choice of one conversation, then run it live like `llm-sim run`."""
    exp = view.experiment
    models = list(exp.llms)
    llm_for = tuple(
        f"{role.name}={_pick_model(app, f'LLM for role {role.name}', models)}" for role in exp.roles
    )
    method = ask.select(
        "How is the next speaker chosen?",
        [(f"{m} — {SPEAKER_HELP[m]}", m) for m in SPEAKER_METHODS],
        default="round_robin",
    )
    manager = (
        _pick_model(app, "Manager LLM (picks the speakers)", models) if method == "auto" else None
    )
    repeat = method in ("auto", "manual") and ask.confirm(
        "May the same agent speak twice in a row?",
        default=False,
        note="The reference tool never allowed it.",
    )
    summarizer = (
        _pick_model(app, "Summarizer LLM (writes each day's summary)", models)
        if exp.summarizer_sections
        else None
    )
    counting = ask.select("How are messages counted?", COUNTING_CHOICES, default="agent_turns")
    total = ask.ask_number("Total messages", int, enough_messages, default=10)
    assert total is not None
    days = ask.ask_int("Days", 1, total // MIN_MESSAGES_PER_DAY, default=1)
    assert days is not None
    split = ", ".join(str(n) for n in split_messages(total, days, counting))
    if counting == "reference":
        app.console.print(
            f"agent turns per day: {split} (each day's opening counts as its first message)",
            markup=False,
        )
    else:
        app.console.print(f"agent turns per day: {split}", markup=False)
    counts = {
        role.name: ask.ask_int(f"Agents of role {role.name}", 1, 99, default=1)
        for role in exp.roles
    }
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, optional=True)
    spec = conv_service.build_spec(
        view,
        agents=",".join(f"{name}={n}" for name, n in counts.items()),
        total_messages=total,
        days=days,
        speaker=method,
        llm=models[0].key,
        llm_for=llm_for,
        manager_llm=manager,
        summarizer_llm=summarizer,
        seed=seed,
        message_counting=counting,
        allow_repeat_speaker=repeat,
    )
    if not ask.confirm(
        "Start the conversation?",
        default=True,
        note="Ctrl-C stops it at once; nothing stored is lost.",
    ):
        app.console.print("Nothing started.")
        return
    manual = manual_picker() if method == "manual" else None
    try:
        outcome = run_cmd.execute(app, view, spec, False, manual_input=manual)
    except KeyboardInterrupt:
        app.console.print("Stopped at once; the conversation is kept, marked interrupted.")
        return
    error = f" ({outcome.error})" if outcome.error else ""
    app.console.print(
        f"Conversation {outcome.conversation_id} {outcome.status}{error}; "
        "see it under Conversations.",
        markup=False,
    )


# -- Conversations -----------------------------------------------------------------------------


def _label(doc: dict, user: str) -> str:
    """A conversation in the picker: a chat's messages, a grid run's steps, a network run's
    rounds (the fields `conversation list` shows)."""
    row = listing_row(doc)
    done = row["messages"] if is_grid(doc) or is_network(doc) else f"{row['messages']} messages"
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
            show_transcript(app.console, conv_service.transcript(app.store, conversation_id))
        elif picked == "prompts":
            _prompts(app, conversation_id)
        elif picked == "memories":
            memory_menu.browse(app, conversation_id)
        elif picked == "fork":
            fork_menu.fork_here(app, conversation_id)
        elif picked == "replay":
            fork_menu.replay(app, conversation_id)
        elif picked == "favourite":
            conv_service.set_favourite(app.store, conversation_id, app.user, not doc["favourite"])
            change = "removed from" if doc["favourite"] else "added to"
            app.console.print(f"{conversation_id} {change} your favourites.")
        elif _delete(app, doc):
            return


def _prompts(app: AppContext, conversation_id: str) -> None:
    """Every call's exact messages; a long ledger goes through the pager, as plain text: the
    default pager (less without -R) shows colour codes as literal `ESC[1m` text."""
    calls = conv_service.prompts(app.store, conversation_id)
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
