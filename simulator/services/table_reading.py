"""Workbooks read for `import table`: cell values as the spreadsheet last computed them.

Read-only and with cached formula values (openpyxl `data_only=True`, what pandas reads); a
formula without a cached value becomes `Uncached`, refused only where the mapping uses it.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

from simulator.domain.table_rows import Sheet, Uncached
from simulator.errors import UserError


def sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def open_workbook(path: Path, data_only: bool) -> Any:
    try:
        import openpyxl
    except ImportError:
        raise UserError(
            "reading spreadsheets needs openpyxl",
            fix="pip install 'llm-interaction-simulator[analysis]' (or pip install openpyxl)",
        ) from None
    if not path.is_file():
        raise UserError(
            f"{path}: no such file. Nothing was imported.",
            fix="check the mapping's file names and --from (the folder holding them)",
        )
    try:
        return openpyxl.load_workbook(path, read_only=True, data_only=data_only)
    except Exception as exc:  # zip, XML or format errors: all mean "not a workbook we can read"
        raise UserError(
            f"{path}: not a readable .xlsx workbook ({exc}). Nothing was imported.",
            fix="save it as an Excel workbook (.xlsx)",
        ) from None


def read_sheets(path: Path, names: list[str] | None, first_only: bool = False) -> list[Sheet]:
    """The named sheets (every sheet when None; the first when `first_only`), rows that hold
    nothing left out, row numbers as the spreadsheet shows them."""
    values_book = open_workbook(path, data_only=True)
    formula_book = open_workbook(path, data_only=False)
    try:
        present = values_book.sheetnames
        wanted = present[:1] if first_only and names is None else names or present
        sheets = []
        for name in wanted:
            if name not in present:
                raise UserError(
                    f"{path.name}: no sheet {name!r} (sheets: {', '.join(present)}). "
                    "Nothing was imported.",
                    fix="name an existing sheet in the mapping",
                )
            sheets.append(_sheet(path.name, name, values_book[name], formula_book[name]))
        return sheets
    finally:
        values_book.close()
        formula_book.close()


def _sheet(file: str, name: str, values_ws: Any, formula_ws: Any) -> Sheet:
    values = values_ws.iter_rows(values_only=True)
    formulas = formula_ws.iter_rows(values_only=True)
    header = list(next(values, None) or [])
    next(formulas, None)
    rows = []
    for number, (cached, written) in enumerate(zip(values, formulas, strict=False), start=2):
        cells = list(cached)
        for index, formula in enumerate(written):
            if (
                isinstance(formula, str)
                and formula.startswith("=")
                and index < len(cells)
                and cells[index] is None
            ):
                cells[index] = Uncached(formula)
        if any(c is not None and not (isinstance(c, str) and not c.strip()) for c in cells):
            rows.append((number, cells))
    while header and header[-1] is None:
        header.pop()
    return Sheet(file, name, header, rows)
