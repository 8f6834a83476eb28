"""The grid report's data: measures per cell, the figures, and the replays of chosen runs.

Like builder.py for a chat, this gathers everything into one plain context and leaves the
HTML to grid_html.py. A replay carries a run's positions at t = 0..T and each step's messages,
memories and moves; at most REPLAY_CAP runs are replayed, taken cell by cell in turn (each
cell's first repetition first) so that every cell of a sweep is seen before any is repeated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from simulator.analysis.report.builder import ReportHead, head_fields, pick_replays
from simulator.analysis.report.plots import Plot, require_matplotlib
from simulator.analysis.scope import Scope
from simulator.memory.analysis.browser import MemoryBrowse, browse_memories
from simulator.worlds.grid.analysis.emotions import emotion_note
from simulator.worlds.grid.analysis.measures import (
    PACKAGED,
    SUMMARY,
    analyse_run,
    cell_summaries,
    resolve_embedder,
    summary_of,
)
from simulator.worlds.grid.analysis.report import plots as grid_plots
from simulator.worlds.grid.analysis.report import sweep_plots as grid_sweep_plots
from simulator.worlds.grid.analysis.runs import GridRun, load_runs
from simulator.worlds.grid.analysis.text import Embedder
from simulator.worlds.grid.domain.rules import INITIAL_MEMORY

REPLAY_CAP = 20  # runs replayed in one report: each carries every message and memory
MEMORY_RUNS = 8  # replayed runs whose memory streams the report shows (each agent's whole stream)


@dataclass
class GridReportContext(ReportHead):
    """What grid_html.render_grid needs; model text stays raw here, escaped when rendered."""

    plots: list[Plot]
    replays: list[dict]  # the replay index: one entry per replayed run
    bodies: list[dict]  # one per replay: positions, texts, moves, clusters
    per_run: list[dict] = field(default_factory=list)  # per replay: moves, words, hashtags
    memories: list[dict] = field(default_factory=list)  # replays with a stream or a probe
    left_out: int = 0
    runs: int = 0
    notes: list[str] = field(default_factory=list)

    @property
    def transcripts(self) -> dict:
        """The chat context's name for what the page lets one read (the CLI counts these)."""
        return {"conversations": self.replays}


def build_grid_context(
    store: Any, scope: Scope, per_cell: int = 20, embed: Embedder | str | None = PACKAGED
) -> GridReportContext:
    """Analyse every run of the scope; keep the replays of up to REPLAY_CAP of them."""
    require_matplotlib()  # fail before any work when the extra is missing
    embedder, notes = resolve_embedder(embed)
    rows: list[dict] = []
    candidates: dict[str, list[tuple[GridRun, dict]]] = {}
    docs: list[dict] = []
    for run in load_runs(store, scope.conversation_ids):
        analysis = analyse_run(run, embedder, store)
        rows.append(summary_of(analysis))
        docs.append({"status": run.status})
        kept = candidates.setdefault(run.cell_key, [])
        if len(kept) < min(per_cell, REPLAY_CAP):
            kept.append((run, analysis))
    chosen = pick_replays(candidates, REPLAY_CAP)
    cells = cell_summaries(rows)
    first = chosen[0] if chosen else None
    text_note = notes[0] if notes else ""
    plots = [
        grid_plots.moves_plot(cells),
        grid_plots.clusters_plot(cells),
        grid_plots.hashtags_per_step_plot(cells),
        grid_plots.diversity_plot(cells, text_note),
        grid_plots.hallucinations_plot(cells),
        grid_plots.emotions_plot(cells, " ".join(emotion_note())),
    ]
    if any(a.get("party") for _, a in chosen):
        plots.insert(0, grid_plots.news_plot(cells))
    plots += grid_sweep_plots.factor_plots(cells)  # each measure against R (or agents, steps)
    if first is not None:
        run, analysis = first
        projection = (analysis["text"] or {}).get("projection") or []
        tags = analysis["hashtags"]["tags"]
        plots.append(grid_plots.hashtag_timeline(tags, run.id, run.last_step))
        plots.append(grid_plots.projection_plot(projection, run.names, run.id, text_note))
    present = [name for name in SUMMARY if any(c.get(f"{name}_mean") is not None for c in cells)]
    return GridReportContext(
        **head_fields(store, scope, docs),
        measures=[(name, SUMMARY[name]) for name in present],
        cells=cells,
        plots=plots,
        replays=[replay_entry(run) for run, _ in chosen],
        bodies=[replay_body(run, analysis) for run, analysis in chosen],
        per_run=[run_details(run, analysis) for run, analysis in chosen],
        memories=memory_runs(store, chosen),
        left_out=len(rows) - len(chosen),
        runs=len(rows),
        notes=notes,
    )


def replay_entry(run: GridRun) -> dict:
    """What the page lists for a replayed run, and the field it is drawn on."""
    return {
        "id": run.id,
        "cell": run.cell_label,
        "repetition": run.repetition,
        "status": run.status,
        "steps": run.last_step,
        "planned": run.planned_steps,
        "width": run.width,
        "height": run.height,
        "torus": run.torus,
        "radius": run.radius,
        "names": run.names,
        "initial_memory": run.world.get("initial_memory", INITIAL_MEMORY),
    }


def replay_body(run: GridRun, analysis: dict) -> dict:
    """`p`: positions [t][agent] = [x, y] for t = 0..T; per step s (index s - 1) and agent:
    `m` message, `r` memory, `v` move, `f` 1 when the move fell back, `h` senders heard;
    `c`: cluster labels [t][agent]. A missing row reads as null."""
    steps = range(1, run.last_step + 1)

    def per_step(pick: Any) -> list[list]:
        return [[pick(row) if row else None for row in run.by_step.get(s) or []] for s in steps]

    return {
        "p": [[list(xy) for xy in frame] for frame in run.positions],
        "m": per_step(lambda row: str(row.get("message") or "")),
        "r": per_step(lambda row: str(row.get("memory") or "")),
        "v": per_step(lambda row: row.get("move")),
        "f": per_step(lambda row: int(bool(row.get("move_fallback")))),
        "h": per_step(lambda row: list(row.get("heard_from") or [])),
        "c": analysis["clusters"]["labels"],
    }


def memory_runs(store: Any, chosen: list[tuple[GridRun, dict]]) -> list[dict]:
    """The memory section's runs: replayed runs with a memory stream or a probe, at most
    MEMORY_RUNS, each with its streams as the CLI's memory browser reads them."""
    found = []
    for run, analysis in chosen:
        streamed = (run.spec.get("memory") or {}).get("kind") == "stream"
        if not (streamed or analysis.get("party")) or len(found) == MEMORY_RUNS:
            continue
        browse: MemoryBrowse | None = None
        if streamed and store.memories.agents(run.id):
            browse = browse_memories(store, run.id)
        found.append(
            {
                "id": run.id,
                "cell": run.cell_label,
                "repetition": run.repetition,
                "browse": browse,
                "party": analysis.get("party"),
            }
        )
    return found


def run_details(run: GridRun, analysis: dict) -> dict:
    """The per-agent tables of a replayed run: moves, fallbacks, top words; its hashtags."""
    moves = analysis["moves"]
    return {
        "id": run.id,
        "cell": run.cell_label,
        "repetition": run.repetition,
        "agents": [
            {
                "name": name,
                "moves": moves["per_agent"].get(name, {}),
                "fallbacks": moves["fallbacks_per_agent"].get(name, 0),
                "hallucinations": analysis["hallucinations"]["per_agent"].get(name, 0),
                "words": analysis["top_words"].get(name, []),
            }
            for name in run.names
        ],
        "hashtags": analysis["hashtags"]["tags"],
        "personality": analysis.get("personality"),
    }
