"""`llm-sim run` of an opinion-network experiment: its flags, header and round lines."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import click

from simulator.cli.context import AppContext
from simulator.cli.params import numbers
from simulator.cli.run_parts import RunChoices, plan_and_execute
from simulator.domain.llm_display import llm_name
from simulator.domain.plural import count
from simulator.engine import events as ev
from simulator.engine.gc_budget import fewer_collections
from simulator.errors import UserError
from simulator.services.experiments import ExperimentView
from simulator.services.runs import RunOutcome
from simulator.worlds.network.domain.experiment import NetworkSpec
from simulator.worlds.network.engine import events as nev

GROUP = "Opinion network options"
THIS = "an opinion-network experiment"
THESE = "network experiments"
TAKES = (
    "a network run takes --rounds, --scenario, --agents-table, --free-chat, --llm or "
    "--theory, --seed and --pool (the graph sets the number of agents)"
)

OPTIONS = (
    click.Option(
        ["--rounds"],
        type=click.IntRange(min=1),
        help="Rounds after round 0 (default: the experiment's).",
    ),
    click.Option(["--scenario"], help="A shipped scenario's name or a YAML file."),
    click.Option(["--agents-table"], help="The agents CSV ('synthetic': the shipped table)."),
    click.Option(
        ["--free-chat"],
        help="Rounds before whose answers friends message each other, e.g. 2,3 ('none': no "
        "free chat; default: the experiment's network.free_chat).",
    ),
    click.Option(
        ["--theory"],
        is_flag=True,
        help="Run the coevolution theory (no model) on the same graph, agents and rounds: the "
        "LLM runs' twin in measures and the report.",
    ),
)
# the options that are network settings under another name
SETTING_OF = {"agents_table": "agents"}


def free_chat_rounds(text: str | None) -> list[int] | None:
    """`--free-chat 2,3` as [2, 3], `none` as [] (off), absent as None (the experiment's)."""
    if text is None:
        return None
    if text.strip().lower() == "none":
        return []
    return numbers(text, "--free-chat")


def print_header(app: AppContext, spec: NetworkSpec) -> None:
    """What will run, including every value the tool chose because nobody said."""
    n, graph = len(spec.agents), spec.settings.graph
    snapshots = f", {len(spec.snapshots)} snapshots" if len(spec.snapshots) > 1 else ""
    group = spec.settings.group
    rows = (
        ""
        if group is None
        else f" (group {group}: the table's rows {group * n + 1}..{(group + 1) * n})"
    )
    if spec.llm is None:
        calls = "no model calls"
        chosen = [
            phrase
            for phrase in spec.settings.theory.described(n, spec.rounds)
            if f"theory: {phrase}" not in spec.defaults_applied  # those are printed below
        ]
        model = "none: the coevolution theory (Zino, Ye, Cao)" + "".join(f"; {p}" for p in chosen)
    else:
        messages = spec.settings.free_chat and spec.switches.free_chat_as == "message"
        tries = "messages included; up to 3 tries per answer" if messages else ""
        calls = f"{count(spec.calls, 'call', thousands=True)} when every answer parses; " + (
            tries or "up to 3 tries each"
        )
        if spec.memory.is_stream:
            calls += "; plus the memory stream's ratings and reflections"
        model = llm_name(spec.llm)
    drawn = any(note.startswith("seed:") for note in spec.defaults_applied)  # said below
    uses = "the theory's random draws are" if spec.is_theory else "every model call's seed is"
    seed = [] if spec.seed is None or drawn else [f"seed: {spec.seed} ({uses} derived from it)"]
    lines = [
        f"network: {count(n, 'agent')}{rows}, graph {graph.get('type')}{snapshots}, scenario "
        f"{spec.scenario.name!r}, round 0 from the table then {count(spec.rounds, 'round')} "
        f"({calls})",
        f"model: {model}",
        *seed,
        *_prompts_line(spec),
        *_memory_line(spec),
        *_free_chat_line(spec),
        *(f"default: {note}" for note in spec.defaults_applied),
    ]
    for line in lines:
        app.err.print(line, markup=False, highlight=False)


MEMORY_MEANS = {  # what each memory shows an agent of its own past, in a network
    "none": "the prompts show no earlier answer of the agent's own; its friends' answers of the "
    "round before are still shown",
    "stream": "recalled under 'What you remember' in place of the agent's earlier answers",
}


def _memory_line(spec: NetworkSpec) -> list[str]:
    """The memory, unless it is the world's own (every earlier answer: the default)."""
    if spec.memory.kind == "summary" or spec.is_theory:
        return []
    return [f"memory: {spec.memory.describe()}; {MEMORY_MEANS[spec.memory.kind]}"]


def _prompts_line(spec: NetworkSpec) -> list[str]:
    """The prompt profile and every switch (the theory has no prompts)."""
    if spec.is_theory:
        return []
    choices = spec.settings.prompts
    return [f"prompts: profile {choices.profile} ({choices.resolved().described()})"]


def _free_chat_line(spec: NetworkSpec) -> list[str]:
    """The free-chat rounds, if any; a theory run says it ignores them rather than hide it."""
    rounds = ", ".join(str(t) for t in sorted(spec.settings.free_chat))
    if not rounds:
        return []
    if spec.is_theory:
        return [f"free chat: none (the theory has no messages; network.free_chat {rounds} unused)"]
    if spec.switches.free_chat_as == "opinion_round":
        return [
            f"free chat in rounds {rounds} (asked as opinion rounds, left out of later prompts)"
        ]
    return [f"free chat before rounds {rounds} (one message per agent to its friends)"]


def round_printer(app: AppContext, quiet: bool) -> Callable[[ev.Event], None]:
    """The run's id first and last (on standard output, as a chat's and a grid's), and one
    line per stored round: mean opinion, share Yes and the fallbacks."""

    def on_event(event: ev.Event) -> None:
        if quiet:
            return
        if isinstance(event, nev.NetworkPlanned | ev.ConversationFinished):
            app.console.print(run_line(event), style="bold", markup=False, highlight=False)
            return
        if not isinstance(event, nev.NetworkRoundStored):
            return
        rows = event.rows
        mean = sum(r["opinion"] for r in rows) / len(rows)
        yes = sum(r["decision"] == "Yes" for r in rows) / len(rows)
        kept = sum(bool(r["answer_fallback"]) for r in rows)
        app.err.print(
            f"round {event.round}: mean opinion {mean:.2f}, Yes {yes:.0%}"
            + (
                f", {count(kept, 'answer')} kept from the round before (no reply parsed)"
                if kept
                else ""
            ),
            markup=False,
            highlight=False,
        )

    return on_event


def run_line(event: nev.NetworkPlanned | ev.ConversationFinished) -> str:
    """`conv_1a2b: 50 agents, 2 rounds after round 0` when it starts, `conv_1a2b done` at the
    end."""
    if isinstance(event, ev.ConversationFinished):
        return f"{event.conversation_id} {event.status}" + (
            f": {event.error}" if event.error else ""
        )
    resuming = f" (resuming after round {event.stored - 1})" if event.stored > 1 else ""
    return (
        f"{event.conversation_id}: {count(len(event.names), 'agent')}, "
        f"{count(event.rounds, 'round')} after round 0{resuming}"
    )


def run(
    app: AppContext, view: ExperimentView, options: dict[str, Any], choices: RunChoices
) -> RunOutcome:
    """Plan the network run (the options network settings by name, `--theory` the theory's
    run), run it."""
    settings = {SETTING_OF.get(name, name): value for name, value in options.items()}
    theory = bool(settings.pop("theory", False))
    settings["free_chat"] = free_chat_rounds(settings.get("free_chat"))
    return _run(app, view, settings, theory, choices)


class RoundLines:
    """The live view of a network run: its id and one line per stored round."""

    def __init__(self, app: AppContext, quiet: bool):
        self.on_event = round_printer(app, quiet)

    def __call__(self, event: ev.Event) -> None:
        self.on_event(event)

    def close(self) -> None:
        pass


def live_view(app: AppContext, as_json: bool) -> RoundLines:
    return RoundLines(app, as_json)


def run_network_cli(
    app: AppContext,
    view: ExperimentView,
    *,
    llm: str | None,
    seed: int | None,
    settings: dict,
    as_json: bool,
    pools: dict[str, int] | None = None,
    theory: bool = False,
) -> RunOutcome:
    """Resolve the spec with the settings over the experiment's, run it (the menus' way in)."""
    return _run(app, view, settings, theory, RunChoices(llm, seed, as_json, pools or {}))


def _run(
    app: AppContext, view: ExperimentView, settings: dict, theory: bool, choices: RunChoices
) -> RunOutcome:
    if theory and choices.pools:
        raise UserError(
            "--pool does not apply to a theory run: it calls no model",
            field="--pool",
            fix="leave --pool out, or --theory",
        )
    with fewer_collections():  # planning reads every agent too (engine/gc_budget.py)
        return plan_and_execute(app, view, {**settings, "theory": theory}, choices)
