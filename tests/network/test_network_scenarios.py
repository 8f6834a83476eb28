"""The shipped scenarios load and fill in; a user's scenario is checked on load."""

from __future__ import annotations

from pathlib import Path

import pytest

from simulator.errors import UserError
from simulator.worlds.network.domain.agents_table import AgentRow, read_agents
from simulator.worlds.network.domain.answers import parse_answer
from simulator.worlds.network.domain.scenario import (
    SCENARIOS_DIR,
    load_scenario,
    scenario_path,
    shipped_scenarios,
)

REPO = Path(__file__).resolve().parents[2]
NAMES = ["community_habit", "costly_purchase", "pricier_plan"]
ANN = AgentRow("Ann", 0.2, 0.5, 0.3, 0.5, 0.4, 0, "t")


def test_three_scenarios_ship_inside_the_package():
    assert shipped_scenarios() == NAMES
    assert SCENARIOS_DIR.resolve() == (REPO / "prompts" / "network").resolve()


@pytest.mark.parametrize("name", NAMES)
def test_each_shipped_scenario_loads_and_fills_in(name):
    scenario = load_scenario(name)
    assert len(scenario.rounds) == 3
    assert scenario.rounds[0].new_information == ""  # round 0's question: the table answers
    assert all(r.new_information for r in scenario.rounds[1:])
    assert scenario.round_for(7) == scenario.rounds[-1]
    agent = read_agents(REPO / "prompts" / "network" / "agents_synthetic.csv")[0]
    for template in (scenario.background, scenario.characteristics):
        text = scenario.fill(template, agent, n_friends=4)
        assert "{" not in text and "}" not in text
    characteristics = scenario.fill(scenario.characteristics, agent, 4)
    assert agent.name in characteristics
    for value in (agent.a, agent.tau, agent.f, agent.lam):
        assert f"{value:g}" in characteristics
    assert "4 friends" in scenario.fill(scenario.background, agent, 4)
    # the answer format's own example is an answer the parser reads
    assert parse_answer(scenario.answer_format) is not None
    assert len(scenario.private_information) == 5
    assert scenario.private_for(6) == scenario.private_information[1]


def test_a_users_scenario_is_checked_with_file_and_line(tmp_path):
    path = tmp_path / "mine.yaml"
    path.write_text("name: x\nbackground: Hi {nme}\ncharacteristics: c\nrounds:\n- question: q\n")
    with pytest.raises(UserError, match=r"mine\.yaml, line 2.*background: unknown field \{nme\}"):
        load_scenario(path)
    path.write_text("name: x\nbackground: b\ncharacteristics: '{name}'\nrounds: []\n")
    with pytest.raises(UserError, match="rounds"):
        load_scenario(str(path))
    path.write_text(
        "name: x\nbackground: b {{literal}}\ncharacteristics: '{lambda}'\n"
        'rounds:\n- question: q\n  new_information: \'{"braces": "fine here"}\'\n'
    )
    scenario = load_scenario(path)
    assert scenario.rounds[0].new_information == '{"braces": "fine here"}'
    assert "0.5" in scenario.fill(scenario.characteristics, ANN, 2)
    assert scenario.fill(scenario.background, ANN, 2) == "b {literal}"


def test_an_unknown_shipped_name_lists_the_shipped_ones():
    with pytest.raises(UserError, match="community_habit, costly_purchase, pricier_plan"):
        scenario_path("dishwasher")
    assert scenario_path("some/file.yaml") == Path("some/file.yaml")
