"""How a spreadsheet of labelled transcripts maps onto experiments, conversations and scores.

A mapping names the workbooks whose rows are conversations (`tables`), more workbooks joined to
them by the conversation id (`joins`), and in each which column holds the id, the transcript,
the factors of the conversation's cell, its labels and its numeric scores. Columns are named by
their header, or `#N` (the Nth column, from 1) where the header is empty. Pure: validated here,
read by services/table_import.py.
"""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from simulator.domain.yaml_io import load_model

SLUG = r"^[a-z][a-z0-9_]*$"


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class LabelColumns(Strict):
    """A categorical label (`column`: Yes / No / ...) or a turn label (`turn` and/or `third`:
    the turn a goal was reached, and the third of the conversation it falls in). `words` are
    what a turn or third cell may hold instead of a whole number (e.g. NAN), kept as written."""

    column: str | None = None
    turn: str | None = None
    third: str | None = None
    words: list[str] = Field(default_factory=list)

    @model_validator(mode="after")
    def _one_kind(self) -> LabelColumns:
        if (self.column is None) == (self.turn is None and self.third is None):
            raise ValueError("give either `column` (a label) or `turn` and/or `third`")
        return self

    def columns(self) -> list[str]:
        return [c for c in (self.column, self.turn, self.third) if c is not None]


class Fields(Strict):
    """What a table or a joined table contributes to each conversation."""

    factors: dict[str, str] = Field(default_factory=dict)  # factor name -> column
    labels: dict[str, LabelColumns] = Field(default_factory=dict)  # source -> columns
    scores: dict[str, str] = Field(default_factory=dict)  # source -> column of numbers

    @field_validator("factors", "labels", "scores")
    @classmethod
    def _slugs(cls, value: dict) -> dict:
        for name in value:
            if not re.match(SLUG, name):
                raise ValueError(f"{name!r}: use lower-case letters, digits and _")
        return value

    def columns(self) -> list[str]:
        found = [*self.factors.values(), *self.scores.values()]
        for label in self.labels.values():
            found += label.columns()
        return found


class Transcript(Strict):
    """The column holding a whole conversation, and how one turn is written: `turn` is a regular
    expression with the named groups `speaker` and `text` (and optionally `turn`), matched
    repeatedly; together the matches must cover the cell (only white space between them).
    `turn_start`, a looser pattern, finds where turns seem to begin: each of its matches must
    begin a turn, so a turn written wrongly is refused instead of read as part of the one
    before. Turn numbers, where `turn` captures them, may never go down."""

    column: str
    turn: str
    turn_start: str | None = None
    roles: dict[str, str] = Field(min_length=1)  # speaker name as written -> role

    @field_validator("turn")
    @classmethod
    def _groups(cls, value: str) -> str:
        try:
            pattern = re.compile(value)
        except re.error as exc:
            raise ValueError(f"not a regular expression: {exc}") from None
        missing = {"speaker", "text"} - set(pattern.groupindex)
        if missing:
            raise ValueError(f"the pattern lacks the named group(s) {sorted(missing)}")
        return value

    @field_validator("turn_start")
    @classmethod
    def _compiles(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                re.compile(value)
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
        return value


class Table(Fields):
    """Workbooks whose rows are conversations (every sheet, or the named ones)."""

    files: list[str] = Field(min_length=1)
    sheets: list[str] | None = None
    id: str
    transcript: Transcript
    sheet_factors: str | None = None  # regex on the sheet name; its named groups are factors

    @field_validator("sheet_factors")
    @classmethod
    def _sheet_pattern(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                groups = re.compile(value).groupindex
            except re.error as exc:
                raise ValueError(f"not a regular expression: {exc}") from None
            if not groups:
                raise ValueError("the pattern names no group, so it gives no factor")
        return value

    def factor_names(self) -> list[str]:
        names = list(self.factors)
        if self.sheet_factors:
            names += list(re.compile(self.sheet_factors).groupindex)
        return names


class Join(Fields):
    """A workbook with one row per conversation, matched to the tables' rows by `id`."""

    file: str
    sheet: str | None = None  # None: the first sheet
    id: str


class Failed(Strict):
    """A conversation is failed (kept, marked `failed`) when this label source has one of these
    values."""

    label: str
    equals: list[str] = Field(min_length=1)


class TableMapping(Strict):
    name: str = Field(pattern=SLUG, max_length=60)
    experiment: str = Field(min_length=1, max_length=120)
    note: str = Field(default="", max_length=2000)
    tables: list[Table] = Field(min_length=1)
    joins: list[Join] = Field(default_factory=list)
    failed: Failed | None = None

    @model_validator(mode="after")
    def _consistent(self) -> TableMapping:
        joined = [*self.joins]
        for index, table in enumerate(self.tables):
            for kind in ("factors", "labels", "scores"):
                seen: dict[str, str] = {}
                own = table.factor_names() if kind == "factors" else list(getattr(table, kind))
                parts = [(f"tables[{index}]", own)]
                parts += [(f"joins[{j}]", list(getattr(jn, kind))) for j, jn in enumerate(joined)]
                for where, names in parts:
                    for name in names:
                        if name in seen:
                            raise ValueError(
                                f"{kind[:-1]} {name!r} comes from both {seen[name]} and {where}"
                            )
                        seen[name] = where
        if self.failed is not None:
            for index, table in enumerate(self.tables):
                if self.failed.label not in self.label_sources(table):
                    raise ValueError(
                        f"failed.label {self.failed.label!r} is no label source of "
                        f"tables[{index}] or the joins"
                    )
        return self

    def label_sources(self, table: Table) -> dict[str, LabelColumns]:
        found = dict(table.labels)
        for join in self.joins:
            found.update(join.labels)
        return found

    def files(self) -> list[str]:
        names = [f for table in self.tables for f in table.files]
        return list(dict.fromkeys([*names, *(j.file for j in self.joins)]))


def load_mapping(path: str | Path) -> TableMapping:
    return load_model(path, TableMapping, "table mapping")
