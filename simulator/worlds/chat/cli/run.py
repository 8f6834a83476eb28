"""`llm-sim run` of a group chat: its flags, header, live view and the terminal speaker picker."""

from __future__ import annotations

import sys
from typing import Any, get_args

import click

from simulator.cli.context import AppContext
from simulator.cli.live import LiveView
from simulator.cli.run_parts import RunChoices, execute
from simulator.domain.llm_display import llm_name
from simulator.domain.plural import count
from simulator.errors import UserError
from simulator.services import runs
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome
from simulator.worlds.chat.cli.switches import switch_lines
from simulator.worlds.chat.domain.profile import PROFILE_NAMES
from simulator.worlds.chat.domain.spec import (
    SPEAKER_METHODS,
    ConversationSpec,
    ReplyCleaning,
    SpeakerFormat,
)

GROUP = "Group chat options"
THIS = "a group chat"
THESE = "group chats"
TAKES = (
    "a group chat takes --agents ROLE=N,…, --messages and the group chat options, --llm, "
    "--seed and --pool"
)

OPTIONS = (
    click.Option(
        ["--agents"],
        metavar="ROLE=N,…",
        help="Agents per role, e.g. guard=1,prisoner=2 (required).",
    ),
    click.Option(
        ["--messages", "total_messages"],
        type=int,
        help="Required. Total messages: agent turns, or with --message-counting reference the "
        "reference tool's count (each day's opening included: 20 gives 19 agent turns).",
    ),
    click.Option(
        ["--message-counting"],
        type=click.Choice(["agent_turns", "reference"]),
        default="agent_turns",
        show_default=True,
        help="How --messages counts: agent turns, or as the reference tool (a day's budget is "
        "messages // days, the researcher's opening included).",
    ),
    click.Option(
        ["--days"], type=int, default=1, show_default=True, help="Days the messages are split over."
    ),
    click.Option(
        ["--speaker"],
        type=click.Choice(SPEAKER_METHODS),
        default="round_robin",
        show_default=True,
        help="Who speaks next: in turn (round_robin), at random, roles in turn "
        "(role_alternating), picked by a manager LLM (auto) or by you at the terminal (manual).",
    ),
    click.Option(
        ["--llm-for"], multiple=True, metavar="ROLE=MODEL", help="Model for one role; repeatable."
    ),
    click.Option(["--manager-llm"], help="Model that picks speakers for --speaker auto."),
    click.Option(["--summarizer-llm"], help="Model that writes the daily summaries."),
    click.Option(
        ["--allow-repeat-speaker"],
        is_flag=True,
        help="Let auto and manual pick the agent who just spoke (the reference never did).",
    ),
    click.Option(
        ["--profile"],
        type=click.Choice(PROFILE_NAMES),
        default="default",
        show_default=True,
        help="A set of the chat switches: reference = --reply-cleaning none --speaker-format "
        "name_field (as the reference tool ran a chat); the two flags, when given, win.",
    ),
    click.Option(
        ["--reply-cleaning"],
        type=click.Choice(get_args(ReplyCleaning)),
        default=None,
        help="What the clean text leaves out: where a reply speaks for someone else (speakers, "
        "the default), also recited instructions and invented day headers (speakers_echoes), "
        "or nothing (none). Raw replies are always kept.",
    ),
    click.Option(
        ["--speaker-format"],
        type=click.Choice(get_args(SpeakerFormat)),
        default=None,
        help="How other speakers' turns reach a model: 'Name: text' lines (prefix, the "
        "default) or one message each with the speaker in the message's name field "
        "(name_field).",
    ),
)


def run(
    app: AppContext, view: ExperimentView, options: dict[str, Any], choices: RunChoices
) -> RunOutcome:
    """Plan the conversation, ask for the speakers at the terminal with --speaker manual, run
    it live."""
    spec = runs.plan(view, options, llm=choices.llm, seed=choices.seed)
    assert isinstance(spec, ConversationSpec)
    world: dict[str, Any] = {}
    if spec.speaker_method == "manual":
        if not sys.stdin.isatty():
            raise UserError(
                "--speaker manual asks a person for every speaker, and standard input is not a "
                "terminal",
                field="--speaker",
                fix="run it in a terminal, or choose round_robin, random, role_alternating or auto",
            )
        world["manual_input"] = _terminal_picker()
    return execute(app, view, spec, choices.as_json, choices.pools, choices.dry_run, **world)


def live_view(app: AppContext, as_json: bool) -> LiveView:
    return LiveView.for_output(app.console, as_json)


def print_header(app: AppContext, spec: ConversationSpec) -> None:
    """What will run, including every value the tool chose because nobody said."""
    app.err.print(counting_line(spec), markup=False, highlight=False)
    models = ", ".join(f"{role}: {llm_name(choice)}" for role, choice in spec.role_llms.items())
    extra = []
    if spec.manager_llm is not None:
        extra.append(f"manager: {llm_name(spec.manager_llm)}")
    if spec.summarizer_llm is not None:
        extra.append(f"summarizer: {llm_name(spec.summarizer_llm)}")
    app.err.print(f"models: {', '.join([models, *extra])}", markup=False, highlight=False)
    if spec.seed is not None:  # the run's seed, not the LLM entries' own (it replaces them)
        app.err.print(
            f"seed: {spec.seed} (speaker choice; every model call's seed is derived from it)",
            markup=False,
            highlight=False,
        )
    if spec.allow_repeat_speaker and spec.speaker_method in ("auto", "manual"):
        app.err.print(
            "allow_repeat_speaker: true (an agent may speak twice in a row; the reference "
            "tool never allowed it)",
            markup=False,
            highlight=False,
        )
    for line in switch_lines(spec.reply_cleaning, spec.speaker_format):
        app.err.print(line, markup=False, highlight=False)
    if spec.memory.kind != "summary":  # the default header is as it was before memory blocks
        app.err.print(f"memory: {spec.memory.describe()}", markup=False, highlight=False)
    for note in spec.defaults_applied:
        app.err.print(f"default: {note}", markup=False, highlight=False)


def counting_line(spec: ConversationSpec) -> str:
    """What the total means: agent turns, or (reference counting) a budget with the openings."""
    per_day = ", ".join(str(n) for n in spec.day_turns)
    days = count(spec.days, "day")
    if spec.message_counting == "reference":
        return (
            f"messages: {spec.total_messages} (reference counting: "
            f"{count(spec.agent_turns, 'agent turn')}) over {days}; agent turns per day: {per_day}"
        )
    return f"{count(spec.total_messages, 'message')} over {days}: {per_day}"


def _terminal_picker():
    """For `--speaker manual` outside the menus: ask on the terminal."""

    def ask(state) -> str:
        names = ", ".join(a.name for a in state.eligible)
        barred = f"; not {state.barred}, who just spoke" if state.barred else ""
        while True:
            try:
                answer = click.prompt(f"Next speaker ({names}{barred})", type=str)
            except (click.Abort, EOFError):
                # input closed: the conversation is interrupted (resumable), never left running
                raise KeyboardInterrupt from None
            if state.barred and answer.strip().lower() == state.barred.lower():
                click.echo(
                    f"{state.barred} just spoke and may not speak twice in a row "
                    "(run with --allow-repeat-speaker to allow it); choose another.",
                    err=True,
                )
                continue
            return answer

    return ask
