"""The prompt profiles and the reference's design around them: the switches are printed,
stored and exported; a stored spec without them dumps as before; the groups of table rows run
(one block each, a sweep axis, a clear refusal past the table); the shipped sweeps use the
reference's design and its rewiring rate; switches the chat layout cannot honour are refused."""

from __future__ import annotations

import io
import itertools
import json
import uuid
from pathlib import Path

import in_process
import pytest
import yaml
from rich.console import Console

from simulator.cli.context import AppContext
from simulator.errors import UserError
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.worlds.network.analysis.tables import prompt_columns
from simulator.worlds.network.cli.run import print_header
from simulator.worlds.network.domain.agents_table import read_agents
from simulator.worlds.network.domain.experiment import NetworkSettings, NetworkSpec
from simulator.worlds.network.domain.experiment_files import SYNTHETIC_PATH
from simulator.worlds.network.domain.graphs import build_graphs
from simulator.worlds.network.domain.sweep import NetworkSweepSpec, cells
from simulator.worlds.network.services import runs as network_runs
from simulator.worlds.network.services import sweeps as network_sweeps

REPO = Path(__file__).resolve().parents[2]
NETWORK_YAML = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SWEEPS = REPO / "prompts" / "sweeps"


@pytest.fixture
def mock_store():
    opened = open_store(open_database(f"mongomock://{uuid.uuid4().hex}", "t_profiles"))
    yield opened
    opened.close()


def _header(spec) -> str:
    err = io.StringIO()
    print_header(AppContext(err=Console(file=err, width=400)), spec)
    return err.getvalue()


def test_the_header_prints_the_profile_and_every_switch(mock_store):
    view = exp_service.import_yaml(mock_store, NETWORK_YAML, "alice")
    reference = network_runs.build_spec(view, llm="openai:stub", seed=1)
    assert (
        "prompts: profile reference (layout accumulated, own_answers first, friends_rounds all, "
        "n_friends group, free_chat_as opinion_round, private_holders 5)"
    ) in _header(reference)
    mixed = network_runs.build_spec(
        view,
        llm="openai:stub",
        seed=1,
        settings={"prompts": {"profile": "simulator", "n_friends": "group"}, "free_chat": [2]},
    )
    header = _header(mixed)
    assert "prompts: profile simulator (layout chat, own_answers all, friends_rounds last, " in (
        header
    )
    assert "n_friends group, free_chat_as message, private_holders all)" in header
    chat = network_runs.build_spec(view, llm="openai:stub", seed=1, settings={"free_chat": [2]})
    assert "free chat in rounds 2 (asked as opinion rounds, left out of later prompts)" in _header(
        chat
    )
    assert chat.calls == 50 * 2  # no message stage: one call per agent and round
    theory = network_runs.build_spec(view, seed=1, theory=True)
    assert "prompts:" not in _header(theory)


def test_the_switches_are_stored_and_exported_and_a_default_stays_out_of_the_dump(mock_store):
    view = exp_service.import_yaml(mock_store, NETWORK_YAML, "alice")
    spec = network_runs.build_spec(view, llm="openai:stub", seed=1)
    stored = run_service.create_run(mock_store, view, spec, "alice")
    again = NetworkSpec.model_validate(mock_store.conversations.get(stored["_id"])["spec"])
    assert again.settings.prompts.profile == "reference" and again.switches == spec.switches
    columns = prompt_columns(stored["spec"]["settings"].get("prompts"))
    assert columns["prompt_profile"] == "reference"
    assert columns["prompt_free_chat_as"] == "opinion_round"
    assert columns["prompt_private_holders"] == 5
    # a run stored before the switches existed: the simulator profile, and no new keys
    old = NetworkSettings().model_dump(mode="json")
    assert "prompts" not in old and "group" not in old
    assert prompt_columns(None)["prompt_layout"] == "chat"


def test_a_group_of_rows_plays_and_one_past_the_table_is_refused(mock_store):
    view = exp_service.import_yaml(mock_store, NETWORK_YAML, "alice")
    rows = read_agents(SYNTHETIC_PATH)
    five = {"type": "complete", "n": 5}
    spec = network_runs.build_spec(
        view, llm="openai:stub", seed=1, settings={"graph": five, "group": 3}
    )
    assert spec.names == [row.name for row in rows[15:20]]
    assert "network: 5 agents (group 3: the table's rows 16..20), graph complete" in _header(spec)
    with pytest.raises(UserError) as refused:
        network_runs.build_spec(
            view, llm="openai:stub", seed=1, settings={"graph": five, "group": 10}
        )
    assert refused.value.field == "network.group"
    assert "from 0 to 9" in refused.value.fix


def test_groups_are_a_sweep_axis_and_the_shipped_sweep_runs_the_reference_design(mock_store):
    view = exp_service.import_yaml(mock_store, NETWORK_YAML, "alice")
    spec = network_sweeps.validate_spec(
        yaml.safe_load((SWEEPS / "llm_sam_groups.yaml").read_text()), "llm_sam_groups.yaml"
    )
    assert spec.groups == list(range(10)) and spec.seeds == [0, 1, 2, 3, 4]
    llm_cells = [c for c in cells(spec, view.experiment) if not c.is_theory]
    assert [c.group for c in llm_cells] == list(range(10))
    assert "group=4" in llm_cells[4].label() and llm_cells[4].as_dict()["group"] == 4
    plan = network_sweeps.plan(mock_store, view, spec, "alice")
    assert plan.conversations == 2 * 10 * 5  # LLM and theory, ten groups, five seeds
    # each group is its own five rows
    built = network_sweeps.cell_spec(view, llm_cells[9], 0)
    assert built.names == [row.name for row in read_agents(SYNTHETIC_PATH)[45:50]]
    # a sweep without groups keeps its cells' keys as before
    plain = NetworkSweepSpec(rounds=[2])
    assert "group" not in cells(plain, view.experiment)[0].as_dict()


def test_the_shipped_dynamic_network_rewires_as_the_reference_does():
    sweep = yaml.safe_load((SWEEPS / "llm_sam_networks.yaml").read_text())
    (dynamic,) = [g for g in sweep["graphs"] if g["type"] == "dynamic"]
    graphs = build_graphs(dynamic)
    for before, after in itertools.pairwise(graphs):
        old, new = set(map(frozenset, before.edges())), set(map(frozenset, after.edges()))
        assert len(old - new) == len(new - old) == 10  # BA_dynamic.npy: 9 or 10 per step
        assert after.number_of_edges() == 225


@pytest.mark.parametrize(
    ("prompts", "memory", "field"),
    [
        ({"profile": "simulator", "friends_rounds": "all"}, None, "network.prompts"),
        ({"profile": "simulator", "free_chat_as": "opinion_round"}, None, "network.prompts"),
        ({"profile": "reference"}, {"kind": "none"}, "memory.kind"),
    ],
)
def test_switches_a_layout_cannot_honour_are_refused(mock_store, tmp_path, prompts, memory, field):
    data = yaml.safe_load(NETWORK_YAML.read_text())
    data["network"]["prompts"] = prompts
    if memory:
        data["memory"] = memory
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    view = exp_service.import_yaml(mock_store, path, "alice")
    with pytest.raises(UserError) as refused:
        network_runs.build_spec(view, llm="openai:stub", seed=1)
    assert refused.value.field == field


def test_an_unknown_profile_is_refused_on_import_with_exit_2(tmp_path):
    data = yaml.safe_load(NETWORK_YAML.read_text())
    data["network"]["prompts"] = {"profile": "paper"}
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    env = {"SIM_DB": str(tmp_path / "db"), "SIM_USER": "alice"}
    done = in_process.llm_sim("experiment", "import", str(path), "--json", env=env)
    assert done.returncode == 2, done.stderr
    assert "network.prompts.profile" in done.stderr and "reference" in done.stderr
    listed = in_process.llm_sim("experiment", "list", "--json", env=env)
    assert json.loads(listed.stdout or "[]") == []


def test_the_reference_prompt_directory_is_a_scenario_and_a_foreign_one_is_refused(
    mock_store, tmp_path
):
    fixture = REPO / "tests" / "fixtures" / "llm_sam" / "exp1"
    data = yaml.safe_load(NETWORK_YAML.read_text())
    data["network"].update({"scenario": str(fixture), "graph": {"type": "complete", "n": 4}})
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data))
    view = exp_service.import_yaml(mock_store, path, "alice")
    spec = network_runs.build_spec(view, llm="openai:stub", seed=1)
    assert spec.scenario.private_heading == "# The basic information you get is:"
    assert len(spec.scenario.private_information) == 5 and len(spec.scenario.rounds) == 3
    assert "{n_friends}" in spec.scenario.background  # the reference's {n_friend}, renamed
    foreign = tmp_path / "foreign"
    foreign.mkdir()
    (foreign / "background.md").write_text("# Task\nno sections here {name}")
    (foreign / "Q1.md").write_text("Answer:")
    data["network"]["scenario"] = str(foreign)
    path.write_text(yaml.safe_dump(data))
    with pytest.raises(UserError) as refused:
        exp_service.import_yaml(mock_store, path, "alice")
    assert "# Your Characteristics:" in refused.value.fix
