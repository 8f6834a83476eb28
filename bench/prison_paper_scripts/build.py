"""Turn the captured runs of the authors' scripts into paper_numbers.json.

Usage: python build.py CAPTURE_DIR RUN_DIR OUT.json
CAPTURE_DIR holds capture.py's <script>.json files; RUN_DIR is the folder the scripts ran in
(their CSV files). Group keys use the cell factors' names with the data's own values.
"""

import csv
import json
import sys
from pathlib import Path

MODEL = {
    "llama3": "llama3:latest",
    "Llama3": "llama3:latest",
    "command-r": "command-r:latest",
    "Command-r": "command-r:latest",
    "orca2": "orca2:latest",
    "Orca2": "orca2:latest",
    "gpt4.1": "gpt-4.1-2025-04-14",
}
PERSONA = {
    "Respectful Guard": "Good Guard",
    "Abusive Guard": "Bad Guard",
    "Blank Personality Guard": "Blank Personalities",
    "Blank Pers. Guard": "Blank Personalities",
    "Peaceful Prisoner": "Good Prisoner",
    "Rebellious Prisoner": "Bad Prisoner",
    "Blank Personality Prisoner": "Blank Personalities",
    "Blank Pers. Prisoner": "Blank Personalities",
}
OUTCOME = {
    "Goal Achieved: Yes": "Yes",
    "Goal Achieved: No": "No",
    "Goal Achieved: Not Tried": "NotTried",
}
THIRD = {"1st 1/3": 1, "2nd 1/3": 2, "3rd 1/3": 3}
ROLES = ["all", "prisoner", "guard"]


def num(x):
    return None if x in (None, "") else float(x)


def read_csv(path):
    with open(path, newline="") as fh:
        return list(csv.DictReader(fh))


def cell_group(r, keys):
    names = {
        "llm": "model",
        "goal": "goal",
        "personality_guard": "guard_persona",
        "personality_prisoner": "prisoner_persona",
        "Risks": "risks",
        "Research Oversight": "oversight",
    }
    return {names[k]: MODEL.get(r[k], r[k]) for k in keys}


def failures_tables(run):
    out = {}
    files = sorted(run.glob("failures_by_full_scenario_*.csv"))
    for f in files:
        rows = []
        for r in read_csv(f):
            g = cell_group(
                r,
                [
                    "llm",
                    "Risks",
                    "Research Oversight",
                    "goal",
                    "personality_prisoner",
                    "personality_guard",
                ],
            )
            rows.append(
                {
                    "group": g,
                    "measure": "percent_failures",
                    "value": num(r["percent_failures"]),
                    "n": int(float(r["n_total"])),
                    "count": int(float(r["n_failures"])),
                }
            )
            rows.append(
                {
                    "group": g,
                    "measure": "marginal_failure_percent",
                    "value": num(r["marginal_failure_percent"]),
                    "n": None,
                    "count": int(float(r["n_failures"])),
                }
            )
        model = rows[0]["group"]["model"]
        out[model] = {"file": f.name, "rows": rows}
    return out


def attempt_tables(run, folder, keys):
    out = {}
    for f in sorted((run / folder).glob("attempt_success_*.csv")):
        model = f.stem.replace("attempt_success_", "")
        model = {
            "llama3_latest": "llama3:latest",
            "command-r_latest": "command-r:latest",
            "orca2_latest": "orca2:latest",
        }.get(model, model)
        rows = []
        for r in read_csv(f):
            g = {"model": model, **cell_group(r, keys)}
            rows.append(
                {
                    "group": g,
                    "measure": "P_attempt",
                    "value": num(r["P_attempt"]),
                    "n": int(float(r["n_total"])),
                    "count": int(float(r["n_attempts"])),
                }
            )
            rows.append(
                {
                    "group": g,
                    "measure": "P_success_given_attempt",
                    "value": num(r["P_success_given_attempt"]),
                    "n": int(float(r["n_attempts"])),
                    "count": int(float(r["n_success"])),
                }
            )
        out[model] = {"file": f"{folder}/{f.name}", "rows": rows}
    return out


def table8(run):
    rows = []
    for r in read_csv(run / "goal_attempt_success_summary.csv"):
        g = cell_group(r, ["llm", "goal"])
        rows.append(
            {
                "group": g,
                "measure": "P_attempt",
                "value": num(r["P_attempt"]),
                "n": int(float(r["n_total"])),
                "count": int(float(r["n_attempts"])),
            }
        )
        rows.append(
            {
                "group": g,
                "measure": "P_success_given_attempt",
                "value": num(r["P_success_given_attempt"]),
                "n": int(float(r["n_attempts"])),
                "count": int(float(r["n_success"])),
            }
        )
    return rows


def persona_pair(title):
    """'Peaceful Prisoner,  Respectful Guard' -> the two personas, data spelling."""
    prisoner, guard = [p.strip() for p in title.split(",")]
    return {
        "prisoner_persona": PERSONA.get(prisoner, prisoner),
        "guard_persona": PERSONA.get(guard, guard),
    }


def barcharts(fig, columns):
    rows = []
    for i, ax in enumerate(fig["axes"]):
        goal = "Yard Time" if i % 2 == 0 else "Escape"
        pair = persona_pair(ax["title"])
        models = [MODEL.get(t, t) for t in ax["xticklabels"]]
        bars = [c for c in ax["calls"] if c["kind"] == "bar"]
        for k, call in enumerate(bars):
            for j, h in enumerate(call["height"]):
                rows.append(
                    {
                        "group": {"model": models[j], "goal": goal, **pair},
                        "measure": columns[k],
                        "role": ROLES[k],
                        "value": h,
                        "sd": call["yerr"][j] if call["yerr"] else None,
                    }
                )
    return rows


def coefficients(fig, columns):
    rows = []
    terms = fig["axes"][0]["yticklabels"]
    for k, ax in enumerate(fig["axes"]):
        for i, call in enumerate(ax["calls"]):
            coef = call["x"]
            lo, hi = call["xerr"][0][0], call["xerr"][1][0]
            rows.append(
                {
                    "group": {"term": terms[i]},
                    "measure": columns[k],
                    "panel": ax["title"],
                    "value": coef,
                    "ci_low": coef - lo,
                    "ci_high": coef + hi,
                }
            )
    return rows


def correlogram(fig):
    data = fig["axes"][0]["calls"][0]["data"]
    rows = []
    for a, vals in zip(data["index"], data["values"], strict=True):
        for b, v in zip(data["columns"], vals, strict=True):
            rows.append({"group": {"a": a, "b": b}, "value": v})
    return rows


def figure2_left(fig):
    rows = []
    axes = fig["axes"]
    ncol = len(axes) // 2
    for c in range(ncol):
        model = MODEL.get(axes[c]["title"], axes[c]["title"])
        goals = axes[ncol + c]["xticklabels"]
        for r, measure, key, keymap in [
            (0, "outcome_share", "outcome", None),
            (1, "third_share", "third", THIRD),
        ]:
            for call in axes[r * ncol + c]["calls"]:
                # a single height is broadcast over every goal by matplotlib (gpt-4.1's
                # NotTried, absent for Yard Time): keep only the goal it was computed for
                for x, h in zip(call["x"], call["height"], strict=False):
                    goal = goals[int(x)]
                    lab = keymap[call["label"]] if keymap else call["label"]
                    rows.append(
                        {
                            "group": {"model": model, "goal": goal, key: lab},
                            "measure": measure,
                            "value": h,
                        }
                    )
    return rows


def figure2_right(fig):
    ax = fig["axes"][0]
    call = ax["calls"][0]
    labels = dict(zip([round(float(t)) for t in call["y"]], ax["yticklabels"], strict=True))
    rows = []
    for i, (orv, y) in enumerate(zip(call["x"], call["y"], strict=True)):
        lo, hi = call["xerr"][0][i], call["xerr"][1][i]
        rows.append(
            {
                "group": {"term": labels.get(round(y), str(y))},
                "measure": "odds_ratio",
                "value": orv,
                "ci_low": orv - lo,
                "ci_high": orv + hi,
            }
        )
    return rows


def persuasion_toxicity(frame, columns):
    """From the avg_df table the three panels plot (the figure's shared y axis can mislabel)."""
    rows = []
    for r in frame:
        guard, prisoner = [p.strip() for p in r["combined_personalities"].split(",")]
        g = {
            "model": MODEL.get(r["llm_x"], r["llm_x"]),
            "outcome": r["goal_achieved_x"],
            "guard_persona": PERSONA.get(guard, guard),
            "prisoner_persona": PERSONA.get(prisoner, prisoner),
        }
        for col in columns:
            rows.append(
                {"group": g, "measure": col, "value": r[f"{col}_mean"], "sd": r[f"{col}_std"]}
            )
    return rows


def main(cap, run, out):
    cap, run = Path(cap), Path(run)
    spec = json.loads((Path(__file__).parent / "paper_numbers_spec.json").read_text())
    figs = {}
    errors = {}
    frames = {}
    for f in cap.glob("*.json"):
        d = json.loads(f.read_text())
        errors[d["script"]] = d["errors"]
        frames.update(d.get("frames", {}))
        for fig in d["figures"]:
            figs[fig["file"]] = fig
    result = {}
    for ref, s in spec.items():
        entry = {k: v for k, v in s.items() if k not in ("kind", "columns", "model")}
        kind = s["kind"]
        if kind == "failures":
            t = failures_tables(run)[s["model"]]
            entry["output"], entry["rows"] = t["file"], t["rows"]
        elif kind == "attempts":
            t = attempt_tables(
                run,
                "attempt_success_by_goal_and_personality_tables",
                ["goal", "personality_prisoner", "personality_guard"],
            )[s["model"]]
            entry["output"], entry["rows"] = t["file"], t["rows"]
        elif kind == "table8":
            entry["output"], entry["rows"] = "goal_attempt_success_summary.csv", table8(run)
        elif kind == "missing":
            entry["rows"] = []
        else:
            fig = figs.get(s["output"])
            if kind == "persuasion_toxicity" and "avg_df" in frames:
                entry["rows"] = persuasion_toxicity(frames["avg_df"], s["columns"])
            elif fig is None:
                entry["rows"] = []
            elif kind == "bars":
                entry["rows"] = barcharts(fig, s["columns"])
            elif kind == "coefficients":
                entry["rows"] = coefficients(fig, s["columns"])
            elif kind == "correlogram":
                entry["rows"] = correlogram(fig)
            elif kind == "figure2_left":
                entry["rows"] = figure2_left(fig)
            elif kind == "figure2_right":
                entry["rows"] = figure2_right(fig)
        entry["script_errors"] = [e["error"] for e in errors.get(s["script"], [])]
        result[ref] = entry
    Path(out).write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    main(*sys.argv[1:4])
