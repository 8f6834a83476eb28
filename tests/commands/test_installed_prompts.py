"""The shipped prompts are package data, so a non-editable install has them too.

`.ci/run` proves it end to end (a wheel in a throwaway venv runs the demo on `mock:` from outside
the repository); these fast checks keep the pieces in place between CI runs.
"""

from __future__ import annotations

import tomllib
from fnmatch import fnmatch
from importlib.resources import files
from pathlib import Path

from simulator.analysis.scorers.rubric import RUBRICS_DIR, find_rubric
from simulator.prompting.templates import PROMPTS_DIR, load_template

REPO = Path(__file__).resolve().parents[2]


def test_prompts_are_found_inside_the_package():
    package = Path(str(files("simulator")))
    assert package / "prompts" == PROMPTS_DIR
    assert package / "prompts" / "rubrics" == RUBRICS_DIR
    assert load_template("manager") and load_template("summarizer")
    assert find_rubric("prison_goal") == RUBRICS_DIR / "prison_goal.yaml"


def test_the_package_folder_is_the_top_level_prompts_folder():
    """Users edit `prompts/` (the README's paths); the package ships the same files."""
    shipped = sorted(p.relative_to(PROMPTS_DIR) for p in PROMPTS_DIR.rglob("*") if p.is_file())
    top = sorted(p.relative_to(REPO / "prompts") for p in (REPO / "prompts").rglob("*"))
    assert shipped == [p for p in top if (REPO / "prompts" / p).is_file()]
    assert (PROMPTS_DIR / "experiments" / "prison.yaml").read_bytes() == (
        REPO / "prompts" / "experiments" / "prison.yaml"
    ).read_bytes()


def test_package_data_covers_every_shipped_prompt():
    """A prompt file the wheel's package-data patterns miss would vanish from `pip install .`."""
    config = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
    patterns = config["tool"]["setuptools"]["package-data"]["simulator"]
    missed = [
        rel
        for rel in (p.relative_to(PROMPTS_DIR.parent) for p in PROMPTS_DIR.rglob("*"))
        if (PROMPTS_DIR.parent / rel).is_file()
        and not any(fnmatch(rel.as_posix(), pattern) for pattern in patterns)
    ]
    assert missed == []
