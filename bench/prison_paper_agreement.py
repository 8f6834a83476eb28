"""The prison paper's inter-annotator agreement (its Table 7) recomputed with
`simulator.analysis.agreement`, printed beside the figures its own script printed
(tests/fixtures/prison_paper/table7.json) with the difference.

Usage (from the repository root): PYTHONPATH=. python bench/prison_paper_agreement.py FOLDER
FOLDER holds the release's command-r.xlsx, gpt.xlsx, orca2.xlsx and llama3.xlsx
(mobs-fbk/llm_interaction_simulator, conversational_analysis/). Reads them only; needs pandas
and openpyxl. Every sheet of a workbook is read, as the script reads them.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pandas as pd

from simulator.analysis.agreement import agreement

TABLE7 = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "prison_paper" / "table7.json"
COLUMNS = {"goal": ("GOAL1", "GOAL2"), "third": ("TURN1_DISCR", "TURN2_DISCR")}


def workbook_rows(path: Path) -> pd.DataFrame:
    sheets = pd.read_excel(path, sheet_name=None)  # every sheet, in order
    return pd.concat(sheets.values(), ignore_index=True)


def main(folder: Path) -> None:
    paper = json.loads(TABLE7.read_text(encoding="utf-8"))["models"]
    print(
        f"{'model':<10} {'measure':<6} {'n':>4} {'disagree':>8} {'kappa here':>11} "
        f"{'kappa paper':>11} {'difference':>11}"
    )
    for model, figures in paper.items():
        rows = workbook_rows(folder / figures["file"])
        for measure, (a, b) in COLUMNS.items():
            result = agreement(zip(rows[a].tolist(), rows[b].tolist(), strict=True))
            theirs = figures[measure]
            print(
                f"{model:<10} {measure:<6} {result.n:>4} {result.disagreeing:>8} "
                f"{result.kappa:>11.6f} {theirs['kappa']:>11.6f} "
                f"{result.kappa - theirs['kappa']:>11.2e}"
                + (
                    ""
                    if (result.n, result.disagreeing) == (theirs["n"], theirs["disagreements"])
                    else "  n or disagreements differ"
                )
            )


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(Path(sys.argv[1]))
