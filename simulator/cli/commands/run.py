"""`llm-sim run EXP_ID …`: one conversation, shown live, stored as it happens."""

from __future__ import annotations

import asyncio
import sys
from typing import get_args

import click

from simulator.cli.context import AppContext
from simulator.cli.interrupts import StoppedRuns, run_until_stopped
from simulator.cli.live import LiveView, run_access
from simulator.cli.params import SEED, pool_sizes
from simulator.domain.plural import count
from simulator.errors import UserError
from simulator.services import experiments as exp_service
from simulator.worlds.chat.cli.switches import switch_lines
from simulator.worlds.chat.domain.profile import PROFILE_NAMES, profile_switches
from simulator.worlds.chat.domain.spec import (
    SPEAKER_METHODS,
    ConversationSpec,
    ReplyCleaning,
    SpeakerFormat,
)
from simulator.worlds.chat.engine.run import llm_name
from simulator.worlds.chat.services import runs as conv_service
from simulator.worlds.chat.services.runs import RunOutcome
from simulator.worlds.grid.cli.run import (
    grid_agents,
    grid_options,
    refuse_chat_flags,
    refuse_grid_flags,
    run_grid_cli,
)
from simulator.worlds.network.cli.run import (
    free_chat_rounds,
    network_options,
    refuse_flags,
    run_network_cli,
)


def execute(
    app: AppContext,
    view: exp_service.ExperimentView,
    spec: ConversationSpec,
    as_json: bool,
    manual_input=None,
    pools: dict[str, int] | None = None,
) -> RunOutcome:
    """Preflight the models, store the conversation, run it live; shared with `demo`."""
    live = LiveView.for_output(app.console, as_json)
    llms = run_access(app.err, as_json, pools)
    runs = StoppedRuns(live)

    async def go(stop: asyncio.Event) -> RunOutcome:
        try:
            await conv_service.preflight(spec, llms)
            doc = conv_service.create(app.store, view, spec, app.user)
            runs.add(doc["_id"])
            return await conv_service.run(
                app.store, doc["_id"], llms, on_event=runs, stop=stop, manual_input=manual_input
            )
        finally:
            live.close()
            await llms.aclose()

    if not as_json:
        print_header(app, spec)
    outcome = run_until_stopped(go, app.err, runs)
    if as_json:
        app.print_json(
            {
                "conversation_id": outcome.conversation_id,
                "status": outcome.status,
                "error": outcome.error,
                "counters": outcome.counters,
            }
        )
    return outcome


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


@click.command("run")
@click.argument("experiment_id")
@click.option(
    "--agents",
    metavar="ROLE=N,…|N",
    help="Agents per role, e.g. guard=1,prisoner=2 (required for a chat); for a grid "
    "experiment the number of agents (default: the experiment's).",
)
@click.option(
    "--messages",
    "total_messages",
    type=int,
    help="Required for a chat. Total messages: agent turns, or with --message-counting "
    "reference the reference tool's count (each day's opening included: 20 gives 19 agent turns).",
)
@click.option(
    "--message-counting",
    type=click.Choice(["agent_turns", "reference"]),
    default="agent_turns",
    show_default=True,
    help="How --messages counts: agent turns, or as the reference tool (a day's budget is "
    "messages // days, the researcher's opening included).",
)
@click.option(
    "--days", type=int, default=1, show_default=True, help="Days the messages are split over."
)
@click.option(
    "--speaker",
    type=click.Choice(SPEAKER_METHODS),
    default="round_robin",
    show_default=True,
    help="Who speaks next: in turn (round_robin), at random, roles in turn (role_alternating), "
    "picked by a manager LLM (auto) or by you at the terminal (manual).",
)
@click.option("--llm", help="Model for every agent (default: the experiment's first LLM).")
@click.option(
    "--llm-for", multiple=True, metavar="ROLE=MODEL", help="Model for one role; repeatable."
)
@click.option("--manager-llm", help="Model that picks speakers for --speaker auto.")
@click.option("--summarizer-llm", help="Model that writes the daily summaries.")
@click.option(
    "--allow-repeat-speaker",
    is_flag=True,
    help="Let auto and manual pick the agent who just spoke (the reference never did).",
)
@click.option(
    "--profile",
    type=click.Choice(PROFILE_NAMES),
    default="default",
    show_default=True,
    help="A set of the chat switches: reference = --reply-cleaning none --speaker-format "
    "name_field (as the reference tool ran a chat); the two flags, when given, win.",
)
@click.option(
    "--reply-cleaning",
    type=click.Choice(get_args(ReplyCleaning)),
    default=None,
    help="What the clean text leaves out: where a reply speaks for someone else (speakers, the "
    "default), also recited instructions and invented day headers (speakers_echoes), or "
    "nothing (none). Raw replies are always kept.",
)
@click.option(
    "--speaker-format",
    type=click.Choice(get_args(SpeakerFormat)),
    default=None,
    help="How other speakers' turns reach a model: 'Name: text' lines (prefix, the default) or "
    "one message each with the speaker in the message's name field (name_field).",
)
@click.option(
    "--seed",
    type=SEED,
    help="Seed for speaker choice and sampling (0 to 2^63-1); a grid's random cells too.",
)
@grid_options
@network_options
@click.option(
    "--pool",
    "pools",
    multiple=True,
    metavar="ENDPOINT=N",
    help="Concurrent calls per backend endpoint or provider, e.g. openai=64 (default: the "
    "provider's pool size).",
)
@click.option("--json", "as_json", is_flag=True, help="Print only the result, as JSON.")
@click.pass_obj
def run_cmd(
    app: AppContext,
    experiment_id: str,
    agents: str | None,
    total_messages: int | None,
    message_counting: str,
    days: int,
    speaker: str,
    llm: str | None,
    llm_for: tuple[str, ...],
    manager_llm: str | None,
    summarizer_llm: str | None,
    allow_repeat_speaker: bool,
    profile: str,
    reply_cleaning: str | None,
    speaker_format: str | None,
    seed: int | None,
    steps: int | None,
    radius: int | None,
    width: int | None,
    height: int | None,
    rounds: int | None,
    scenario: str | None,
    agents_table: str | None,
    free_chat: str | None,
    theory: bool,
    pools: tuple[str, ...],
    as_json: bool,
) -> None:
    """Run one conversation of EXPERIMENT_ID (or one run of a grid experiment)."""
    view = exp_service.get(app.store, experiment_id, app.user)
    sizes = pool_sizes(pools)
    switches = profile_switches(profile)
    given = {"--profile": profile != "default" or None, "--reply-cleaning": reply_cleaning}
    given["--speaker-format"] = speaker_format
    chat_only = {
        "--messages": total_messages,
        "--llm-for": llm_for,
        "--manager-llm": manager_llm,
        "--summarizer-llm": summarizer_llm,
    }
    grid_only = {"--steps": steps, "--radius": radius, "--width": width, "--height": height}
    network_only = {
        "--rounds": rounds,
        "--scenario": scenario,
        "--agents-table": agents_table,
        "--free-chat": free_chat,
        "--theory": theory,
    }
    if view.kind == "network":
        chat_choices = {
            "--agents": agents,
            "--days": days != 1 or None,
            "--speaker": speaker != "round_robin" or None,
            "--message-counting": message_counting != "agent_turns" or None,
            "--allow-repeat-speaker": allow_repeat_speaker or None,
            **given,
        }
        refuse_flags(
            {**chat_only, **grid_only, **chat_choices},
            "an opinion-network experiment",
            "leave them out; a network run takes --rounds, --scenario, --agents-table, "
            "--free-chat, --llm or --theory, --seed and --pool (the graph sets the number of "
            "agents)",
        )
        settings = {
            "rounds": rounds,
            "scenario": scenario,
            "agents": agents_table,
            "free_chat": free_chat_rounds(free_chat),
        }
        net = run_network_cli(
            app,
            view,
            llm=llm,
            seed=seed,
            settings=settings,
            as_json=as_json,
            pools=sizes,
            theory=theory,
        )
        if net.status == "failed":
            raise SystemExit(1)
        return
    refuse_flags(network_only, "this experiment", "use them with a network experiment")
    if view.kind == "grid":
        refuse_chat_flags(
            {**chat_only, **given}, speaker, days, message_counting, allow_repeat_speaker
        )
        world = {"agents": grid_agents(agents), "steps": steps, "radius": radius}
        world.update(width=width, height=height)
        grid_outcome = run_grid_cli(
            app, view, llm=llm, seed=seed, world=world, as_json=as_json, pools=sizes
        )
        if grid_outcome.status == "failed":
            raise SystemExit(1)
        return
    refuse_grid_flags(grid_only)
    if agents is None or total_messages is None:
        missing = "--agents" if agents is None else "--messages"
        raise UserError(
            f"a chat experiment needs {missing}",
            field=missing,
            fix="give e.g. --agents guard=1,prisoner=2 --messages 20",
        )
    spec = conv_service.build_spec(
        view,
        agents=agents,
        total_messages=total_messages,
        days=days,
        speaker=speaker,
        llm=llm,
        llm_for=llm_for,
        manager_llm=manager_llm,
        summarizer_llm=summarizer_llm,
        seed=seed,
        message_counting=message_counting,
        allow_repeat_speaker=allow_repeat_speaker,
    )
    if reply_cleaning is not None:
        switches["reply_cleaning"] = reply_cleaning
    if speaker_format is not None:
        switches["speaker_format"] = speaker_format
    spec = spec.model_copy(update=switches)
    manual = None
    if speaker == "manual":
        if not sys.stdin.isatty():
            raise UserError(
                "--speaker manual asks a person for every speaker, and standard input is not a "
                "terminal",
                field="--speaker",
                fix="run it in a terminal, or choose round_robin, random, role_alternating or auto",
            )
        manual = _terminal_picker()
    outcome = execute(app, view, spec, as_json, manual, pools=sizes)
    if outcome.status == "failed":
        raise SystemExit(1)


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
