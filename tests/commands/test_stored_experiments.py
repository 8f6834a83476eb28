"""A check added later never locks a researcher out of what is already stored: an experiment
saved with a base-form verb (written before `<GUARD_VERB_MAKE>` was refused) still opens, shows
and runs as it ran; new input with it is refused. Labels may not look like model strings."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from simulator.domain.llm_choice import LLMChoice
from simulator.store.repositories.experiments import to_model
from simulator.worlds.chat.domain.experiment import Experiment

SPEC = {
    "starting_message": "Begin.",
    "llms": [{"model": "mock:a"}],
    "roles": [
        {
            "name": "Guard",
            "sections": [
                {"title": "Start", "content": "You are a guard."},
                {"title": "Goal", "content": "The <GUARD_NOUN> <GUARD_VERB_MAKE> the rules."},
            ],
        },
        {"name": "Prisoner", "sections": [{"title": "Start", "content": "You are a prisoner."}]},
    ],
}


def test_new_input_with_a_base_form_verb_is_refused():
    with pytest.raises(ValidationError, match="GUARD_VERB_MAKES"):
        Experiment.model_validate({"name": "new", **SPEC})


def test_a_stored_experiment_with_a_base_form_verb_still_opens():
    doc = {"_id": "exp_old", "name": "old", "note": "", "spec": SPEC}
    experiment = to_model(doc)
    assert experiment.roles[0].sections[1].content.endswith("<GUARD_VERB_MAKE> the rules.")


def test_a_stored_experiment_opens_through_the_cli(sim, tmp_path):
    """Written straight into the store, as a store from before the check holds it."""
    from simulator.store.store import open_store_uri

    db = str(tmp_path / "db")
    assert sim("info", db=db).code == 0  # creates and migrates the embedded store
    store = open_store_uri(db)
    created = store.experiments.create(
        Experiment.from_stored({"name": "old", **SPEC}), owner="alice"
    )
    store.close()
    shown = sim("experiment", "show", created["_id"], "--render", "guard=2,prisoner=1", db=db)
    assert shown.code == 0, shown.err
    assert "The guards make the rules." in shown.out


@pytest.mark.parametrize("label", ["llama3:latest t=0.7", "a:b"])
def test_a_label_with_a_colon_is_refused(label):
    with pytest.raises(ValidationError, match="contains ':'"):
        LLMChoice(model="mock:a", label=label)
