"""Sweep expansion is pure: counts, keys and variants are exact and stable."""

from __future__ import annotations

import pytest

from simulator.domain.yaml_io import load_model
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.domain.sweep import SweepSpec, cells, expand
from simulator.worlds.chat.domain.variants import apply_variants
from simulator.worlds.chat.prompting.assembly import agent_system_prompt


@pytest.fixture
def prison(prison_path) -> Experiment:
    return load_model(prison_path, Experiment, "experiment")


def test_paper_design_is_240_cells(prison, prison_path):
    spec = load_model(
        prison_path.parents[1] / "sweeps" / "prison_factorial.yaml", SweepSpec, "sweep"
    )
    planned = expand(spec, prison, "v1")
    assert len(cells(spec, prison)) == 240
    assert len(planned) == 240 * spec.repetitions
    assert len({p.key for p in planned}) == len(planned)
    assert all(p.cell.agents == {"Guard": 1, "Prisoner": 1} for p in planned)


def test_every_agent_combination_and_every_day_count(prison):
    spec = SweepSpec(
        total_messages=6,
        days=3,
        every_day_count=True,
        agents={"guard": 2, "prisoner": 2},
        every_agent_combination=True,
        llms=["mock:a", "mock:b"],
        speaker_methods=["round_robin", "random"],
        repetitions=3,
    )
    found = cells(spec, prison)
    combos = {tuple(c.agents.values()) for c in found}
    assert combos == {(1, 1), (1, 2), (2, 1), (2, 2)}
    assert {c.days for c in found} == {1, 2, 3}
    assert len(found) == 2 * 3 * 4 * 2
    assert len(expand(spec, prison, "v1")) == len(found) * 3


def test_keys_depend_on_version_cell_and_repetition_only(prison):
    spec = SweepSpec(
        total_messages=4, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"], repetitions=2
    )
    first = [p.key for p in expand(spec, prison, "v1")]
    assert first == [
        p.key for p in expand(spec.model_copy(update={"name": "renamed"}), prison, "v1")
    ]
    assert first != [p.key for p in expand(spec, prison, "v2")]
    assert len(set(first)) == 2


def test_llm_assignments_per_role_manager_and_summarizer(prison):
    spec = SweepSpec(
        total_messages=4,
        agents={"Guard": 1, "Prisoner": 1},
        speaker_methods=["auto"],
        llm_assignments=[
            {"guard": "mock:g", "prisoner": "mock:p", "manager": "mock:m", "summarizer": "mock:s"}
        ],
    )
    (cell,) = cells(spec, prison)
    assert cell.role_llms == {"Guard": "mock:g", "Prisoner": "mock:p"}
    assert (cell.manager_llm, cell.summarizer_llm) == ("mock:m", "mock:s")


def test_variants_change_and_drop_sections(prison):
    blank = apply_variants(
        prison, {"Guard/Personality": "blank", "shared/Researcher oversight": "off"}
    )
    prompt = agent_system_prompt(blank, "Guard", {"Guard": 1, "Prisoner": 1})
    assert "## Personality" not in prompt and "## Researcher oversight" not in prompt
    abusive = agent_system_prompt(
        apply_variants(prison, {"Guard/Personality": "abusive"}),
        "Guard",
        {"Guard": 1, "Prisoner": 1},
    )
    assert "harsh and demeaning" in abusive and "the prisoner" in abusive
    with pytest.raises(KeyError, match="no variant 'kind'"):
        apply_variants(prison, {"Guard/Personality": "kind"})


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"variants": {"Guard/Mood": "all"}}, "no section 'Guard/Mood'"),
        ({"variants": {"Guard/Personality": ["nice"]}}, "no variant 'nice'"),
        ({"agents": {"warden": 1}}, "unknown role 'warden'"),
    ],
)
def test_bad_sweeps_are_refused(prison, changes, message):
    spec = SweepSpec(**{"total_messages": 4, "agents": {"Guard": 1}, "llms": ["mock:a"], **changes})
    with pytest.raises(ValueError, match=message):
        expand(spec, prison, "v1")


@pytest.mark.parametrize("seed", [None, 7])
def test_planned_keys_are_conversation_key_hashed_in_full(prison, seed):
    """expand fills a cell's key text in from a hashed prefix: same keys as hashing it all."""
    from simulator.worlds.chat.domain.sweep import conversation_key

    spec = SweepSpec(
        total_messages=8,
        days=2,
        every_day_count=True,
        agents={"guard": 1, "prisoner": 1},
        llms=["mock:a", "mock:b"],
        repetitions=12,
        seed=seed,
        allow_repeat_speaker=True,
    )
    planned = expand(spec, prison, "v9", owner="ana")
    assert len(planned) == 2 * 2 * 12
    for p in planned:
        assert p.key == conversation_key(
            "v9",
            p.cell,
            p.repetition,
            total_messages=8,
            seed=p.seed,
            owner="ana",
            allow_repeat_speaker=True,
            switches=spec.switches,
        )
