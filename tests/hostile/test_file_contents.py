"""What files hold, checked when they are read: control characters in YAML, agents tables that
are binary, Latin-1 or hold a runaway field, network experiments that name files that are not
there, blank starting prompts, hidden characters in model strings, a blank copy name.

Before: a NUL in a YAML file and every broken agents table gave tracebacks; a missing agents
table, scenario or graph file and `free_chat: [99]` were accepted by `experiment create` and
refused only by `run`; an empty starting prompt and `llm: "ollama:llama3\\n"` were stored, and
`experiment duplicate --name ''` made "NAME (copy)".
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import refused, unchanged, write
from .harness import PRISON, REPO, fingerprint

NETWORK = REPO / "prompts" / "experiments" / "llm_sam_network.yaml"
SYNTHETIC = REPO / "prompts" / "network" / "agents_synthetic.csv"
HEADER = "name,a,tau,f,lambda,O_initial,A_initial,O_initial_text\n"


def network_yaml(tmp_path: Path, old: str, new: str, name: str = "net.yaml") -> str:
    text = NETWORK.read_text(encoding="utf-8")
    assert old in text
    return write(tmp_path / name, text.replace(old, new, 1))


# ---- 1. control characters in YAML files -------------------------------------------------


@pytest.mark.parametrize(
    ("char", "label"), [("\x00", "U+0000 (NUL)"), ("\x1b", "U+001B (ESC)"), ("\x07", "U+0007")]
)
def test_a_control_character_in_an_experiment_file_is_refused_with_its_place(
    cli, db, tmp_path, char, label
):
    text = PRISON.read_text(encoding="utf-8").replace("Prison experiment", f"Pri{char}son", 1)
    path = write(tmp_path / "ctl.yaml", text)
    result = cli("experiment", "create", path, db=db)
    refused(result, path, "line 1, column 10", label, "Fix: delete that character")
    assert fingerprint(db) is None


def test_a_control_character_in_a_sweep_file_is_refused(cli, db, experiment_id, tmp_path):
    path = write(tmp_path / "s.yaml", "total_messages: 4\nagents: {Guard: 1}\nseed: 1\x00\n")
    before = fingerprint(db)
    result = cli("sweep", "create", experiment_id, path, "--yes", db=db)
    refused(result, "line 3, column 8", "U+0000 (NUL)")
    unchanged(db, before)


def test_a_control_character_in_a_rubric_file_is_refused(cli, db, experiment_id, tmp_path):
    rubric = (REPO / "prompts" / "rubrics" / "prison_goal.yaml").read_text(encoding="utf-8")
    path = write(tmp_path / "r.yaml", rubric.replace("name: prison_goal", "name: pri\x00son", 1))
    before = fingerprint(db)
    result = cli("score", experiment_id, "--scorer", f"judge:{path}", "--llm", "mock:judge", db=db)
    refused(result, path, "U+0000 (NUL)")
    unchanged(db, before)


# ---- 2. agents tables that are not UTF-8 text ---------------------------------------------


def test_a_binary_agents_table_is_refused(cli, db, tmp_path):
    (tmp_path / "agents.xlsx").write_bytes(b"PK\x03\x04\x14\x00\x06\x00" + bytes(range(256)) * 4)
    path = network_yaml(tmp_path, "agents: synthetic", "agents: agents.xlsx")
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.agents", "is not a text file", "CSV saved as text")
    assert fingerprint(db) is None


def test_a_latin1_agents_table_is_refused_with_how_to_convert(cli, db, tmp_path):
    rows = SYNTHETIC.read_text(encoding="utf-8").splitlines()
    rows[3] = rows[3].replace(rows[3].split(",")[0], "Zoë", 1)
    (tmp_path / "latin.csv").write_bytes(("\n".join(rows) + "\n").encode("latin-1"))
    path = network_yaml(tmp_path, "agents: synthetic", "agents: latin.csv")
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.agents", "line 4: byte 0xEB is not UTF-8", "iconv -f latin1 -t utf-8")
    assert fingerprint(db) is None


def test_an_agents_table_with_a_runaway_field_is_refused(cli, db, tmp_path):
    huge = HEADER + 'Ann,0.3,0.3,0.4,0.5,0.5,1,"' + "x" * 200_000 + '"\n'
    write(tmp_path / "huge.csv", huge)
    path = network_yaml(tmp_path, "agents: synthetic", "agents: huge.csv")
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.agents", "line 2: a field is longer than 131,072", "quote")
    assert fingerprint(db) is None


def test_an_unclosed_quote_at_run_time_is_refused(cli, db, tmp_path):
    """`run --agents-table` reads the table itself: the same refusal, nothing stored."""
    made = cli("experiment", "create", str(NETWORK), "--json", db=db)
    assert made.code == 0, made.describe()
    experiment = json.loads(made.out)["id"]
    table = write(
        tmp_path / "open.csv", HEADER + 'Ann,0.3,0.3,0.4,0.5,0.5,1,"never closed' + "\nx" * 140_000
    )
    before = fingerprint(db)
    result = cli("run", experiment, "--theory", "--agents-table", table, db=db)
    refused(result, "agents", "a field is longer than 131,072 characters")
    unchanged(db, before)


def test_a_latin1_graph_file_is_refused(cli, db, tmp_path):
    (tmp_path / "edges.csv").write_bytes("source,cible\u00e9\n0,1\n".encode("latin-1"))
    path = network_yaml(
        tmp_path,
        "type: barabasi_albert\n    n: 50\n    m: 5\n    seed: 1",
        "type: file\n    path: edges.csv",
    )
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.graph", "is not UTF-8", "iconv")
    assert fingerprint(db) is None


# ---- 3. a network experiment's files, checked at create -----------------------------------


@pytest.mark.parametrize(
    ("old", "new", "fragments"),
    [
        (
            "agents: synthetic",
            "agents: missing.csv",
            ["network.agents", "missing.csv", "does not exist"],
        ),
        (
            "scenario: costly_purchase",
            "scenario: stories/missing.yaml",
            ["network.scenario", "stories/missing.yaml", "does not exist"],
        ),
        (
            "scenario: costly_purchase",
            "scenario: dishwasher",
            ["no shipped scenario named 'dishwasher'"],
        ),
        (
            "type: barabasi_albert\n    n: 50\n    m: 5\n    seed: 1",
            "type: file\n    path: nowhere.csv",
            ["network.graph", "nowhere.csv", "does not exist"],
        ),
        (
            "  rounds: 2",
            "  rounds: 2\n  free_chat: [99]",
            ["network.free_chat", "round 99", "1..2"],
        ),
        ("  rounds: 2", "  rounds: 2\n  free_chat: [1, 1]", ["network.free_chat", "named twice"]),
    ],
)
def test_a_network_experiment_that_could_not_run_is_refused_at_create(
    cli, db, tmp_path, old, new, fragments
):
    path = network_yaml(tmp_path, old, new)
    for command in ("create", "import"):
        result = cli("experiment", command, path, db=db)
        refused(result, path, "line ", *fragments)
    assert fingerprint(db) is None


def test_a_broken_scenario_file_is_refused_at_create(cli, db, tmp_path):
    (tmp_path / "stories").mkdir()
    write(tmp_path / "stories" / "bad.yaml", "name: bad\nbackground: hi {nope}\n")
    path = network_yaml(tmp_path, "scenario: costly_purchase", "scenario: stories/bad.yaml")
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.scenario", "scenario")
    assert fingerprint(db) is None


def test_a_table_shorter_than_the_graph_is_refused_at_create(cli, db, tmp_path):
    rows = SYNTHETIC.read_text(encoding="utf-8").splitlines()[:11]  # header and 10 agents
    write(tmp_path / "ten.csv", "\n".join(rows) + "\n")
    path = network_yaml(tmp_path, "agents: synthetic", "agents: ten.csv")
    result = cli("experiment", "create", path, db=db)
    refused(result, "network.agents", "10 rows and the graph 50 nodes")
    assert fingerprint(db) is None


def test_relative_files_are_read_beside_the_experiment_and_run_from_anywhere(cli, db, tmp_path):
    """Paths are resolved from the experiment file's folder, stored absolute, and a run from
    another working folder reads the same files."""
    folder = tmp_path / "study"
    (folder / "data").mkdir(parents=True)
    rows = SYNTHETIC.read_text(encoding="utf-8").splitlines()[:7]  # six agents
    write(folder / "data" / "six.csv", "\n".join(rows) + "\n")
    write(folder / "data" / "ring.csv", "0,1\n1,2\n2,3\n3,4\n4,5\n5,0\n")
    text = NETWORK.read_text(encoding="utf-8")
    text = text.replace("agents: synthetic", "agents: data/six.csv")
    text = text.replace(
        "type: barabasi_albert\n    n: 50\n    m: 5\n    seed: 1",
        "type: file\n    path: data/ring.csv",
    )
    path = write(folder / "exp.yaml", text)
    made = cli("experiment", "create", path, "--json", db=db)  # the cwd is another folder
    assert made.code == 0, made.describe()
    experiment = json.loads(made.out)["id"]
    shown = json.loads(cli("experiment", "show", experiment, "--json", db=db).out)
    network = shown["experiment"]["network"]
    assert network["agents"] == str(folder / "data" / "six.csv")
    assert network["graph"]["path"] == str(folder / "data" / "ring.csv")
    ran = cli("run", experiment, "--theory", "--seed", "1", "--json", db=db)
    assert ran.code == 0, ran.describe()
    assert json.loads(ran.out)["status"] == "done"


# ---- 5. a blank starting prompt -------------------------------------------------------------

GUARD_START = "You are a guard in a simulated prison."


@pytest.mark.parametrize("blank", ["''", "'   '", "|-\n      \n"])
def test_a_role_with_an_empty_starting_prompt_is_refused(cli, db, tmp_path, blank):
    text = PRISON.read_text(encoding="utf-8")
    start = text.index("    content: |-\n      " + GUARD_START)
    end = text.index("  - title: Goal")
    path = write(tmp_path / "blank.yaml", text[:start] + f"    content: {blank}\n" + text[end:])
    result = cli("experiment", "create", path, db=db)
    refused(result, "roles[0]", "starting prompt of role 'Guard'", "is empty")
    assert fingerprint(db) is None


# ---- 6. hidden characters in model strings --------------------------------------------------


@pytest.mark.parametrize(
    "model", ['"ollama:llama3\\n"', '"ollama:lla\\tma3"', '"ollama:llama3\\u202e"']
)
def test_a_model_string_with_a_hidden_character_is_refused_in_a_file(cli, db, tmp_path, model):
    text = PRISON.read_text(encoding="utf-8").replace(
        "- model: local:smollm2", f"- model: {model}", 1
    )
    path = write(tmp_path / "m.yaml", text)
    result = cli("experiment", "create", path, db=db)
    refused(result, "llms[0].model", "control or invisible character")
    assert fingerprint(db) is None


@pytest.mark.parametrize("model", ["ollama:llama3\n", "\tollama:llama3", "mock:a\r"])
def test_a_model_string_with_a_hidden_character_is_refused_on_the_command_line(
    cli, db, experiment_id, model
):
    before = fingerprint(db)
    args = ["--agents", "guard=1,prisoner=1", "--messages", "4", "--llm", model]
    refused(cli("run", experiment_id, *args, db=db), "--llm", "control or invisible character")
    refused(
        cli("sweep", "create", experiment_id, *args, "--yes", db=db),
        "control or invisible character",
    )
    unchanged(db, before)


# ---- 7. a blank name for a copy -------------------------------------------------------------


@pytest.mark.parametrize("name", ["", "   "])
def test_duplicate_with_a_blank_name_is_refused(cli, db, experiment_id, name):
    before = fingerprint(db)
    result = cli("experiment", "duplicate", experiment_id, "--name", name, db=db)
    refused(result, "--name", "empty", "leave --name out")
    unchanged(db, before)
    copied = cli("experiment", "duplicate", experiment_id, "--json", db=db)
    assert json.loads(copied.out)["name"] == "Prison experiment (copy)"
