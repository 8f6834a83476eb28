"""What a world tells the analysis: its tables, its measures, its report, and what the memory
browser needs to read its runs.

Each world's `analysis/world.py` is a module with these names (the registry's
`part(kind, "analysis.world")`); export, measures, the report and the memory browser call it
instead of naming a world. `analysis_of(kind)` (or `analysis_of_doc(document)`) returns it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Protocol

from simulator.analysis.scope import Scope


class WorldReport(Protocol):
    """A world's report context (report/builder.py's `ReportHead` and what the world adds)."""

    cells: list[dict]

    def shown(self) -> str:
        """What the CLI's closing line says the page lets one read ("4 transcripts")."""


class WorldAnalysis(Protocol):
    WORD: str  # how titles and JSON name the world ("grid"); "" where they name none (a chat)
    PAPER_LABELS: bool  # the prison paper's outcome labels (--labels) apply to its runs
    DRAWS_ROUNDS: bool  # its report draws a chosen round (--round)
    MEMORY_CARRIED: str  # what its agents carry between steps when no other memory is named
    STREAM_DAY_START: int | None  # a memory stream's minute 0 as minutes after midnight of
    # day 1 (None: times are shown as minutes)

    def export_tables(
        self, store: Any, scope: Scope, fmt: str, output: Path, labels: str | None
    ) -> list[dict]:
        """Write its tidy tables of the scope to `output`; one entry per table: table, path,
        rows."""

    def measures(self, store: Any, scope: Scope) -> Any:
        """The scope's measures per run and per cell (what its `measures` command prints)."""

    def report_context(
        self,
        store: Any,
        scope: Scope,
        per_cell: int,
        round_index: int | None,
        labels: str | None,
    ) -> WorldReport:
        """The data of its report on the scope (`per_cell`: runs shown per cell)."""

    def render_report(self, ctx: Any) -> str:
        """The report page of a context `report_context` made."""

    def agent_names(self, doc: dict) -> list[str]:
        """A run's agents' names by index, read from its spec (its `agents` entries aside)."""

    def memory_rows(self, store: Any, doc: dict, names: list[str]) -> list[tuple[int, int, dict]]:
        """(step, agent index, row) of each stored row of the run whose prompt may have shown
        memories (the row's `retrieved` ids); `names`: its agents' names by index."""


def analysis_of(kind: str) -> WorldAnalysis:
    """The world `kind`'s analysis part (imported on first use)."""
    from simulator.worlds import part

    return part(kind, "analysis.world")  # type: ignore[return-value]


def analysis_of_doc(document: dict | None) -> WorldAnalysis:
    """The analysis part of a stored document's world (an experiment, a run)."""
    from simulator.worlds import kind_of

    return analysis_of(kind_of(document))
