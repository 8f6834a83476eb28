"""`llm-sim measures` on an opinion-network target (cli/analysis_parts.py).

The command, its flags and its output shapes stay those of the chat and the grid: measures as a
mean [95% CI] per cell, `--json` with every run's figures. A network adds, per run, its
measures round by round and the distance to its theory twin (or the command that stores one),
since the comparison with the theory is the point.
"""

from __future__ import annotations

from rich import box
from rich.table import Table
from rich.text import Text

from simulator.analysis.scope import Scope
from simulator.cli.analysis_parts import MeasuresRequest, chosen_measures, print_cells, scope_info
from simulator.cli.context import AppContext
from simulator.domain.invisible_chars import visible
from simulator.domain.plural import count, nouns
from simulator.worlds.network.analysis import ROUND_MEASURES, SUMMARY
from simulator.worlds.network.analysis import world as network_analysis

DEFAULT_NETWORK_MEASURES = (
    "mean_opinion",
    "share_yes",
    "bimodality",
    "consistency",
    "answer_fallbacks",
    "twin_mean_opinion_rmse",
    "twin_share_yes_rmse",
)
RUNS_SHOWN = 20  # runs whose rounds are printed; --json gives every run's
HEADINGS = {
    "mean_opinion": "opinion",
    "share_yes": "Yes",
    "opinion_variance": "var",
    "bimodality": "bimodal",
    "private_public_gap": "gap",
    "unpopular_norm": "unpop.",
    "paradigm_shift": "shift",
    "consistency": "consist.",
    "assortativity": "assort.",
}
LEGEND = (
    "opinion: mean opinion (0..10); Yes: share deciding Yes; var: opinion variance; bimodal: "
    "Sarle's bimodality coefficient (> 0.56: two camps); gap: share Yes minus mean opinion / "
    "10; unpop.: an unpopular norm (most act Yes while the mean opinion is below 5, or the "
    "reverse); shift: a majority No at round 0 has become a majority Yes; consist.: share "
    "whose opinion (>= 5) agrees with their decision; assort.: assortativity of decisions on "
    "the round's graph. Distance to the twin: RMSE between the two mean-opinion series, the "
    "two share-Yes series and every agent's two opinions over the rounds both stored (round "
    "0 included), and the share of (round, agent) decisions that differ; 0 is the same "
    "trajectory. --json describes every figure."
)


def print_measures(app: AppContext, scope: Scope, request: MeasuresRequest) -> None:
    """Per run its rounds and its distance to its twin; per cell a mean [95% CI] of the chosen
    SUMMARY measures; --json: every run and cell whole."""
    names = chosen_measures(request.chosen, DEFAULT_NETWORK_MEASURES, list(SUMMARY), "network")
    measured = network_analysis.measures(app.store, scope)
    if request.as_json:
        app.print_json({"scope": scope_info(scope, "network"), **measured})
        return
    runs = measured["runs"]
    if not runs:
        app.console.print(f"No runs in {scope.kind} {scope.id} yet.")
        return
    console = app.console
    for run in runs[:RUNS_SHOWN]:
        console.print(rounds_table(run))
        console.print(Text(run_footer(run), style="dim" if run["theory"] else ""))
        console.print()
    if len(runs) > RUNS_SHOWN:
        console.print(f"{len(runs) - RUNS_SHOWN} more runs not shown: --json gives every run.")
    console.print(Text(LEGEND, style="dim"))
    if scope.kind != "conversation":
        console.print()
        title = f"Network measures of {scope.kind} {scope.id}: mean [95% CI] per cell"
        print_cells(console, title, measured["cells"], names)


def _value(value: object) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if abs(value) < 0.005:
            return "0.00"  # not "-0.00"
        return f"{value:.2f}" if abs(value) < 100 else f"{value:,.0f}"
    return str(value)


def rounds_table(run: dict) -> Table:
    """One run's ROUND_MEASURES, a line per complete round."""
    seed = "no seed" if run["seed"] is None else f"seed {run['seed']}"
    title = f"{run['conversation_id']} · {run['model']} · {seed} · {run['status']}"
    table = Table(
        title=Text(visible(title), style="bold"),
        title_justify="left",
        box=box.SIMPLE_HEAD,
        show_edge=False,
        pad_edge=False,
        collapse_padding=True,
    )
    table.add_column("round", justify="right", no_wrap=True)
    for name in ROUND_MEASURES:
        table.add_column(HEADINGS.get(name, name), justify="right", no_wrap=True)
    for measures in run["rounds"]:
        table.add_row(str(measures["round"]), *(_value(measures[n]) for n in ROUND_MEASURES))
    if not run["rounds"]:
        table.add_row("–", *("–" for _ in ROUND_MEASURES))
    return table


def run_footer(run: dict) -> str:
    """Under a run's rounds: fallbacks, and its twin with the distance (or how to get one)."""
    planned = run["planned_rounds"]
    parts = [f"{run['rounds_stored']} of {planned} {nouns(planned, 'round')} stored"]
    if not run["theory"]:
        parts.append(count(run["answer_fallbacks"], "answer fallback"))
    line = "; ".join(parts)
    if run["theory"]:
        return f"{line} (a theory run: no model)"
    if run["twin"] is None:
        return f"{line}; {run['twin_note']}"
    if run["distance_rounds"] is None:
        return f"{line}; {run['twin_note']}: no complete round to compare yet"
    return (
        f"{line}; distance to {run['twin_note']} over rounds 0..{run['distance_rounds'] - 1}: "
        f"mean-opinion RMSE {_value(run['twin_mean_opinion_rmse'])}, share-Yes RMSE "
        f"{_value(run['twin_share_yes_rmse'])}, per-agent opinion RMSE "
        f"{_value(run['twin_opinion_rmse'])}, decisions differing "
        f"{run['twin_decision_disagreement']:.0%}"
    )
