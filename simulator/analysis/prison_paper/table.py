"""`PaperTable`: one table or figure of the paper as this tool computes it, in one shape for
every consumer (the `measures` text and JSON, the exports, the report, the comparison with the
authors' numbers).

A row is one group (e.g. `{"model": "llama3:latest", "goal": "Escape"}`) with its `value`, the
`n` it rests on, and a 95% interval where the value is a share or a mean (`ci_low`, `ci_high`;
None where n is 0 or the interval is undefined). `paper_ref` names the paper's table or figure
("Table 2", "Figure 5"), `value_kind` says how to read `value` ("percent", "share", "count",
"mean").
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

Z95 = 1.959963984540054


@dataclass
class PaperRow:
    group: dict[str, str]
    value: float | None
    n: int
    ci_low: float | None = None
    ci_high: float | None = None
    extra: dict[str, Any] = field(default_factory=dict)  # e.g. {"k": 12}: the count behind a share


@dataclass
class PaperTable:
    key: str  # stable id: "failures_by_model", "persuasion_attempts_by_goal", ...
    title: str
    paper_ref: str  # "Table 2", "Figure 5" (the paper's numbering)
    value_kind: str  # "percent" | "share" | "count" | "mean"
    group_by: list[str]
    rows: list[PaperRow] = field(default_factory=list)
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def wilson(k: int, n: int) -> tuple[float | None, float | None]:
    """95% Wilson interval of the share k / n (well-behaved at 0 and n); (None, None) for n 0."""
    if n <= 0:
        return None, None
    p = k / n
    denominator = 1 + Z95**2 / n
    centre = (p + Z95**2 / (2 * n)) / denominator
    half = Z95 * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n)) / denominator
    return max(0.0, centre - half), min(1.0, centre + half)


def share_row(group: dict[str, str], k: int, n: int, percent: bool = False) -> PaperRow:
    """A share k / n with its Wilson interval, as a share or (percent=True) in percent."""
    low, high = wilson(k, n)
    scale = 100.0 if percent else 1.0
    value = None if n == 0 else k / n * scale
    return PaperRow(
        group,
        value,
        n,
        None if low is None else low * scale,
        None if high is None else high * scale,
        {"k": k},
    )
