"""How the screens show an opinion network (simulator/cli/view_parts.py): its graph and
scenario, a run round by round, and its menu entry (networks are created from a YAML file)."""

from __future__ import annotations

from rich.console import Console, RenderableType
from rich.markup import escape
from rich.text import Text

from simulator.cli.context import AppContext
from simulator.cli.interactive import prompts as ask
from simulator.cli.transcript_view import shown, stored_count, unit_rows
from simulator.cli.view_parts import MenuEntry
from simulator.domain.limits import MAX_SEED
from simulator.domain.plural import count
from simulator.services.experiments import ExperimentView
from simulator.worlds.network.domain.experiment import THEORY
from simulator.worlds.network.domain.scenario import MAX_ROUNDS


def roles_cell(view: ExperimentView) -> str:
    net = view.experiment.network
    return f"network: {net.graph.get('type')}, {count(net.rounds, 'round')}, {net.scenario}"


def detail(view: ExperimentView) -> list[RenderableType]:
    net = view.experiment.network
    graph = ", ".join(f"{k} {v}" for k, v in net.graph.items())
    return [
        Text(
            f"kind network: graph {graph}; agents {net.agents}; scenario {net.scenario}; "
            f"round 0 from the table, then {count(net.rounds, 'round')}"
        )
    ]


def listing_cells(doc: dict) -> dict[str, str]:
    """Agents, rounds done, the graph in place of the speaker."""
    spec = doc["spec"]
    n, rounds = len(spec["agents"]), spec["settings"]["rounds"]
    done = stored_count(doc) // max(n, 1)
    return {
        "agents": f"{n} on a network",
        "messages": f"round {max(done - 1, 0)}/{rounds}",
        "days": "-",
        "speaker": f"network {spec['settings']['graph'].get('type')}"
        + (" · theory" if spec.get("model") == THEORY else ""),
    }


def run_line(run: dict) -> str:
    spec = run["spec"]
    return (
        f"network: {count(len(spec['agents']), 'agent')}, graph "
        f"{spec['settings']['graph'].get('type')}, scenario {escape(spec['scenario']['name'])}, "
        f"{count(spec['settings']['rounds'], 'round')}; "
        + (
            "the coevolution theory (no model)"
            if spec.get("llm") is None
            else f"model {escape(spec['llm']['model'])}"
        )
    )


def show_rows(console: Console, data: dict) -> None:
    """Round by round: each agent's opinion, decision, attempts and thought."""
    for row in unit_rows(console, data, "round", lambda n: "" if n else " (the agents table)"):
        flag = " [red](no reply parsed: previous answer kept)[/]" if row["answer_fallback"] else ""
        tries = f" [dim]{row['attempts']} tries[/]" if row["attempts"] > 1 else ""
        exact = f" [dim](exactly {row['exact_opinion']:g})[/]" if "exact_opinion" in row else ""
        console.print(
            f"[bold cyan]{shown(row['agent'])}[/] opinion {row['opinion']}{exact} "
            f"{row['decision']}{flag}{tries}"
        )
        if "said" in row:  # a free-chat round: the message it wrote to its friends
            console.print(f"  [italic]said to its friends:[/] {shown(row['said'])}")
        if row["thought"]:
            console.print(f"  [dim]{shown(row['thought'])}[/]")


def perform_network(app: AppContext, view: ExperimentView) -> None:
    """One network run, its rounds offered with the experiment's value."""
    from simulator.worlds.network.cli.run import run_network_cli

    net = view.experiment.network
    choices = [(llm.key, llm.key) for llm in view.experiment.llms]
    choices.append(("The coevolution theory (no model; the LLM runs' twin)", THEORY))
    llm = ask.select("Model", choices)
    rounds = ask.ask_int("Rounds after round 0", 1, MAX_ROUNDS, net.rounds)
    seed = ask.ask_int("Seed, blank for none", 0, MAX_SEED, None, optional=True)
    theory = llm == THEORY
    run_network_cli(
        app,
        view,
        llm=None if theory else llm,
        seed=seed,
        settings={"rounds": rounds},
        as_json=False,
        theory=theory,
    )


RUN_ENTRIES = (MenuEntry("Perform a network run", perform_network),)
