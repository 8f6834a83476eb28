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
    done = subprocess.run(
        [sys.executable, str(ROOT / "main.py"), *args],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        tail = "\n".join(done.stderr.strip().splitlines()[-3:])
        raise CliFailed(f"llm-sim {' '.join(args)} exited {done.returncode}: {tail}")
    return json.loads(done.stdout)


# Which of our tables answers which of theirs: (their entry, their measure, our key); a row of
# theirs that names a `role` (the bar charts) or an `outcome`/`third` keeps it in its group.
MATCHES: tuple[tuple[str, str, str], ...] = (
    *((f"Table {n}", "percent_failures", "failures_by_scenario") for n in (3, 4, 5, 6)),
    ("Table 8", "P_attempt", "persuasion_attempts_by_model_goal"),
    ("Table 8", "P_success_given_attempt", "persuasion_success_by_model_goal"),
    *(
        (f"Table {n}", "P_attempt", "persuasion_attempts_by_model_goal_personas")
        for n in (9, 10, 11, 12)
    ),
    *(
        (f"Table {n}", "P_success_given_attempt", "persuasion_success_by_model_goal_personas")
        for n in (9, 10, 11, 12)
    ),
    ("Figure 2 (left)", "outcome_share", "outcome_distribution_by_model_goal"),
    ("Figure 2 (left)", "third_share", "success_third_by_model_goal"),
    ("Figure 4", "perc_toxic_all", "toxic_share_all_by_model_outcome_personas"),
    ("Figure 37", "perc_toxic_pris", "toxic_share_prisoner_by_model_outcome_personas"),
    ("Figure 38", "perc_toxic_guard", "toxic_share_guard_by_model_outcome_personas"),
    *(
        ("Figure 6", m, "toxigen_share_by_cell")
        for m in ("perc_toxic_all", "perc_toxic_pris", "perc_toxic_guard")
    ),
    *(
        ("Figure 8", m, "toxigen_score_by_cell")
        for m in ("score_toxic_all", "score_toxic_pris", "score_toxic_guard")
    ),
    *(
        ("Figure 13", f"perc_toxic_{w}_harassment", "harassment_share_by_cell")
        for w in ("overall", "pris", "guard")
    ),
    *(
        ("Figure 15", f"score_toxic_{w}_harassment", "harassment_score_by_cell")
        for w in ("overall", "pris", "guard")
    ),
    *(
        ("Figure 20", f"perc_toxic_{w}_violence", "violence_share_by_cell")
        for w in ("overall", "pris", "guard")
    ),
    *(
        ("Figure 22", f"score_toxic_{w}_violence", "violence_score_by_cell")
        for w in ("overall", "pris", "guard")
    ),
    # The regression figures: one of our tables per fit, every panel (role) in its rows; a
    # `_fractional` script's figure plots the same OLS fit as its plain twin.
    *(
        (ref, f"{stat}_toxic_{w}", key)
        for refs, stat, key in (
            (("Figure 3", "Figure 9"), "perc", "toxigen_share_ols"),
            (("Figure 7", "Figure 10"), "score", "toxigen_score_ols"),
        )
        for ref in refs
        for w in ("all", "pris", "guard")
    ),
    *(
        (ref, f"{stat}_toxic_{w}_{kind}", f"{kind}_{name}_ols")
        for kind, share_refs, score_refs in (
            ("harassment", ("Figure 11", "Figure 16"), ("Figure 14", "Figure 17")),
            ("violence", ("Figure 18", "Figure 23"), ("Figure 21", "Figure 24")),
        )
        for refs, stat, name in ((share_refs, "perc", "share"), (score_refs, "score", "score"))
        for ref in refs
        for w in ("overall", "pris", "guard")
    ),
    # The correlograms: their rows name no measure.
    *(
        (f"Figure {n} ({stat})", "", f"{kind}_{name}_correlations")
        for n, kind in ((5, "toxigen"), (12, "harassment"), (19, "violence"))
        for stat, name in (("percentage", "share"), ("score", "score"))
    ),
    ("Figure 2 (right)", "odds_ratio", "success_logit_odds_ratios"),
)


def row_key(group: dict) -> tuple:
    return tuple(sorted((k, str(v)) for k, v in group.items()))


def their_group(row: dict) -> dict:
    """Their row's group, with the role a bar chart's row names and a regression's panel."""
    extra = {k: row[k] for k in ("role", "panel") if row.get(k)}
    return {**row.get("group", {}), **extra}


def compare(ref: str, measure: str, theirs: dict, ours: dict | None, key: str) -> tuple:
    """Print one measure's rows; return (summary line, rows compared, worst |diff|)."""
    rows = [r for r in theirs["rows"] if r.get("measure", "") == measure]
    if ours is None:
        return f"{ref} [{measure}]: our {key} missing ({len(rows)} rows of theirs)", 0, 0.0
    mine = {row_key(r["group"]): r for r in ours.get("rows", [])}
    worst, compared, missing, unidentified = 0.0, 0, 0, 0
    for t in rows:
        o = mine.get(row_key(their_group(t)))
        label = ", ".join(f"{k}={v}" for k, v in row_key(their_group(t)))
        if o is None:
            missing += 1
            print(f"  {label}: theirs {t['value']!r}, ours missing")
            continue
        if (o.get("extra") or {}).get("identified") is False:
            unidentified += 1  # collinear with others: any value fits, theirs is noise
            print(f"  {label}: theirs {t['value']!r}, ours {o.get('value')!r} (not identified)")
            continue
        if t["value"] is None or o.get("value") is None:
            same = t["value"] is None and o.get("value") is None
            print(f"  {label}: theirs {t['value']!r}, ours {o.get('value')!r}")
            compared += int(same)
            continue
        value = float(o["value"])
        if round(float(t["value"]), 2) == float(t["value"]):  # their CSV's 2-decimal rounding
            value = round(value, 2)
        diff = value - float(t["value"])
        worst, compared = max(worst, abs(diff)), compared + 1
        print(f"  {label}: theirs {t['value']:.6g}, ours {value:.6g}, {diff:+.2g}")
    line = (
        f"{ref} [{measure}] vs {key}: {compared} of {len(rows)} rows compared, "
        f"max |diff| {worst:.3g}, missing ours {missing}"
        + (f", not identified {unidentified}" if unidentified else "")
    )
    return line, compared, worst


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("release", help="the folder conversational_analysis/ of the release")
    parser.add_argument("--numbers", default=str(NUMBERS), help="the authors' numbers (JSON)")
    args = parser.parse_args()
    numbers = json.loads(Path(args.numbers).read_text())
    with tempfile.TemporaryDirectory(prefix="paper-numbers-") as data_dir:
        imported = cli(
            ["import", "table", "prison_paper", "--from", args.release, "--json"], data_dir
        )
        try:
            measured = cli(["measures", imported["experiment_id"], "--json"], data_dir)
        except CliFailed as exc:
            print(f"{exc}\nNothing to compare ({len(numbers)} tables and figures of theirs).")
            return
    tables = measured.get("paper") if isinstance(measured, dict) else None
    if not tables:
        print(
            "measures --json has no 'paper' tables yet: nothing to compare "
            f"({len(numbers)} tables and figures of the authors are waiting)."
        )
        return
    ours = {t["key"]: t for t in tables}
    summary, total, worst_all = [], 0, 0.0
    for ref, measure, key in MATCHES:
        print(f"{ref} [{measure}] ({numbers[ref]['script']}) vs {key}:")
        line, compared, worst = compare(ref, measure, numbers[ref], ours.get(key), key)
        summary.append(line)
        total, worst_all = total + compared, max(worst_all, worst)
    matched = {ref for ref, _, _ in MATCHES}
    for ref, theirs in numbers.items():
        if ref not in matched:
            what = "no numbers" if not theirs["rows"] else f"{len(theirs['rows'])} rows"
            summary.append(f"{ref}: not compared ({what} of theirs; {theirs['what'][:60]}...)")
    print("\nSummary")
    for line in summary:
        print(line)
    print(f"{total} numbers compared, largest |difference| {worst_all:.3g}")


if __name__ == "__main__":
    main()
