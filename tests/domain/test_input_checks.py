"""The pure checks behind the hostile-input refusals: what they refuse, and what they leave alone
(an experiment saved before a rule still opens; spaces around a model string are still trimmed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from pydantic import ValidationError

from simulator.domain.model_strings import check_model_string, has_hidden_characters
from simulator.domain.reference_source import Unconvertible, text_of
from simulator.errors import UserError
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.network.domain.csv_text import read_csv_text
from simulator.worlds.network.domain.experiment import NetworkExperiment
from simulator.worlds.network.domain.experiment_files import check_experiment_files

EXPERIMENT = {
    "name": "t",
    "starting_message": "go",
    "llms": [{"model": "mock:a"}],
    "roles": [{"name": "Guard", "sections": [{"title": "Start", "content": ""}]}],
}


def test_an_empty_starting_prompt_is_refused_as_new_input_but_a_stored_one_opens():
    with pytest.raises(ValidationError, match="starting prompt of role 'Guard'"):
        Experiment.model_validate(EXPERIMENT)
    assert Experiment.from_stored(EXPERIMENT).roles[0].sections[0].content == ""


def test_a_blank_variant_of_the_starting_prompt_is_refused():
    data = {**EXPERIMENT, "roles": [{"name": "Guard", "sections": [{
        "title": "Start", "content": "You guard.", "variants": {"quiet": "  "},
    }]}]}  # fmt: skip
    with pytest.raises(ValidationError, match="its variant 'quiet'"):
        Experiment.model_validate(data)


@pytest.mark.parametrize("model", ["ollama:llama3\n", "ollama:\tllama3", "ollama:llama3\u200b"])
def test_hidden_characters_in_a_model_string_are_refused(model):
    assert has_hidden_characters(model)
    with pytest.raises(ValueError, match="control or invisible character"):
        check_model_string(model)


def test_spaces_around_a_model_string_are_still_trimmed():
    assert not has_hidden_characters("  ollama:llama3 ")
    assert check_model_string("  ollama:llama3 ") == "ollama:llama3"


@pytest.mark.parametrize("value", ["text", ""])
def test_text_passes(value):
    assert text_of(value, "the content") == value


@pytest.mark.parametrize(
    ("value", "said"), [({"$gt": 1}, "dict {'$gt': 1}"), (None, "null"), (3, "int 3")]
)
def test_anything_but_text_is_unconvertible(value, said):
    with pytest.raises(Unconvertible, match=re.escape(f"the content is {said}, not text")):
        text_of(value, "the content")


def test_a_csv_with_a_bom_reads_and_a_windows_one_is_refused(tmp_path: Path):
    good = tmp_path / "good.csv"
    good.write_bytes("\ufeffname\nZoë\n".encode())
    assert read_csv_text(good, "agents") == "name\nZoë\n"
    bad = tmp_path / "bad.csv"
    bad.write_bytes("name\r\nZo\u00eb\r\n".encode("cp1252"))
    with pytest.raises(UserError, match=r"line 2: byte 0xEB is not UTF-8"):
        read_csv_text(bad, "agents")


def test_relative_files_become_absolute_and_names_stay_names(tmp_path: Path):
    (tmp_path / "edges.csv").write_text("0,1\n1,2\n2,0\n", encoding="utf-8")
    experiment = NetworkExperiment.model_validate(
        {
            "kind": "network",
            "name": "n",
            "llms": [{"model": "mock:a"}],
            "network": {"graph": {"type": "file", "path": "edges.csv"}, "rounds": 1},
        }
    )
    checked = check_experiment_files(experiment, tmp_path, "exp.yaml")
    assert checked.network.graph["path"] == str(tmp_path / "edges.csv")
    assert checked.network.agents == "synthetic"
    assert checked.network.scenario == "costly_purchase"
