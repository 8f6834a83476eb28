"""Write tidy tables as JSON Lines, CSV (stdlib only) or Parquet (pyarrow, optional:
parquet_out.py)."""

from __future__ import annotations

import contextlib
import csv
import json
import os
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path

from simulator.analysis.parquet_out import require_parquet, write_parquet
from simulator.errors import UserError

FORMATS = {"jsonl": "jsonl", "csv": "csv", "parquet": "parquet"}  # format -> file extension
_ENCODE = json.JSONEncoder(ensure_ascii=False, default=str).encode  # as json.dumps(row, …)


def columns_of(rows: list[dict]) -> list[str]:
    """Every key of every row, in first-seen order: rows of a sweep may differ (variants)."""
    return list(dict.fromkeys(key for row in rows for key in row))


def write_tables(
    tables: dict[str, list[dict]], fmt: str, out_dir: Path, field: str = "--output"
) -> list[Path]:
    """One file per table (`conversations.csv`, …), empty tables included, so a script that
    reads them never has to check whether a file exists."""
    paths, _ = write_batches([tables], list(tables), fmt, out_dir, field)
    return paths


def write_batches(
    batches: Iterable[dict[str, list[dict]]],
    names: Sequence[str],
    fmt: str,
    out_dir: Path,
    field: str = "--output",
) -> tuple[list[Path], dict[str, int]]:
    """Write the tables `names` from batches of rows as they come (see `table_batches`):
    memory holds one batch. Returns the files and the rows written per table.

    Every file is written beside its final name and renamed into place once all are complete:
    a failure (disk full, permission, a store error mid-way) leaves no partial file and no
    half-updated folder."""
    if fmt not in FORMATS:
        raise UserError(
            f"unknown export format {fmt!r}", field="--format", fix="use jsonl, csv or parquet"
        )
    if fmt == "parquet":
        require_parquet()
    out_dir = Path(out_dir)
    check_output_dir(out_dir, field)
    created = not out_dir.exists()
    spools: dict[str, Spool] = {}
    pending: list[tuple[Path, Path]] = []
    try:
        with output_errors(out_dir, field):
            out_dir.mkdir(exist_ok=True)
            for name in names:
                spools[name] = Spool(out_dir / f"{name}.{FORMATS[fmt]}", fmt)
            for batch in batches:
                for name, rows in batch.items():
                    spools[name].write(rows)
            for spool in spools.values():
                pending.append((spool.finish(), spool.target))
            for tmp, path in pending:
                os.replace(tmp, path)
    except BaseException:
        for spool in spools.values():
            spool.discard()
        if created:
            with contextlib.suppress(OSError):
                out_dir.rmdir()  # only if still empty
        raise
    return [path for _, path in pending], {name: s.rows for name, s in spools.items()}


def write_listed(
    batches: Iterable[dict[str, list[dict]]],
    names: Sequence[str],
    fmt: str,
    out_dir: Path,
    field: str = "--output",
) -> list[dict]:
    """`write_batches`, with one entry per table for the listing: name, path, rows."""
    paths, rows = write_batches(batches, names, fmt, out_dir, field)
    return [
        {"table": name, "path": str(path), "rows": rows[name]}
        for name, path in zip(names, paths, strict=True)
    ]


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


class Spool:
    """One table's rows as they come, as JSON Lines in a hidden file beside the target (the
    JSON Lines export itself), with the columns in first-seen order: a CSV header or a Parquet
    schema must name columns that first appear late (a later cell's variant slots), so CSV
    and Parquet are written from the spool once every row is in."""

    def __init__(self, target: Path, fmt: str):
        self.target, self.fmt, self.rows = target, fmt, 0
        self.tmp = temp_beside(target)
        self.path = self.tmp if fmt == "jsonl" else self.tmp.with_suffix(".rows")
        self.columns: dict[str, set[type]] = {}  # name -> the types of its values (Parquet)
        self._keys: tuple = ()
        self.path.open("w").close()  # an empty table still gets its file

    def write(self, rows: list[dict]) -> None:
        for row in rows:
            keys = tuple(row)
            if keys != self._keys:
                self._keys = keys
                for key in keys:
                    self.columns.setdefault(key, set())
            if self.fmt == "parquet":
                for key, value in row.items():
                    self.columns[key].add(type(value))
        _write_jsonl(rows, self.path)
        self.rows += len(rows)

    def finish(self) -> Path:
        """The complete file, still under its temporary name."""
        if self.fmt == "csv":
            _write_csv(self.path, list(self.columns), self.tmp)
        elif self.fmt == "parquet":
            write_parquet(self.path, self.columns, self.tmp)
        if self.path != self.tmp:
            self.path.unlink()
        return self.tmp

    def discard(self) -> None:
        self.path.unlink(missing_ok=True)
        self.tmp.unlink(missing_ok=True)


def _write_jsonl(rows: list[dict], path: Path) -> None:
    """Append rows to `path` as JSON Lines (the export itself, and every format's spool)."""
    with path.open("a", encoding="utf-8", newline="\n") as handle:
        for row in rows:
            handle.write(_ENCODE(row) + "\n")


def _spooled(path: Path) -> Iterator[dict]:
    with path.open(encoding="utf-8", newline="\n") as handle:
        for line in handle:
            yield json.loads(line)


def _write_csv(spool: Path, columns: list[str], path: Path) -> None:
    # newline="" lets the csv module quote texts that hold line breaks correctly
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=columns, restval="")
        writer.writeheader()
        for row in _spooled(spool):
            writer.writerow({k: "" if v is None else v for k, v in row.items()})
