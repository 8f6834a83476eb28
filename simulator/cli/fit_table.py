"""A listing that fits the terminal: one line per row, whatever its width.

Left to itself, rich squeezes a table that is too wide by wrapping its cells (one experiment's
note took sixty lines at 80 columns) or, as a last resort, by cutting every column alike, ids
included. Here the widths are settled before rich sees the table: the columns that matter least
are dropped until the others fit at their narrowest, the room left is shared out (narrow columns
whole first), and a cut cell ends in an ellipsis. Ids are never cut: a cut id cannot be pasted.
`--json` is where every field is shown in full.
"""

from __future__ import annotations

from dataclasses import dataclass

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from simulator.domain.invisible_chars import visible


@dataclass(frozen=True)
class Column:
    """One column of a listing.

    `shrink_to`: the narrowest width worth showing (None: always shown whole, e.g. an id or a
    date). `drop`: columns are dropped in increasing order of it while the others do not fit
    (None: never dropped)."""

    key: str
    header: str
    shrink_to: int | None = None
    drop: int | None = None


def one_line(value: str) -> str:
    """A cell's text on one line: runs of whitespace (newlines too) as one space, invisible
    characters as visible markers."""
    return visible(" ".join(value.split()))


def fitted_table(
    title: str, columns: list[Column], rows: list[dict[str, str]], width: int
) -> Table:
    """A table of `rows` no wider than `width` cells, one line per row."""
    cells = [{c.key: one_line(row[c.key]) for c in columns} for row in rows]
    natural = {
        c.key: max([cell_len(c.header), *(cell_len(r[c.key]) for r in cells)]) for c in columns
    }
    shown = [c for c in columns if natural[c.key] > 0 or c.header]
    while True:
        room = width - _overhead(len(shown))
        narrowest = sum(_narrowest(c, natural[c.key]) for c in shown)
        droppable = [c for c in shown if c.drop is not None]
        if narrowest <= room or not droppable:
            break
        shown.remove(min(droppable, key=lambda c: c.drop or 0))
    widths = _share(shown, natural, room)
    table = _styled(title)
    for column in shown:
        table.add_column(
            column.header,
            width=widths[column.key],
            no_wrap=True,
            overflow="ellipsis" if column.shrink_to is not None else "crop",
        )
    for row in cells:
        table.add_row(*(Text(row[c.key]) for c in shown))
    return table


def _styled(title: str) -> Table:
    return Table(
        title=title, box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False, collapse_padding=True
    )


def _narrowest(column: Column, natural: int) -> int:
    return natural if column.shrink_to is None else min(natural, column.shrink_to)


def _overhead(count: int) -> int:
    """Cells a table of `count` columns spends on padding and rules (measured, not assumed)."""
    table = _styled("")
    for _ in range(count):
        table.add_column("", width=1)
    table.add_row(*("x" * count))
    console = Console(width=10_000, emoji=False)
    return Measurement.get(console, console.options, table).maximum - count


def _share(columns: list[Column], natural: dict[str, int], room: int) -> dict[str, int]:
    """Widths that fill at most `room`: whole columns at their natural width, the others at a
    common cap (as high as fits, never under their narrowest), each no wider than it needs."""
    fixed = {c.key: natural[c.key] for c in columns if c.shrink_to is None}
    flexible = [c for c in columns if c.shrink_to is not None]
    left = room - sum(fixed.values())

    def at(cap: int) -> dict[str, int]:
        return {
            c.key: min(natural[c.key], max(cap, _narrowest(c, natural[c.key]))) for c in flexible
        }

    cap = max((natural[c.key] for c in flexible), default=0)
    while cap > 0 and sum(at(cap).values()) > left:
        cap -= 1
    return {**fixed, **at(cap)}
