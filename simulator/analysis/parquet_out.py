"""A table's Parquet file from its JSON Lines spool (exports.Spool), in bounded memory.

The spool is read one line at a time and its values gathered column by column into row groups
of at most ROW_GROUP rows and about GROUP_BYTES of JSON text, so the memory a write holds does
not depend on the number of rows (a sweep of 100,000 conversations has 2 million messages) nor
much on their width (a row of long replies counts for its size).

Columns are built from buffers (`arrow_array`), not with `pyarrow.array`, which imports pandas
to ask whether a list is a pandas object: about 50 MB the writer does not need. pandas, which
a researcher reads the file back with, is checked for but never loaded.
"""

from __future__ import annotations

import importlib.util
import json
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any

from simulator.errors import UserError

INSTALL_HINT = "pip install -e '.[analysis]'"
ROW_GROUP = 20_000  # rows per row group at most
GROUP_BYTES = 4 << 20  # and about this much JSON text: what one write holds in memory


def require_parquet() -> None:
    """Refuse, before any work, when the analysis extra's pandas or pyarrow is missing."""
    try:
        import pyarrow.parquet  # noqa: F401

        found = importlib.util.find_spec("pandas") is not None
    except (ImportError, ValueError):
        found = False
    if not found:
        raise UserError(
            "Parquet export needs pandas and pyarrow, which are not installed",
            field="--format",
            fix=f"run {INSTALL_HINT} (or choose --format csv or jsonl)",
        ) from None


def arrow_type(kinds: set[type]) -> tuple[Any, bool]:
    """The column type pandas gave the same values (ints with a gap become floats, see
    `write_parquet`), and whether values must become text (mixed kinds, which pandas could
    not write)."""
    import pyarrow as pa

    kinds = kinds - {type(None)}
    if not kinds:
        return pa.null(), False
    if kinds == {bool}:
        return pa.bool_(), False
    if kinds == {str}:
        return pa.string(), False
    if kinds <= {int, float} and bool not in kinds:
        return (pa.int64() if kinds == {int} else pa.float64()), False
    return pa.string(), True


def write_parquet(spool: Path, columns: dict[str, set[type]], path: Path) -> None:
    """Write the rows of `spool` (JSON Lines) to `path`, typed once from every value seen
    (`columns`: each column's Python types, in first-seen order)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    types = {name: arrow_type(kinds) for name, kinds in columns.items()}
    for name, kinds in columns.items():  # ints with a gap: pandas made them floats
        if types[name][0] == pa.int64() and type(None) in kinds:
            types[name] = (pa.float64(), False)
    schema = pa.schema([(name, kind) for name, (kind, _) in types.items()])
    as_text = [name for name, (_, text) in types.items() if text]
    group = _Group(list(columns))
    with (
        pq.ParquetWriter(path, schema) as writer,
        spool.open(encoding="utf-8", newline="\n") as lines,
    ):
        for line in lines:
            row = json.loads(line)
            for name in as_text:
                if row.get(name) is not None:
                    row[name] = str(row[name])
            group.add(row, len(line))
            if group.rows >= ROW_GROUP or group.size >= GROUP_BYTES:
                writer.write_table(group.table(schema))
        if group.rows or not columns:
            writer.write_table(group.table(schema))


class _Group:
    """One row group's values, a list per column (rows are not kept as dicts)."""

    def __init__(self, names: list[str]):
        self.names = names
        self._reset()

    def _reset(self) -> None:
        self.values: dict[str, list] = {name: [] for name in self.names}
        self.rows = self.size = 0

    def add(self, row: dict, size: int) -> None:
        for name, values in self.values.items():
            values.append(row.get(name))
        self.rows += 1
        self.size += size

    def table(self, schema: Any) -> Any:
        """The group as an Arrow table, and the group emptied."""
        import pyarrow as pa

        arrays = [arrow_array(self.values[f.name], f.type) for f in schema]
        self._reset()
        return pa.Table.from_arrays(arrays, schema=schema)


def arrow_array(values: list, kind: Any) -> Any:
    """`pyarrow.array(values, kind)` for the types `arrow_type` gives (null, bool, int64,
    float64, string), made from buffers: the same array, without importing pandas."""
    import pyarrow as pa

    n = len(values)
    if kind == pa.null():
        return pa.nulls(n)
    present = [v is not None for v in values]
    nulls = n - sum(present)
    validity = _bits(present) if nulls else None
    if kind == pa.string():
        encoded = [b"" if v is None else v.encode("utf-8") for v in values]
        offsets = array("i", accumulate((len(b) for b in encoded), initial=0))
        buffers = [validity, pa.py_buffer(offsets), pa.py_buffer(b"".join(encoded))]
    elif kind == pa.bool_():
        buffers = [validity, _bits([v is True for v in values])]
    else:
        code, empty = ("q", 0) if kind == pa.int64() else ("d", 0.0)
        buffers = [validity, pa.py_buffer(array(code, [empty if v is None else v for v in values]))]
    return pa.Array.from_buffers(kind, n, buffers, null_count=nulls)


def _bits(flags: list[bool]) -> Any:
    """An Arrow bitmap: bit i (least significant first) set where flags[i] is true."""
    import pyarrow as pa

    text = "".join("1" if flag else "0" for flag in reversed(flags)) or "0"
    return pa.py_buffer(int(text, 2).to_bytes((len(flags) + 7) // 8 or 1, "little"))
