"""Bad experiment files end in one clear error naming file, line, field and fix."""

from __future__ import annotations

import pytest

from simulator.domain.params import GenerationParams
from simulator.domain.yaml_io import load_model
from simulator.errors import UserError
from simulator.worlds.chat.domain.experiment import Experiment

GOOD = """\
name: t
starting_message: go
llms:
- model: mock:a
roles:
- name: Guard
  sections:
  - title: Start
    content: You guard.
"""


def load(tmp_path, text: str) -> Experiment:
    path = tmp_path / "exp.yaml"
    path.write_text(text, encoding="utf-8")
    return load_model(path, Experiment, "experiment")


def test_good_file_loads(tmp_path):
    assert load(tmp_path, GOOD).roles[0].name == "Guard"


def test_malformed_yaml_reports_line_and_column(tmp_path):
    with pytest.raises(UserError) as info:
        load(tmp_path, GOOD + "roles: [unclosed\n")
    assert "line 11" in str(info.value) and "column" in str(info.value)


@pytest.mark.parametrize(
    ("edit", "expected"),
    [
        (lambda t: t + "colour: blue\n", "colour"),
        (lambda t: t.replace("starting_message: go\n", ""), "starting_message"),
        (lambda t: t.replace("mock:a", "olama:x"), "Did you mean 'ollama:'"),
        (
            lambda t: t.replace(
                "- model: mock:a", "- model: mock:a\n  params:\n    temperature: 5"
            ),
            "llms[0].params.temperature",
        ),
        (
            lambda t: t + "- name: guard\n  sections:\n  - title: S\n    content: x\n",
            "duplicate role names",
        ),
        (lambda t: t.replace("You guard.", "You <GUARD_NOUNS>."), "Did you mean <GUARD_NOUN>?"),
        (
            lambda t: t.replace(
                "  - title: Start\n", "  - title: Start\n    content: a\n  - title: Start\n"
            ),
            "duplicate section titles",
        ),
    ],
)
def test_bad_input_is_one_clear_error(tmp_path, edit, expected):
    with pytest.raises(UserError) as info:
        load(tmp_path, edit(GOOD))
    message = str(info.value)
    assert expected in message
    assert "exp.yaml" in message and "Fix:" in message
    assert "\n" not in message.strip()


def test_error_points_at_the_line_of_the_bad_field(tmp_path):
    text = GOOD.replace("- model: mock:a", "- model: mock:a\n  params:\n    top_p: 3")
    with pytest.raises(UserError, match="line 6"):
        load(tmp_path, text)


def test_params_bounds_and_merge():
    base = GenerationParams(temperature=0.2, max_tokens=50)
    merged = base.merge(GenerationParams(temperature=0.9, seed=3))
    assert merged.as_dict() == {"temperature": 0.9, "max_tokens": 50, "seed": 3}
    with pytest.raises(ValueError):
        GenerationParams(top_k=0)
    with pytest.raises(ValueError):
        GenerationParams(unknown=1)
