"""`experiment list` and `conversation list` fit an 80-column terminal: one line per row, no line
wider than the screen, ids whole; `--json` keeps every field in full."""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.cells import cell_len

REPO = Path(__file__).resolve().parents[2]
SHIPPED = ("prison", "party_grid", "llm_sam_network", "takata_grid")
LONG_NOTE = "A note that goes on and on\nover two lines, with 漢字 and emoji 🙂 " + "word " * 60


@pytest.fixture
def listed(sim, tmp_path):
    """The four shipped experiments (one with a long two-line note) and a run of each world."""
    db = str(tmp_path / "store")
    ids = {}
    for name in SHIPPED:
        path = REPO / "prompts" / "experiments" / f"{name}.yaml"
        ids[name] = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    updated = sim("experiment", "update", ids["prison"], "--note", LONG_NOTE, "--favourite", db=db)
    assert updated.code == 0, updated.err
    runs = (
        ("prison", "--agents", "guard=1,prisoner=1", "--messages", "2"),
        ("takata_grid", "--agents", "2", "--steps", "1"),
        ("llm_sam_network", "--rounds", "1"),
    )
    for name, *flags in runs:
        ran = sim("run", ids[name], *flags, "--llm", "mock:x", "--seed", "1", "--json", db=db)
        assert ran.code == 0, ran.err
    return db, ids


def rows_of(out: str, prefix: str) -> list[str]:
    return [line for line in out.splitlines() if prefix in line]


def assert_fits(out: str, width: int) -> None:
    widest = max(cell_len(line) for line in out.splitlines())
    assert widest <= width, out


@pytest.mark.parametrize("columns", [80, 60, 200])
def test_experiment_list_is_one_line_per_experiment(sim, listed, columns):
    db, ids = listed
    result = sim("experiment", "list", db=db, env={"COLUMNS": str(columns)})
    assert result.code == 0, result.err
    assert_fits(result.out, columns)
    rows = rows_of(result.out, "exp_")
    assert len(rows) == len(SHIPPED)  # one line each: nothing wrapped onto a second line
    for exp_id in ids.values():
        assert sum(exp_id in row for row in rows) == 1  # the id whole, on its row
    assert "word word" not in result.out.split("\n", 1)[0]  # the title line holds no note
    prison = next(row for row in rows if ids["prison"] in row)
    if columns == 80:
        assert prison.startswith("★") and "A note that" in prison and prison.endswith("…")


def test_experiment_list_json_keeps_the_whole_note(sim, listed):
    db, ids = listed
    [prison] = [
        e for e in sim("experiment", "list", "--json", db=db).json() if e["id"] == ids["prison"]
    ]
    assert prison["note"] == LONG_NOTE


@pytest.mark.parametrize("columns", [80, 50, 200])
def test_conversation_list_is_one_line_per_conversation(sim, listed, columns):
    db, _ = listed
    docs = sim("conversation", "list", "--json", db=db).json()
    assert len(docs) == 3
    result = sim("conversation", "list", db=db, env={"COLUMNS": str(columns)})
    assert result.code == 0, result.err
    assert_fits(result.out, columns)
    rows = rows_of(result.out, "conv_")
    assert len(rows) == 3
    for doc in docs:
        [row] = [row for row in rows if doc["_id"] in row]  # whole, never cut
        if columns >= 80:
            assert doc["experiment_id"] in row and doc["status"] in row
    if columns == 200:
        assert "…" not in result.out and "created" in result.out


def test_a_long_name_is_cut_with_an_ellipsis_not_wrapped(sim, tmp_path):
    db = str(tmp_path / "store")
    path = tmp_path / "long.yaml"
    text = (REPO / "prompts" / "experiments" / "prison.yaml").read_text(encoding="utf-8")
    name = "An experiment whose name alone is wider than a whole terminal of eighty columns"
    path.write_text(text.replace("name: Prison experiment", f"name: {name}", 1), encoding="utf-8")
    exp_id = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    result = sim("experiment", "list", db=db, env={"COLUMNS": "80"})
    assert_fits(result.out, 80)
    [row] = rows_of(result.out, exp_id)
    assert "An experiment who…" in row and name not in row
