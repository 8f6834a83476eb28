"""Which of a scope's conversations get the paper's tables, from which outcome labels, and the
tables themselves: every builder in `PAPER_TABLE_BUILDERS` run on the scope's
`PaperConversation`s.

A scope gets the tables when its conversations carry the paper's factors (model, goal and the
two personas in their cell) and an outcome source is present: the authors' adjudicated labels
(`label:adjudicated`, imported) or a judge's (`judge:prison_goal`, on new runs); any other
imported label source (`label:annotator_1`) may be chosen too. The builders are imported
lazily, so a module that is not there leaves its tables out instead of breaking the command.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from simulator.analysis.agreement_scope import sources_present
from simulator.analysis.label_sources import JUDGE_PRISON_GOAL
from simulator.analysis.prison_paper.rows import (
    BATCH,
    OUTCOME_SOURCE,
    PaperConversation,
    paper_conversations,
)
from simulator.analysis.prison_paper.table import PaperTable
from simulator.analysis.scope import Scope
from simulator.errors import UserError

Builder = Callable[[Sequence[PaperConversation]], list[PaperTable]]
FACTORS = ("model", "goal", "guard_persona", "prisoner_persona")
DEFAULT_SOURCES = (OUTCOME_SOURCE, JUDGE_PRISON_GOAL)  # the first present is the default


def lazy(module: str, function: str) -> Builder:
    """A builder that imports `module` when first called; none there: no tables."""

    def build(conversations: Sequence[PaperConversation]) -> list[PaperTable]:
        try:
            found = getattr(importlib.import_module(module), function)
        except (ImportError, AttributeError):
            return []
        return list(found(conversations))

    build.__name__ = f"{module}.{function}"
    return build


PAPER_TABLE_BUILDERS: list[Builder] = [
    lazy("simulator.analysis.prison_paper.outcomes", "outcome_tables"),
    lazy("simulator.analysis.prison_paper.toxicity", "toxicity_tables"),
    lazy("simulator.analysis.prison_paper.regressions", "regression_tables"),
]


@dataclass
class PaperTables:
    """The tables of one scope; `labels`: the outcome source used (None: none); `note` says
    why there are no tables when there are none."""

    labels: str | None
    tables: list[PaperTable] = field(default_factory=list)
    note: str = ""
    applies: bool = False  # the conversations carry the paper's factors

    def as_dicts(self) -> list[dict]:
        return [t.as_dict() for t in self.tables]


def outcome_sources(present: list[str]) -> list[str]:
    """The sources that give an outcome: imported labels (not their `_turn` twins), the judge."""
    return [
        s
        for s in present
        if s == JUDGE_PRISON_GOAL or (s.startswith("label:") and not s.endswith("_turn"))
    ]


def choose_labels(present: list[str], labels: str | None) -> str | None:
    """The outcome source: `labels` when present (else exit 2 naming those present), else the
    first of DEFAULT_SOURCES present, else None."""
    usable = outcome_sources(present)
    if labels is None:
        return next((s for s in DEFAULT_SOURCES if s in usable), None)
    if labels not in usable:
        listed = ", ".join(usable) or (
            "none: import the paper's release or score with --scorer judge:prison_goal"
        )
        raise UserError(
            f"no outcome labels from {labels!r} in this scope",
            field="--labels",
            fix=f"choose a source present: {listed}",
        )
    return labels


def _first_carry_factors(store: Any, scope: Scope) -> bool:
    """Whether the scope's first batch of conversations carries the factors in its cells."""
    docs = store.conversations.get_many(scope.conversation_ids[:BATCH])
    return any(all(f in (d.get("cell") or {}) for f in FACTORS) for d in docs)


def carries_factors(conversations: Sequence[PaperConversation]) -> bool:
    return any(all(f in c.factors for f in FACTORS) for c in conversations)


def paper_tables(
    store: Any,
    scope: Scope,
    labels: str | None = None,
    builders: Sequence[Builder] | None = None,
) -> PaperTables:
    """The paper's tables of `scope` from the outcome source `labels` (None: the default)."""
    note = "the conversations do not carry the paper's factors (" + ", ".join(FACTORS) + ")"
    if labels is None and not _first_carry_factors(store, scope):
        return PaperTables(None, note=note)  # any other scope: one read, no score scanned
    present = sources_present(store, scope)
    chosen = choose_labels(present, labels)
    turns = f"{chosen}_turn" if chosen and f"{chosen}_turn" in present else None
    conversations = list(paper_conversations(store, scope, chosen or OUTCOME_SOURCE, turns))
    if not carries_factors(conversations):
        return PaperTables(None, note=note)
    if chosen is None:
        note = (
            "no outcome labels: import the paper's release (llm-sim import table prison_paper) "
            "or score the runs with --scorer judge:prison_goal"
        )
        return PaperTables(None, note=note, applies=True)
    tables = [t for build in builders or PAPER_TABLE_BUILDERS for t in build(conversations)]
    note = "" if tables else "no table builders are installed"
    return PaperTables(chosen, tables, note, applies=True)


def export_rows(found: PaperTables) -> list[dict]:
    """One row per table row: key, paper_ref, value_kind, labels, the group's columns, value,
    n and the interval (a group column named like a fixed one gets a `group_` prefix)."""
    fixed = ("key", "paper_ref", "value_kind", "labels", "value", "n", "ci_low", "ci_high")
    rows: list[dict] = []
    for table in found.tables:
        for row in table.rows:
            group = {(f"group_{k}" if k in fixed else k): v for k, v in row.group.items()}
            rows.append(
                {
                    "key": table.key,
                    "paper_ref": table.paper_ref,
                    "value_kind": table.value_kind,
                    "labels": found.labels,
                    **group,
                    "value": row.value,
                    "n": row.n,
                    "ci_low": row.ci_low,
                    "ci_high": row.ci_high,
                }
            )
    return rows
