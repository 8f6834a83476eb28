"""A stored experiment keeps its version when the tool learns new fields (memory, probe): the
version is in every conversation key of a sweep, so a changed hash would make a resumed sweep
store new conversations instead of finding its own, and the demo import the prison experiment
again. The pinned values are the shipped files' versions as computed by the release before
these fields existed (commit 2657bf3)."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.domain.yaml_io import load_model
from simulator.store.repositories.experiments import experiment_version, spec_of
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.grid.domain.experiment import GridExperiment
from simulator.worlds.grid.domain.probe import NewsProbe, Probe
from simulator.worlds.network.domain.experiment import NetworkExperiment
from simulator.worlds.network.domain.prompt_choices import PromptChoices

EXPERIMENTS = Path(__file__).resolve().parents[2] / "prompts" / "experiments"
BEFORE = [
    ("prison.yaml", Experiment, "6b19298f453c"),
    ("takata_grid.yaml", GridExperiment, "0bf38e12d3f5"),
    ("llm_sam_network.yaml", NetworkExperiment, "a7fabb9e1b6c"),
]


@pytest.mark.parametrize(("name", "model", "version"), BEFORE)
def test_a_shipped_experiment_keeps_the_version_it_had(name, model, version):
    experiment = load_model(EXPERIMENTS / name, model, "experiment")
    if isinstance(experiment, NetworkExperiment):  # the shipped file now names its prompts
        assert experiment.network.prompts.profile == "reference"
        assert experiment_version(experiment) != version
        experiment.network.prompts = PromptChoices()  # as written before the block existed
    assert experiment_version(experiment) == version
    assert "probe" not in spec_of(experiment)


def test_a_field_set_away_from_its_default_changes_the_version():
    experiment = load_model(EXPERIMENTS / "takata_grid.yaml", GridExperiment, "experiment")
    probed = experiment.model_copy(
        update={"probe": Probe(news=NewsProbe(question="Any news?", keywords=["news"]))}
    )
    assert spec_of(probed)["probe"]["news"]["keywords"] == ["news"]
    assert experiment_version(probed) != experiment_version(experiment)
