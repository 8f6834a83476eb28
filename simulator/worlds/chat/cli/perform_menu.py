"""A group chat's 'Perform conversation' entry: every choice of one conversation asked, then
run live like `llm-sim run` (the same service, so the menus list, show and delete it)."""

from __future__ import annotations

from collections.abc import Sequence

from simulator.cli.commands import run as run_cmd
from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.domain.limits import MAX_SEED
from simulator.domain.llm_choice import LLMChoice
from simulator.services.experiments import ExperimentView
from simulator.worlds.chat.domain.spec import MIN_MESSAGES_PER_DAY, SPEAKER_METHODS, split_messages
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.engine.speakers import InputFunction, TurnState
from simulator.worlds.chat.services import runs as conv_service

SPEAKER_HELP = {
    "round_robin": "agents in order, one after another",
    "random": "a random agent, never the same twice in a row",
    "role_alternating": "roles take turns; agents within a role rotate",
    "auto": "a manager LLM picks who speaks next",
    "manual": "you pick who speaks next, every turn",
}


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
