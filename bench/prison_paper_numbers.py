"""Compare our prison-paper measures with the authors' own numbers, table by table.

    python bench/prison_paper_numbers.py PATH/TO/conversational_analysis [--numbers FILE]

Imports the release into a scratch store through the real CLI (`import table prison_paper`),
runs `measures EXP --json`, and matches the tables under its `paper` key (PaperTable dicts:
`paper_ref`, `group_by`, rows with `group`, `value`, `n`) against
tests/fixtures/prison_paper/paper_numbers.json (the authors' scripts' outputs). Prints, per
table and row, theirs, ours and the difference, then one summary line per table.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
NUMBERS = ROOT / "tests" / "fixtures" / "prison_paper" / "paper_numbers.json"


class CliFailed(RuntimeError):
    """The CLI exited non-zero; the message holds its last lines of stderr."""


def cli(args: list[str], data_dir: str) -> dict:
    """Run the CLI of this checkout (main.py) and parse its --json output."""
    env = {**os.environ, "SIM_DATA_DIR": data_dir}
    done = subprocess.run([sys.executable, str(ROOT / "main.py"), *args], env=env,
                          capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise CliFailed(f"llm-sim {' '.join(args)} exited {done.returncode}: {tail}")
    return json.loads(done.stdout)


def row_key(group: dict, measure: str | None) -> tuple:
    """A row's identity: its group (sorted) and, when given, the measure it reports."""
    return (tuple(sorted((k, str(v)) for k, v in group.items())), measure or "")


def index_rows(rows: list[dict], with_measure: bool) -> dict[tuple, dict]:
    return {row_key(r.get("group", {}), r.get("measure") if with_measure else None): r
            for r in rows}


def compare(ref: str, theirs: dict, ours: dict | None) -> str:
    """Print one table's rows; return its summary line."""
    if ours is None:
        return f"{ref}: ours missing ({len(theirs['rows'])} rows of theirs)"
    our_rows = ours.get("rows", [])
    with_measure = any("measure" in r for r in our_rows)
    mine = index_rows(our_rows, with_measure)
    their = index_rows(theirs["rows"], with_measure)
    if not with_measure and len(their) < len(theirs["rows"]):
        measures = sorted({r.get("measure", "") for r in theirs["rows"]})
        wanted = ours.get("measure") or measures[0]
        their = index_rows([r for r in theirs["rows"] if r.get("measure", "") == wanted], False)
    worst, compared = 0.0, 0
    for key, t in their.items():
        o = mine.get(key)
        label = ", ".join(f"{k}={v}" for k, v in key[0]) + (f" [{key[1]}]" if key[1] else "")
        if o is None:
            print(f"  {label}: theirs {t['value']!r}, ours missing")
            continue
        if t["value"] is None or o.get("value") is None:
            print(f"  {label}: theirs {t['value']!r}, ours {o.get('value')!r}")
            continue
        diff = float(o["value"]) - float(t["value"])
        worst, compared = max(worst, abs(diff)), compared + 1
        print(f"  {label}: theirs {t['value']:.4f}, ours {float(o['value']):.4f}, diff {diff:+.4f}")
    only_ours = [k for k in mine if k not in their]
    return (f"{ref}: {compared} rows compared, max |diff| {worst:.4g}, "
            f"missing ours {len(their) - compared}, only ours {len(only_ours)}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", help="the folder conversational_analysis/ of the release")
    parser.add_argument("--numbers", default=str(NUMBERS), help="the authors' numbers (JSON)")
    args = parser.parse_args()
    numbers = json.loads(Path(args.numbers).read_text())
    with tempfile.TemporaryDirectory(prefix="paper-numbers-") as data_dir:
        imported = cli(["import", "table", "prison_paper", "--from", args.release, "--json"],
                       data_dir)
        try:
            measured = cli(["measures", imported["experiment_id"], "--json"], data_dir)
        except CliFailed as exc:
            print(f"{exc}\nNothing to compare ({len(numbers)} tables and figures of theirs).")
            return
    tables = measured.get("paper") if isinstance(measured, dict) else None
    if not tables:
        print("measures --json has no 'paper' tables yet: nothing to compare "
              f"({len(numbers)} tables and figures of the authors are waiting).")
        return
    ours = {t.get("paper_ref"): t for t in tables}
    summary = []
    for ref, theirs in numbers.items():
        if not theirs["rows"]:
            summary.append(f"{ref}: no numbers of theirs (see its 'what')")
            continue
        print(f"{ref} ({theirs['script']}):")
        summary.append(compare(ref, theirs, ours.get(ref)))
    for ref in ours:
        if ref not in numbers:
            summary.append(f"{ref}: ours only, no numbers of theirs under that name")
    print("\nSummary")
    for line in summary:
        print(line)


if __name__ == "__main__":
    main()
