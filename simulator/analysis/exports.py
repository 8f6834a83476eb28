"""Write tidy tables as JSON Lines, CSV (stdlib only) or Parquet (pandas + pyarrow, optional)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from simulator.errors import UserError

FORMATS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}  # format -> file extension
INSTALL_HINT = "pip install -e '.[analysis]'"


def columns_of(rows: list[dict]) -> list[str]:
    """Every key of every row, in first-seen order: rows of a sweep may differ (variants)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_tables(tables: dict[str, list[dict]], fmt: str, out_dir: Path) -> list[Path]:
    """One file per table (`conversations.csv`, …), empty tables included, so a script that
    reads them never has to check whether a file exists."""
    if fmt not in FORMATS:
        raise UserError(
            f"unknown export format {fmt!r}", field="--format", fix="use jsonl, csv or parquet"
        )
    writer = {"jsonl": _write_jsonl, "csv": _write_csv, "parquet": _write_parquet}[fmt]
    if fmt == "parquet":
        _require_parquet()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    written = []
    for name, rows in tables.items():
        path = out_dir / f"{name}.{FORMATS[fmt]}"
        writer(rows, path)
        written.append(path)
    return written


def _write_jsonl(rows: list[dict], path: Path) -> None:
    with path.open("w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json.dumps(row, ensure_ascii=False, default=str) + "\n")


def _write_csv(rows: list[dict], path: Path) -> None:
    # newline="" lets the csv module quote texts that hold line breaks correctly
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns_of(rows), restval="")
        writer.writeheader()
        for row in rows:
            writer.writerow({k: "" if v is None else v for k, v in row.items()})


def _require_parquet() -> None:
    try:
        import pandas  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError:
        raise UserError(
            "Parquet export needs pandas and pyarrow, which are not installed",
            field="--format",
            fix=f"run {INSTALL_HINT} (or choose --format csv or jsonl)",
        ) from None


def _write_parquet(rows: list[dict], path: Path) -> None:
    import pandas as pd

    frame = pd.DataFrame.from_records(rows, columns=columns_of(rows))
    frame.to_parquet(path, index=False, engine="pyarrow")
