"""Parquet export in bounded memory: columns built from buffers are the arrays pyarrow builds,
row groups end at a size, and the export never loads pandas."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pa = pytest.importorskip("pyarrow")
pq = pytest.importorskip("pyarrow.parquet")

from simulator.analysis import parquet_out  # noqa: E402
from simulator.analysis.exports import write_batches  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
VALUES = {
    "null": [None, None, None],
    "bool": [True, None, False, True, False, False, True, None, True],  # past one byte
    "int64": [0, -(2**63), 2**63 - 1, None, 7],
    "float64": [0.1, None, 1e308, -2.5, 3, float("inf")],
    "string": ["", None, "é😀\nline", "x" * 5000, "last"],
}


@pytest.mark.parametrize("kind", list(VALUES))
@pytest.mark.parametrize("length", [0, 1, 8, 9, 1001])
def test_a_column_from_buffers_is_the_array_pyarrow_builds(kind, length):
    values = (VALUES[kind] * (length // len(VALUES[kind]) + 1))[:length]
    arrow_kind = getattr(pa, "bool_" if kind == "bool" else kind)()
    built = parquet_out.arrow_array(values, arrow_kind)
    built.validate(full=True)
    expected = pa.array(values, arrow_kind)
    assert built.equals(expected)
    assert built.null_count == expected.null_count
    assert built.to_pylist() == values


def test_nan_stays_a_number_not_a_gap():
    built = parquet_out.arrow_array([float("nan"), None], pa.float64())
    assert built.null_count == 1 and str(built[0].as_py()) == "nan"


def test_row_groups_end_at_their_size_and_keep_every_row(tmp_path, monkeypatch):
    rows = [{"i": i, "text": f"reply {i} " * 20, "gap": None if i % 3 else i} for i in range(500)]
    monkeypatch.setattr(parquet_out, "GROUP_BYTES", 10_000)
    (path,), counts = write_batches(
        [{"t": rows[i : i + 40]} for i in range(0, 500, 40)], ["t"], "parquet", tmp_path / "p"
    )
    assert counts == {"t": 500}
    shortest = min(len(json.dumps(r, ensure_ascii=False)) + 1 for r in rows)
    meta = pq.ParquetFile(path).metadata
    sizes = [meta.row_group(g).num_rows for g in range(meta.num_row_groups)]
    assert len(sizes) > 1 and max(sizes) <= 10_000 // shortest + 1
    table = pq.read_table(path)
    assert table.schema.types == [pa.int64(), pa.string(), pa.float64()]
    gaps = [None if r["gap"] is None else float(r["gap"]) for r in rows]
    assert table.to_pylist() == [{**r, "gap": gap} for r, gap in zip(rows, gaps, strict=True)]


def test_the_parquet_export_never_imports_pandas(tmp_path):
    """pyarrow.array imports pandas to recognise pandas objects; the export must not pay for
    it (about 50 MB). A process of its own: the test process may have imported pandas."""
    script = (
        "import sys\n"
        "from pathlib import Path\n"
        "from simulator.analysis.exports import write_tables\n"
        "rows = [{'a': 1, 'b': 'x', 'c': None, 'd': True, 'e': 2.5, 'f': [1]}]\n"
        f"write_tables({{'t': rows, 'empty': []}}, 'parquet', Path({str(tmp_path / 'out')!r}))\n"
        "print('pandas' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
    table = pq.read_table(tmp_path / "out" / "t.parquet")
    assert table.to_pylist() == [{"a": 1, "b": "x", "c": None, "d": True, "e": 2.5, "f": "[1]"}]
    assert pq.read_table(tmp_path / "out" / "empty.parquet").num_rows == 0
