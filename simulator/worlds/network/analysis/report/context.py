"""The network report's data: every run's measures, and each shown LLM run beside its twin.

Like grid_context.py for a grid, this gathers everything into one plain context and leaves the
HTML to network_html.py. Every run of the scope is measured (summary.py); at most RUN_CAP LLM
runs are drawn, taken cell by cell in turn, each with its theory twin (twins.py): both
trajectories on the same axes, each agent's opinions, and the graph at one round (`--round`,
default the last) for the run and its twin. A scope of theory runs only draws those.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.analysis.report.builder import ReportHead, head_fields, pick_replays
from simulator.analysis.report.plots import Plot, require_matplotlib
from simulator.analysis.scope import Scope
from simulator.domain.ids import content_hash
from simulator.domain.plural import count
from simulator.errors import UserError
from simulator.worlds.network.analysis.report import plots
from simulator.worlds.network.analysis.runs import OpinionRun, TwinBook
from simulator.worlds.network.analysis.summary import SUMMARY, analyse_run, analysed, cell_summaries
from simulator.worlds.network.domain.graphs import graph_for_round

RUN_CAP = 20  # runs drawn in one report: each brings three figures


@dataclass
class NetworkReportContext(ReportHead):
    """What network_html.render_network needs; model text stays raw, escaped when rendered."""

    runs: list[dict]  # every run's summary (summary.analyse_run), scope order
    pairs: list[dict]  # the drawn runs, each beside its twin
    plots: list[Plot] = field(default_factory=list)  # per-cell series
    round_index: int | None = None  # --round, None: each run's last
    left_out: int = 0

    @property
    def transcripts(self) -> dict:
        """The chat context's name for what the page lets one read (the CLI counts these)."""
        return {"conversations": self.pairs}

    def shown(self) -> str:
        """Runs drawn, most beside their theory twin."""
        twins = sum(1 for pair in self.pairs if pair["twin"])
        return f"{count(len(self.pairs), 'run')} drawn, {twins} beside a theory twin"


def check_round(round_index: int | None, runs: list[dict]) -> None:
    """Refuse a --round no run of the scope has (nothing is written)."""
    if round_index is None or not runs:
        return
    last = max(r["planned_rounds"] for r in runs)
    if not 0 <= round_index <= last:
        raise UserError(
            f"round {round_index} is out of range: these runs have rounds 0 to {last}",
            field="--round",
            fix=f"give --round from 0 to {last}, or leave it out to draw each run's last round",
        )


def build_network_context(
    store: Any, scope: Scope, per_cell: int = 20, round_index: int | None = None
) -> NetworkReportContext:
    """Measure every run of the scope; draw up to RUN_CAP LLM runs beside their twins."""
    require_matplotlib()  # fail before any work when the extra is missing
    twins = TwinBook(store, scope.experiment_id)
    rows: list[dict] = []
    llm: dict[str, list[tuple[OpinionRun, dict]]] = {}
    theory: dict[str, list[tuple[OpinionRun, dict]]] = {}
    for run, row in analysed(store, scope.conversation_ids, twins):
        rows.append(row)
        kept = (theory if run.is_theory else llm).setdefault(run.cell_key, [])
        if len(kept) < min(per_cell, RUN_CAP):
            kept.append((run, row))
    check_round(round_index, rows)
    chosen = pick_replays(llm or theory, RUN_CAP)  # type: ignore[arg-type]
    layouts: dict[str, dict] = {}
    pairs = [
        pair_entry(n, run, row, twins, round_index, layouts)
        for n, (run, row) in enumerate(chosen)  # type: ignore[misc]
    ]
    cells = cell_summaries(rows)
    present = [name for name in SUMMARY if any(c.get(f"{name}_mean") is not None for c in cells)]
    return NetworkReportContext(
        **head_fields(store, scope, [{"status": r["status"]} for r in rows]),
        measures=[(name, SUMMARY[name]) for name in present],
        cells=cells,
        runs=rows,
        pairs=pairs,
        plots=[
            plots.cells_plot(cells, "mean_opinion", "Mean opinion per cell", "mean opinion", 10),
            plots.cells_plot(cells, "share_yes", "Share Yes per cell", "share Yes", 1),
        ],
        round_index=round_index,
        left_out=sum(1 for r in rows if r["theory"] == (not llm)) - len(pairs),
    )


def _drawn_round(run: OpinionRun, wanted: int | None) -> int:
    """The round drawn: the one asked for, or the last complete one when it is not stored."""
    return run.last_round if wanted is None else min(wanted, run.last_round)


def _layout(run: OpinionRun, layouts: dict[str, dict]) -> dict:
    """Positions from the first snapshot, computed once per graph (a twin shares its run's)."""
    key = content_hash(run.spec.get("snapshots", [[]])[0], 24)
    if key not in layouts:
        layouts[key] = plots.layout(run.graphs[0])
    return layouts[key]


def _graph_panels(
    runs: list[tuple[OpinionRun, str]], wanted: int | None
) -> tuple[list[tuple[str, list[int], list[bool]]], dict[str, int]]:
    """Each run's opinions and decisions at the round drawn, with the rounds drawn by id."""
    panels, drawn = [], {}
    for run, what in runs:
        t = _drawn_round(run, wanted)
        if t >= 0:
            drawn[run.id] = t
            panels.append((f"{run.id} · {what} · round {t}", run.opinions[t], run.decisions[t]))
    return panels, drawn


def pair_entry(
    n: int,
    run: OpinionRun,
    row: dict,
    twins: TwinBook,
    round_index: int | None,
    layouts: dict[str, dict],
) -> dict:
    """One drawn run and its twin: identity, both series, the distance and three figures."""
    twin_run = twins.run(twins.twin_of(run))
    model = plots.as_series(row["rounds"])
    theory = None
    if twin_run is not None:  # its own measures, as any run's
        theory = plots.as_series(analyse_run(twin_run, None, None)["rounds"])
    label = f"{run.id} ({run.model})" + (f" and its theory twin {twin_run.id}" if twin_run else "")
    members = [(run, "theory" if run.is_theory else run.model)]
    if twin_run is not None:
        members.append((twin_run, "theory twin"))
    panels, drawn = _graph_panels(members, round_index)
    shown = drawn.get(run.id, 0)
    caption = (
        f"Round {shown} of {run.planned_rounds}, on the graph its agents answered on. Colour: "
        "opinion (0 red .. 10 blue); filled: Yes, ring: No."
    )
    if round_index is not None and any(t != round_index for t in drawn.values()):
        caption += f" Round {round_index} is not stored yet where another round is drawn."
    return {
        "id": run.id,
        "model": run.model,
        "theory": run.is_theory,
        "seed": run.seed,
        "status": run.status,
        "cell": run.cell_label,
        "repetition": run.repetition,
        "agents": len(run.names),
        "planned_rounds": run.planned_rounds,
        "twin": row["twin"],
        "twin_note": row["twin_note"],
        "twin_seed": twin_run.seed if twin_run else None,
        "distance": {k: row[k] for k in SUMMARY if k.startswith("twin_")},
        "distance_rounds": row["distance_rounds"],
        "answer_fallbacks": int(run.counters.get("answer_fallbacks", 0)),
        "answers": len(run.names) * max(len(row["rounds"]) - 1, 0),  # after round 0
        "series": {"model": model, "theory": theory},
        "drawn_round": drawn,
        "figures": [
            plots.trajectory_plot(f"trajectory-{n}", model, theory, label),
            plots.agents_plot(
                f"agents-{n}", [(f"{r.id} · {w}", r.opinions) for r, w in members], label
            ),
            plots.graph_plot(
                f"graph-{n}",
                graph_for_round(run.graphs, shown),
                _layout(run, layouts),
                panels,
                caption,
            ),
        ],
    }
