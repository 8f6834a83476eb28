"""Agreement between two label sources on the same items: n, observed agreement, Cohen's kappa
and the confusion matrix, overall or per group.

Pure and exact (no sklearn needed at run time; the tests check it against sklearn's
`cohen_kappa_score`). Labels are cleaned the way the prison paper's own script
(`cohens_k_annotation.py`) cleans its spreadsheet columns before it counts: a missing value on
either side leaves the pair out (the script's `dropna()` over both columns; here the pair is
counted in `left_out`), every other value becomes `str(value).lower().strip()`, so "Yes ",
"yes" and "YES" agree and the integer 1 reads as "1".
"""

from __future__ import annotations

import math
from collections.abc import Hashable, Iterable
from dataclasses import dataclass, field


def clean_label(value: object) -> str | None:
    """The script's cleaning; None for a missing value (None or a float NaN)."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return str(value).lower().strip()


@dataclass
class Agreement:
    """One comparison. `kappa` is None when it is undefined: no pairs, or both sides used one
    and the same single label (chance agreement 1; sklearn answers NaN there)."""

    n: int
    agreeing: int
    labels: list[str]  # the matrix's order: sorted, as sklearn orders them
    matrix: list[list[int]]  # matrix[i][j]: pairs labelled labels[i] by A and labels[j] by B
    left_out: int = 0  # pairs where A or B has no label
    missing_a: int = 0
    missing_b: int = 0  # a pair missing on both sides counts in both, once in left_out
    kappa: float | None = field(default=None)

    @property
    def disagreeing(self) -> int:
        return self.n - self.agreeing

    @property
    def observed(self) -> float | None:
        """Share of the compared pairs with the same label."""
        return self.agreeing / self.n if self.n else None

    def as_dict(self) -> dict:
        return {
            "n": self.n,
            "agreeing": self.agreeing,
            "disagreeing": self.disagreeing,
            "observed_agreement": self.observed,
            "percent_disagreement": 100 * self.disagreeing / self.n if self.n else None,
            "kappa": self.kappa,
            "left_out": self.left_out,
            "missing_a": self.missing_a,
            "missing_b": self.missing_b,
            "labels": self.labels,
            "confusion": self.matrix,
        }


def cohen_kappa(matrix: list[list[int]]) -> float | None:
    """(p_o - p_e) / (1 - p_e) from a square confusion matrix; None when undefined."""
    n = sum(map(sum, matrix))
    if n == 0:
        return None
    size = len(matrix)
    rows = [sum(row) for row in matrix]
    cols = [sum(matrix[i][j] for i in range(size)) for j in range(size)]
    observed = sum(matrix[i][i] for i in range(size)) / n
    expected = sum(r * c for r, c in zip(rows, cols, strict=True)) / (n * n)
    if expected == 1:
        return None
    return (observed - expected) / (1 - expected)


def agreement(pairs: Iterable[tuple[object, object]]) -> Agreement:
    """Agreement over (label by A, label by B) pairs of the same items."""
    kept: list[tuple[str, str]] = []
    missing_a = missing_b = left_out = 0
    for raw_a, raw_b in pairs:
        a, b = clean_label(raw_a), clean_label(raw_b)
        if a is None or b is None:
            left_out += 1
            missing_a += a is None
            missing_b += b is None
            continue
        kept.append((a, b))
    labels = sorted({label for pair in kept for label in pair})
    index = {label: i for i, label in enumerate(labels)}
    matrix = [[0] * len(labels) for _ in labels]
    for a, b in kept:
        matrix[index[a]][index[b]] += 1
    return Agreement(
        n=len(kept),
        agreeing=sum(a == b for a, b in kept),
        labels=labels,
        matrix=matrix,
        left_out=left_out,
        missing_a=missing_a,
        missing_b=missing_b,
        kappa=cohen_kappa(matrix),
    )


def agreement_by_group(
    rows: Iterable[tuple[Hashable, object, object]],
) -> dict[Hashable, Agreement]:
    """(group, label A, label B) rows -> one Agreement per group, in first-seen order."""
    groups: dict[Hashable, list[tuple[object, object]]] = {}
    for group, a, b in rows:
        groups.setdefault(group, []).append((a, b))
    return {group: agreement(pairs) for group, pairs in groups.items()}
