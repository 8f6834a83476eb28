"""The agents table: one survey participant per row, the coefficients an LLM agent is given.

Columns: name, a (susceptibility to friends), tau (stubbornness), f (susceptibility to outside
information), lambda (cost trade-off: higher, less likely to adopt), O_initial (opinion in
[0, 1]), A_initial (action 0 or 1), O_initial_text (the participant's reason, free text), with
a + tau + f = 1. The reference's own spellings (O_inital, A_inital, O_inital_text) are read too,
and `name` may be left out (agents are then named agent0, agent1, ...), so a user can bring the
reference's CSV unchanged. Every error carries the line number it was found on.
"""

from __future__ import annotations

import csv
import io
import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from simulator.errors import UserError
from simulator.worlds.network.domain.csv_text import csv_problem, read_csv_text

SUM_TOLERANCE = 1e-6
MAX_AGENT_ROWS = 10_000
MAX_TABLE_BYTES = 10_000_000
MAX_REPORTED = 5  # problems listed in one error; the rest are counted
COLUMNS = ("name", "a", "tau", "f", "lambda", "O_initial", "A_initial", "O_initial_text")
ALIASES = {"O_inital": "O_initial", "A_inital": "A_initial", "O_inital_text": "O_initial_text"}
COEFFICIENTS = ("a", "tau", "f", "lambda")


@dataclass(frozen=True)
class AgentRow:
    """One agent as the table gives it; `line` is where it stands in the file."""

    name: str
    a: float
    tau: float
    f: float
    lam: float  # the column `lambda` (a Python keyword)
    opinion: float  # O_initial, in [0, 1]
    action: int  # A_initial, 0 or 1
    text: str  # O_initial_text
    line: int = 0


def read_agents(path: str | Path) -> list[AgentRow]:
    """The rows of an agents CSV file (UTF-8, a byte-order mark allowed)."""
    path = Path(path).expanduser()
    if not path.is_file():
        raise UserError(
            f"no agents table at {path}.",
            field="agents",
            fix="give the path of a CSV with columns " + ", ".join(COLUMNS),
        )
    if path.stat().st_size > MAX_TABLE_BYTES:
        raise UserError(
            f"{path} is over {MAX_TABLE_BYTES // 1_000_000} MB.",
            field="agents",
            fix=f"keep the table under {MAX_AGENT_ROWS} rows",
        )
    return parse_agents(read_csv_text(path, "agents"), str(path))


def parse_agents(text: str, source: str = "agents.csv") -> list[AgentRow]:
    """Every row checked; all problems (the first few, with their lines) in one UserError."""
    reader = csv.reader(io.StringIO(text.lstrip("\ufeff")))
    try:
        return _parse(reader, source)
    except csv.Error as exc:
        raise csv_problem(exc, source, reader.line_num, "agents") from None


def _parse(reader: Any, source: str) -> list[AgentRow]:
    header = next(reader, None)
    if not header or not any(h.strip() for h in header):
        raise UserError(
            f"{source} is empty.",
            field="agents",
            fix="start with the header line: " + ",".join(COLUMNS),
        )
    columns = [ALIASES.get(h.strip(), h.strip()) for h in header]
    missing = [c for c in COLUMNS[1:] if c not in columns]
    if missing:
        raise UserError(
            f"{source}, line 1: the header lacks {', '.join(missing)}.",
            field="agents",
            fix="name the columns " + ",".join(COLUMNS) + " (name may be left out)",
        )
    rows: list[AgentRow] = []
    problems: list[str] = []
    start = reader.line_num + 1
    index = 0  # the agent's position: names agent0, agent1, ... when the table has none
    for record in reader:
        line, start = start, reader.line_num + 1  # a quoted field may span lines
        if not any(v.strip() for v in record):
            continue
        if len(rows) >= MAX_AGENT_ROWS:
            problems.append(f"line {line}: more than {MAX_AGENT_ROWS} agents")
            break
        if len(record) != len(columns):
            index += 1
            problems.append(
                f"line {line}: {len(record)} fields where the header has {len(columns)}"
            )
            continue
        values = dict(zip(columns, (v.strip() for v in record), strict=True))
        row, found = _row(values, line, default_name=f"agent{index}")
        index += 1
        problems += found
        if row is not None:
            rows.append(row)
    if not rows and not problems:
        problems.append(f"line {start}: no agent rows after the header")
    problems += _duplicate_names(rows)
    problems.sort(key=lambda text: int(text.split()[1].rstrip(":")))  # 'line N: ...'
    if problems:
        shown = "; ".join(problems[:MAX_REPORTED])
        more = f" (and {len(problems) - MAX_REPORTED} more)" if len(problems) > MAX_REPORTED else ""
        raise UserError(
            f"{source}: {shown}{more}.",
            field="agents",
            fix="correct those rows: a, tau, f and lambda in [0, 1] with a + tau + f = 1, "
            "O_initial in [0, 1], A_initial 0 or 1",
        )
    return rows


def _row(values: dict[str, str], line: int, default_name: str) -> tuple[AgentRow | None, list]:
    problems = []
    numbers: dict[str, float] = {}
    for column in (*COEFFICIENTS, "O_initial", "A_initial"):
        raw = values[column]
        try:
            number = float(raw)
        except ValueError:
            problems.append(f"line {line}: {column} is {raw!r}, not a number")
            continue
        if not math.isfinite(number) or not 0.0 <= number <= 1.0:
            problems.append(f"line {line}: {column} = {raw} is outside [0, 1]")
            continue
        numbers[column] = number
    action = numbers.get("A_initial")
    if action is not None and action not in (0.0, 1.0):
        problems.append(f"line {line}: A_initial = {values['A_initial']} is neither 0 nor 1")
    if all(c in numbers for c in ("a", "tau", "f")):
        total = numbers["a"] + numbers["tau"] + numbers["f"]
        if abs(total - 1.0) > SUM_TOLERANCE:
            problems.append(f"line {line}: a + tau + f = {total:.6g}, not 1")
    name = values.get("name", "") if "name" in values else default_name
    if not name:
        problems.append(f"line {line}: the name is empty")
    if problems:
        return None, problems
    row = AgentRow(
        name=name,
        a=numbers["a"],
        tau=numbers["tau"],
        f=numbers["f"],
        lam=numbers["lambda"],
        opinion=numbers["O_initial"],
        action=int(numbers["A_initial"]),
        text=values["O_initial_text"],
        line=line,
    )
    return row, []


def _duplicate_names(rows: list[AgentRow]) -> list[str]:
    """Neighbours' answers are shown under their names, so two agents may not share one."""
    seen: dict[str, int] = {}
    problems = []
    for row in rows:
        if row.name in seen:
            problems.append(
                f"line {row.line}: the name {row.name!r} is used on line {seen[row.name]}"
            )
        else:
            seen[row.name] = row.line
    return problems


def agent_groups(rows: list[AgentRow], size: int) -> list[list[AgentRow]]:
    """Consecutive blocks of `size` rows: the reference's groups (rows 0-2, 3-5, ... for
    groups of 3). A last, shorter block is left out: a group plays with its full size."""
    if size < 1:
        raise UserError(f"a group of {size} agents.", field="group_size", fix="choose 1 or more")
    return [rows[i : i + size] for i in range(0, len(rows) - size + 1, size)]
