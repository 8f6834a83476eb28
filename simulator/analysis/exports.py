"""Write tidy tables as JSON Lines, CSV (stdlib only) or Parquet (pandas + pyarrow, optional)."""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterator
from pathlib import Path

from simulator.errors import UserError

FORMATS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}  # format -> file extension
INSTALL_HINT = "pip install -e '.[analysis]'"


def columns_of(rows: list[dict]) -> list[str]:
    """Every key of every row, in first-seen order: rows of a sweep may differ (variants)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_tables(
    tables: dict[str, list[dict]], fmt: str, out_dir: Path, field: str = "--output"
) -> list[Path]:
    """One file per table (`conversations.csv`, …), empty tables included, so a script that
    reads them never has to check whether a file exists.

    Every file is written beside its final name and renamed into place once all are complete:
    a failure (disk full, permission) leaves no partial file and no half-updated folder."""
    if fmt not in FORMATS:
        raise UserError(
            f"unknown export format {fmt!r}", field="--format", fix="use jsonl, csv or parquet"
        )
    writer = {"jsonl": _write_jsonl, "csv": _write_csv, "parquet": _write_parquet}[fmt]
    if fmt == "parquet":
        _require_parquet()
    out_dir = Path(out_dir)
    check_output_dir(out_dir, field)
    created = not out_dir.exists()
    pending: list[tuple[Path, Path]] = []
    try:
        with output_errors(out_dir, field):
            out_dir.mkdir(exist_ok=True)
            for name, rows in tables.items():
                path = out_dir / f"{name}.{FORMATS[fmt]}"
                tmp = temp_beside(path)
                pending.append((tmp, path))
                writer(rows, tmp)
            for tmp, path in pending:
                os.replace(tmp, path)
    except BaseException:
        for tmp, _ in pending:
            tmp.unlink(missing_ok=True)
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # only if still empty
        raise
    return [path for _, path in pending]


def temp_beside(path: Path) -> Path:
    """A hidden name in the same folder, so the final rename is atomic (same file system)."""
    return path.with_name(f".{path.name[:200]}.{os.getpid()}.tmp")  # within NAME_MAX (255)


@contextlib.contextmanager
def output_errors(path: Path, field: str) -> Iterator[None]:
    """An OSError while writing `path` becomes one UserError paragraph naming the option."""
    try:
        yield
    except OSError as exc:
        reason = exc.strerror or str(exc)
        raise UserError(
            f"cannot write {path}: {reason}",
            field=field,
            fix="choose a path in a folder you can write to, with enough free space",
        ) from None


def _writable_folder(folder: Path, path: Path, field: str) -> None:
    if not folder.exists():
        raise UserError(
            f"cannot write {path}: the folder {folder} does not exist",
            field=field,
            fix=f"create it first (mkdir -p {folder}) or choose another path",
        )
    if not folder.is_dir():
        raise UserError(
            f"cannot write {path}: {folder} is a file, not a folder",
            field=field,
            fix="choose a path inside an existing folder",
        )
    if not os.access(folder, os.W_OK | os.X_OK):
        raise UserError(
            f"cannot write {path}: permission denied on the folder {folder}",
            field=field,
            fix="choose a folder you can write to",
        )


def check_output_dir(path: Path, field: str = "--output") -> None:
    """Refuse, before any work, a folder that cannot be written or created (its parent must
    exist: a typo in the path should not grow a tree of folders)."""
    path = Path(path)
    with output_errors(path, field):  # a name too long for the file system, a loop of links
        _check_output_dir(path, field)


def _check_output_dir(path: Path, field: str) -> None:
    if path.exists():
        if not path.is_dir():
            raise UserError(
                f"{path} is a file, not a folder",
                field=field,
                fix="name a folder (new or existing) for the exported files",
            )
        _writable_folder(path, path, field)
    else:
        _writable_folder(path.absolute().parent, path, field)


def check_output_file(path: Path, field: str = "--output") -> None:
    """Refuse, before any work, a file path that cannot be written: a folder, a device or
    FIFO, a read-only file, a missing or read-only parent folder."""
    path = Path(path)
    with output_errors(path, field):
        _check_output_file(path, field)


def _check_output_file(path: Path, field: str) -> None:
    if path.is_dir():
        raise UserError(
            f"{path} is a folder, not a file",
            field=field,
            fix=f"name a file, e.g. {path / 'report.html'}",
        )
    if path.exists() and not path.is_file():
        raise UserError(
            f"{path} is not a regular file",
            field=field,
            fix="name a regular file to write",
        )
    if path.exists() and not os.access(path, os.W_OK):
        raise UserError(
            f"cannot write {path}: the file is read-only",
            field=field,
            fix="choose another file, or make this one writable",
        )
    _writable_folder(path.absolute().parent, path, field)


def write_file_atomically(path: Path, text: str, field: str = "--output") -> None:
    """Write `text` beside `path` and rename it into place: readers never see half a file,
    and a failure leaves nothing behind."""
    path = Path(path)
    check_output_file(path, field)
    tmp = temp_beside(path)
    try:
        with output_errors(path, field):
            tmp.write_text(text, encoding="utf-8")
            os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise


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
