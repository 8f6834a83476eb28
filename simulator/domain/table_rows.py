"""Rows of a spreadsheet as conversations to import: transcript turns, factors, labels, scores.

Pure. A `Sheet` is what the reader gives (headers and rows of cell values, with where they came
from); `build_rows` checks every cell the mapping uses and returns the conversations, or raises
one UserError naming the file, sheet, row and column of the first problem, with the fix.
"""

from __future__ import annotations

import itertools
import math
import re
from dataclasses import dataclass, field
from typing import Any

from simulator.domain.table_mapping import Fields, LabelColumns, Table, TableMapping
from simulator.errors import UserError


class Uncached:
    """A formula cell the workbook holds no computed value for (saved by a program that does
    not compute formulas)."""

    def __init__(self, formula: str):
        self.formula = formula


@dataclass(frozen=True)
class Sheet:
    file: str
    name: str
    headers: list[str | None]
    rows: list[tuple[int, list[Any]]]  # (row number as the spreadsheet shows it, cells)

    def column(self, ref: str) -> int | None:
        """Index of a column named by its header, or `#N` (the Nth, from 1)."""
        if re.fullmatch(r"#\d+", ref):
            index = int(ref[1:]) - 1
            return index if 0 <= index < len(self.headers) else None
        wanted = ref.strip()
        for index, header in enumerate(self.headers):
            if header is not None and str(header).strip() == wanted:
                return index
        return None


@dataclass(frozen=True)
class Turn:
    speaker: str
    role: str
    text: str
    turn: int | None


@dataclass
class ImportRow:
    source_id: str
    file: str
    sheet: str
    row: int
    factors: dict[str, str]
    turns: list[Turn]
    labels: dict[str, dict] = field(default_factory=dict)  # source -> values
    scores: dict[str, float] = field(default_factory=dict)
    failed: bool = False


def column_letter(index: int) -> str:
    letters = ""
    index += 1
    while index:
        index, rest = divmod(index - 1, 26)
        letters = chr(65 + rest) + letters
    return letters


class Cells:
    """One row's cells, read by column reference; problems name where they are."""

    def __init__(self, sheet: Sheet, number: int, cells: list[Any]):
        self.sheet, self.row, self.cells = sheet, number, cells

    def where(self, ref: str) -> str:
        index = self.sheet.column(ref)
        col = f"column {column_letter(index)} ({ref})" if index is not None else f"column {ref}"
        return f"{self.sheet.file}, sheet {self.sheet.name!r}, row {self.row}, {col}"

    def fail(self, ref: str, problem: str, fix: str) -> UserError:
        return UserError(f"{self.where(ref)}: {problem}. Nothing was imported.", fix=fix)

    def value(self, ref: str) -> Any:
        index = self.sheet.column(ref)
        if index is None:
            raise missing_column(self.sheet, ref)
        value = self.cells[index] if index < len(self.cells) else None
        if isinstance(value, Uncached):
            raise self.fail(
                ref,
                f"the formula {value.formula} has no computed value saved in the file",
                "open the workbook in a spreadsheet program and save it, so its formulas are "
                "computed and stored",
            )
        if isinstance(value, float) and math.isnan(value):
            return None
        if isinstance(value, str) and not value.strip():
            return None
        return value

    def text(self, ref: str) -> str | None:
        value = self.value(ref)
        return None if value is None else str(value).strip()

    def integer(self, ref: str, words: list[str] | None = None) -> int | str | None:
        """A whole number (1, 1.0, "1.0"), or one of `words` as written."""
        value = self.value(ref)
        if isinstance(value, str) and value.strip() in (words or []):
            return value.strip()
        if value is None or isinstance(value, bool):
            return None if value is None else self._not_number(ref, value)
        try:
            number = float(str(value).strip())
        except ValueError:
            return self._not_number(ref, value, words)
        if not number.is_integer():  # also NaN and infinities
            return self._not_number(ref, value, words)
        return int(number)

    def number(self, ref: str) -> float | None:
        value = self.value(ref)
        if value is None:
            return None
        try:
            number = float(str(value).strip())
        except ValueError:
            number = math.nan
        if math.isnan(number):
            problem = f"{value!r} is not a number"
            raise self.fail(ref, problem, "write a number or leave it empty")
        return number

    def _not_number(self, ref: str, value: Any, words: list[str] | None = None) -> int:
        allowed = f" (nor one of the label's words: {', '.join(words)})" if words else ""
        problem = f"{value!r} is not a whole number{allowed}"
        fix = "write a whole number or leave it empty, or add the word to the label's `words`"
        raise self.fail(ref, problem, fix)


def missing_column(sheet: Sheet, ref: str) -> UserError:
    named = [str(h).strip() for h in sheet.headers if h is not None and str(h).strip()]
    return UserError(
        f"{sheet.file}, sheet {sheet.name!r}: no column {ref!r} (headers in row 1: "
        f"{', '.join(named) or 'none'}). Nothing was imported.",
        field=ref,
        fix="name a column by its header in row 1, or as #N for the Nth column, in the mapping",
    )


def parse_transcript(cells: Cells, table: Table) -> list[Turn]:
    """The turns of one transcript cell; a stretch that is not a turn is refused."""
    spec = table.transcript
    text = cells.value(spec.column)
    if text is None:
        raise cells.fail(spec.column, "the transcript is empty", "fill the cell or drop the row")
    text = str(text)
    pattern = re.compile(spec.turn)
    turns: list[Turn] = []
    starts: set[int] = set()
    at = 0
    for match in pattern.finditer(text):
        _check_gap(cells, spec.column, text, at, match.start())
        starts.add(match.start())
        at = match.end()
        speaker = match.group("speaker").strip()
        if speaker not in spec.roles:
            raise cells.fail(
                spec.column,
                f"turn {len(turns) + 1} is spoken by {speaker!r}, which the mapping gives no role",
                f"add {speaker!r} to transcript.roles ({', '.join(spec.roles)} so far)",
            )
        number = match.groupdict().get("turn")
        turns.append(
            Turn(speaker, spec.roles[speaker], match.group("text").strip(),
                 int(number) if number and number.isdigit() else None)
        )  # fmt: skip
    _check_gap(cells, spec.column, text, at, len(text))
    if not turns:
        raise cells.fail(spec.column, "no turn matches transcript.turn", _turn_fix(table))
    _check_starts(cells, table, text, starts)
    _check_numbers(cells, spec.column, turns)
    return turns


def _check_starts(cells: Cells, table: Table, text: str, starts: set[int]) -> None:
    """Every place `turn_start` finds must begin a turn: a header written wrongly is refused."""
    if not table.transcript.turn_start:
        return
    for loose in re.finditer(table.transcript.turn_start, text):
        if loose.start() not in starts:
            line = text[loose.start() :].split("\n", 1)[0]
            raise cells.fail(
                table.transcript.column,
                f"a turn at character {loose.start()} is not written as transcript.turn "
                f"expects: {' '.join(line.split())[:80]!r}",
                "correct that turn in the sheet, or widen transcript.turn in the mapping",
            )


def _check_numbers(cells: Cells, ref: str, turns: list[Turn]) -> None:
    numbers = [t.turn for t in turns if t.turn is not None]
    for index, (before, after) in enumerate(itertools.pairwise(numbers), start=2):
        if after < before:
            raise cells.fail(
                ref,
                f"turn {index} is numbered {after}, after a turn numbered {before}",
                "number the turns in order",
            )


def _check_gap(cells: Cells, ref: str, text: str, start: int, end: int) -> None:
    gap = text[start:end]
    if gap.strip():
        snippet = " ".join(gap.split())[:80]
        raise cells.fail(
            ref,
            f"characters {start}-{end} are not a turn: {snippet!r}",
            "write every turn as transcript.turn expects, or widen that pattern in the mapping",
        )


def _turn_fix(table: Table) -> str:
    return f"write turns as the pattern {table.transcript.turn!r} expects, or change it"


def read_fields(cells: Cells, fields: Fields, row: ImportRow) -> None:
    for factor, ref in fields.factors.items():
        value = cells.text(ref)
        if value is None:
            raise cells.fail(ref, f"factor {factor!r} is empty", "fill the cell")
        row.factors[factor] = value
    for source, columns in fields.labels.items():
        values = label_values(cells, columns)
        if values:
            row.labels[source] = values
    for source, ref in fields.scores.items():
        number = cells.number(ref)
        if number is not None:
            row.scores[source] = number


def label_values(cells: Cells, columns: LabelColumns) -> dict:
    """{"label": "Yes"} or {"turn": 3, "third": 1}; empty cells are missing labels ({})."""
    if columns.column is not None:
        label = cells.text(columns.column)
        return {} if label is None else {"label": label}
    values = {}
    if columns.turn is not None:
        values["turn"] = cells.integer(columns.turn, columns.words)
    if columns.third is not None:
        values["third"] = cells.integer(columns.third, columns.words)
    return {} if all(v is None for v in values.values()) else values


def check_columns(sheet: Sheet, refs: list[str]) -> None:
    for ref in refs:
        if sheet.column(ref) is None:
            raise missing_column(sheet, ref)


def build_rows(
    mapping: TableMapping, tables: list[tuple[Table, list[Sheet]]], joins: list[Sheet]
) -> list[ImportRow]:
    """Every conversation of every table, joined, checked; the first problem raises."""
    joined = [(s, _index_join(s, j.id)) for s, j in zip(joins, mapping.joins, strict=True)]
    for sheet, join in zip(joins, mapping.joins, strict=True):
        check_columns(sheet, [join.id, *join.columns()])
    rows: list[ImportRow] = []
    seen: dict[str, str] = {}
    for table, sheets in tables:
        for sheet in sheets:
            check_columns(sheet, [table.id, table.transcript.column, *table.columns()])
            sheet_factors = _sheet_factors(table, sheet)
            for number, values in sheet.rows:
                cells = Cells(sheet, number, values)
                source_id = cells.text(table.id)
                if source_id is None:
                    raise cells.fail(table.id, "the conversation id is empty", "fill it in")
                if source_id in seen:
                    raise cells.fail(
                        table.id, f"id {source_id} is also at {seen[source_id]}",
                        "give each conversation one row",
                    )  # fmt: skip
                seen[source_id] = f"{sheet.file}, sheet {sheet.name!r}, row {number}"
                row = ImportRow(source_id, sheet.file, sheet.name, number, dict(sheet_factors), [])
                row.turns = parse_transcript(cells, table)
                read_fields(cells, table, row)
                for join, (jsheet, index) in zip(mapping.joins, joined, strict=True):
                    found = index.get(source_id)
                    if found is None:
                        raise cells.fail(
                            table.id,
                            f"id {source_id} has no row in {jsheet.file}, sheet {jsheet.name!r}",
                            f"add its row there, or remove it from {sheet.file}",
                        )
                    read_fields(Cells(jsheet, *found), join, row)
                _mark_failed(mapping, row)
                rows.append(row)
    return rows


def _index_join(sheet: Sheet, ref: str) -> dict[str, tuple[int, list[Any]]]:
    index: dict[str, tuple[int, list[Any]]] = {}
    for number, values in sheet.rows:
        cells = Cells(sheet, number, values)
        key = cells.text(ref)
        if key is None:
            raise cells.fail(ref, "the conversation id is empty", "fill it in")
        if key in index:
            raise cells.fail(ref, f"id {key} is also in row {index[key][0]}", "keep one row per id")
        index[key] = (number, values)
    return index


def _sheet_factors(table: Table, sheet: Sheet) -> dict[str, str]:
    if not table.sheet_factors:
        return {}
    match = re.search(table.sheet_factors, sheet.name)
    if match is None:
        raise UserError(
            f"{sheet.file}, sheet {sheet.name!r}: the sheet name does not match sheet_factors "
            f"{table.sheet_factors!r}. Nothing was imported.",
            field="sheet_factors",
            fix="rename the sheet, or change sheet_factors (or list only matching sheets)",
        )
    return {k: v for k, v in match.groupdict().items() if v is not None}


def _mark_failed(mapping: TableMapping, row: ImportRow) -> None:
    if mapping.failed is None:
        return
    label = row.labels.get(mapping.failed.label, {}).get("label")
    row.failed = label in mapping.failed.equals
