"""A CSV file's text, read so that a binary file, another encoding or a runaway field is one
clear refusal (file, line, fix) instead of a decoding error or a `csv.Error` traceback.

Shared by the agents table and graph files: both are CSVs a user writes or exports from a
spreadsheet, where Latin-1 (Windows-1252) files and unclosed quotes are the usual mistakes.
"""

from __future__ import annotations

import csv
import re
from pathlib import Path

from simulator.errors import UserError

FIELD_LIMIT = csv.field_size_limit()  # 131,072 characters unless a program raised it
# C0 controls other than tab and line breaks, DEL: a text CSV holds none of them
_CONTROL = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")


def read_csv_text(path: Path, field: str) -> str:
    """The file decoded as UTF-8 (a byte-order mark dropped), or a UserError naming `field`."""
    raw = path.read_bytes()
    if b"\x00" in raw:
        line = raw.count(b"\n", 0, raw.index(b"\x00")) + 1
        raise UserError(
            f"{path} is not a text file (line {line} holds a NUL byte).",
            field=field,
            fix="give a CSV saved as text (UTF-8), not a spreadsheet's own format such as .xlsx",
        )
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        raise UserError(
            f"{path}, line {line}: byte 0x{raw[exc.start]:02X} is not UTF-8; the file must be "
            "UTF-8 text.",
            field=field,
            fix=f"convert it, e.g. iconv -f latin1 -t utf-8 {path} > converted.csv (for a "
            "Latin-1 or Windows file), or save it from the spreadsheet as 'CSV UTF-8'",
        ) from None
    control = _CONTROL.search(text)
    if control is not None:
        line = text.count("\n", 0, control.start()) + 1
        raise UserError(
            f"{path}, line {line}: the control character U+{ord(control.group()):04X} is not "
            "allowed in a CSV.",
            field=field,
            fix="delete it; a file full of them is not a CSV text file (save it as CSV UTF-8)",
        )
    return text


def csv_problem(exc: csv.Error, source: str, line: int, field: str) -> UserError:
    """`csv.Error` (a field past FIELD_LIMIT, a stray quote) as a refusal naming the line."""
    if "field larger than field limit" in str(exc):
        return UserError(
            f"{source}, line {line}: a field is longer than {FIELD_LIMIT:,} characters.",
            field=field,
            fix="shorten it; a much longer field usually means a quote that opens a field and "
            'never closes (write a quote inside a field as "")',
        )
    return UserError(
        f"{source}, line {line}: {exc}.",
        field=field,
        fix='check the quotes on that line (write a quote inside a field as "")',
    )
