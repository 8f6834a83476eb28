"""Numbers, agent counts and ids: bounded by the documented maximum, checked before expanding.

Before: `agents: {Guard: 1000000}` built a million agents (a hang), a large every-combination
sweep was expanded in full before anything said no, `--agents ''`, `','`, `guard=1,guard=2` and
Arabic-Indic digits were accepted, any `base_url` was stored, and seeds past 2**63-1 were taken.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from simulator.domain.limits import MAX_AGENTS_PER_ROLE, MAX_SEED, MAX_SWEEP_CONVERSATIONS
from simulator.domain.params import GenerationParams
from simulator.settings import DEFAULT_DB_NAME
from simulator.store.database import open_database

from .conftest import refused, unchanged, within, write
from .harness import PRISON, fingerprint


def test_a_million_agents_in_a_sweep_file_is_refused_at_once(cli, db, experiment_id, tmp_path):
    path = write(tmp_path / "s.yaml", "total_messages: 4\nagents: {Guard: 1000000}\n")
    before = fingerprint(db)
    result = within(60, lambda: cli("sweep", "create", experiment_id, path, "--yes", db=db))
    refused(result, "agents.Guard", str(MAX_AGENTS_PER_ROLE))
    unchanged(db, before)


@pytest.mark.parametrize("command", ["run", "sweep"])
def test_a_million_agents_on_the_command_line_is_refused_at_once(cli, db, experiment_id, command):
    args = ["--agents", "guard=1000000", "--messages", "4", "--llm", "mock:a"]
    full = (
        ["run", experiment_id, *args]
        if command == "run"
        else ["sweep", "create", experiment_id, *args, "--yes"]
    )
    before = fingerprint(db)
    result = within(60, lambda: cli(*full, db=db))
    refused(result, "--agents", f"from 1 to {MAX_AGENTS_PER_ROLE}")
    unchanged(db, before)


def test_every_combination_past_the_maximum_is_refused_before_expanding(cli, db, experiment_id):
    before = fingerprint(db)
    result = within(
        60,
        lambda: cli(
            "sweep",
            "create",
            experiment_id,
            "--agents",
            "Guard=60,Prisoner=60",
            "--every-combination",
            "--messages",
            "4",
            "--repetitions",
            "1000",
            "--yes",
            db=db,
        ),
    )
    refused(result, "3,600,000 conversations", f"{MAX_SWEEP_CONVERSATIONS:,}")
    unchanged(db, before)


def test_variants_all_count_toward_the_maximum_before_expanding():
    from simulator.domain.yaml_io import load_model
    from simulator.worlds.chat.domain.experiment import Experiment
    from simulator.worlds.chat.domain.sweep import SweepSpec, check

    experiment = load_model(PRISON, Experiment, "experiment")
    spec = load_model(PRISON.parents[1] / "sweeps" / "prison_factorial.yaml", SweepSpec, "sweep")
    big = spec.model_copy(update={"repetitions": 10_000})  # 240 cells x 10,000 = 2,400,000
    with pytest.raises(ValueError, match="2,400,000 conversations"):
        check(big, experiment)


@pytest.mark.parametrize(
    ("flag", "why"),
    [
        ("", "names no role"),
        (",", "names no role"),
        (" , ", "names no role"),
        ("guard=1,,prisoner=1", "empty entry"),
        ("guard=1,guard=2", "given twice"),
        ("guard=1,GUARD=2", "given twice"),
        ("guard=\u0661", "whole number"),  # Arabic-Indic one: isdigit() but not a count
        ("guard=\uff11", "whole number"),  # fullwidth one
        ("guard=0", "whole number"),
        ("guard=-1", "whole number"),
        ("guard=1.5", "whole number"),
        ("guard=", "whole number"),
        ("guard", "whole number"),
        (f"guard={MAX_AGENTS_PER_ROLE + 1}", "whole number"),
        ("guard=" + "9" * 5000, "whole number"),
        ("warden=1", "unknown role"),
    ],
)
def test_bad_agent_counts_are_refused(cli, db, experiment_id, flag, why):
    before = fingerprint(db)
    run = cli("run", experiment_id, "--agents", flag, "--messages", "4", "--llm", "mock:a", db=db)
    refused(run, "--agents", why)
    show = cli("experiment", "show", experiment_id, "--render", flag, db=db)
    refused(show, "--render", why)
    unchanged(db, before)


def test_good_agent_counts_still_work(cli, db, experiment_id):
    result = cli("experiment", "show", experiment_id, "--render", " Guard = 2 ", "--json", db=db)
    assert result.code == 0, result.describe()
    assert '"Guard": 2' in result.out and '"Prisoner": 1' in result.out


@pytest.mark.parametrize(("seed", "ok"), [(MAX_SEED, True), (MAX_SEED + 1, False), (-1, False)])
def test_sweep_seed_bounds(cli, db, experiment_id, tmp_path, seed, ok):
    path = write(tmp_path / "s.yaml", f"total_messages: 4\nagents: {{Guard: 1}}\nseed: {seed}\n")
    result = cli("sweep", "create", experiment_id, path, "--dry-run", db=db)
    if ok:
        assert result.code == 0, result.describe()
    else:
        refused(result, "seed")


def test_generation_seed_bounds():
    assert GenerationParams(seed=MAX_SEED).seed == MAX_SEED
    with pytest.raises(ValueError):
        GenerationParams(seed=MAX_SEED + 1)


def test_experiment_seed_past_the_maximum_is_refused(cli, db, tmp_path):
    text = PRISON.read_text(encoding="utf-8").replace("    seed: 7", f"    seed: {MAX_SEED + 1}")
    refused(cli("experiment", "create", write(tmp_path / "e.yaml", text), db=db), "seed")
    assert fingerprint(db) is None


@pytest.mark.parametrize(
    "url",
    [
        "ftp://example.com/v1",
        "file:///etc/passwd",
        "localhost:8000",
        "http://",
        "http:///v1",
        "http://[::1",
        "http://host:99999/v1",
        "http://host:abc/v1",
        "http://host/v 1",
        "javascript:alert(1)",
    ],
)
def test_base_url_must_be_http_with_a_host(cli, db, tmp_path, url):
    text = PRISON.read_text(encoding="utf-8").replace(
        "- model: ollama:llama3\n", f"- model: ollama:llama3\n  base_url: {url!r}\n", 1
    )
    result = cli("experiment", "create", write(tmp_path / "e.yaml", text), db=db)
    refused(result, "llms[1].base_url", "http")
    assert fingerprint(db) is None


@pytest.mark.parametrize("url", ["http://localhost:11434", "https://api.example.com/v1"])
def test_good_base_url_is_kept(cli, db, tmp_path, url):
    text = PRISON.read_text(encoding="utf-8").replace(
        "- model: ollama:llama3\n", f"- model: ollama:llama3\n  base_url: {url}\n", 1
    )
    result = cli("experiment", "create", write(tmp_path / "e.yaml", text), "--json", db=db)
    assert result.code == 0, result.describe()
    conn = open_database(db, DEFAULT_DB_NAME)
    try:
        [doc] = conn.db["experiments"].find({"_id": json.loads(result.out)["id"]})
    finally:
        conn.close()
    assert [llm["base_url"] for llm in doc["spec"]["llms"]] == [None, url, None]


def _export(cli, db, experiment_id, target: str):
    return within(60, lambda: cli("experiment", "export", experiment_id, "-o", target, db=db))


def test_export_into_a_missing_folder_is_a_clean_error(cli, db, experiment_id, tmp_path):
    result = _export(cli, db, experiment_id, str(tmp_path / "nowhere" / "e.yaml"))
    refused(result, "--output", "does not exist")
    assert not (tmp_path / "nowhere").exists()


def test_export_onto_a_folder_is_a_clean_error(cli, db, experiment_id, tmp_path):
    refused(_export(cli, db, experiment_id, str(tmp_path)), "--output", "is a folder")


def test_export_under_a_file_is_a_clean_error(cli, db, experiment_id, tmp_path):
    plain = tmp_path / "plain.txt"
    plain.write_text("x")
    refused(_export(cli, db, experiment_id, str(plain / "e.yaml")), "--output")


def test_export_to_a_fifo_is_refused_without_blocking(cli, db, experiment_id, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    reader = os.open(fifo, os.O_RDONLY | os.O_NONBLOCK)  # so a blocked writer would be freed
    try:
        refused(_export(cli, db, experiment_id, str(fifo)), "not an ordinary file")
    finally:
        os.close(reader)


def test_export_without_permission_is_a_clean_error(cli, db, experiment_id, tmp_path):
    """A folder without write permission; as root (which ignores permission bits) a process
    folder under /proc, where the kernel refuses new files to everyone."""
    if os.name != "posix":
        pytest.skip("no POSIX permissions here")
    if os.geteuid() != 0:
        locked = tmp_path / "locked"
        locked.mkdir()
        locked.chmod(0o500)
        try:
            refused(_export(cli, db, experiment_id, str(locked / "e.yaml")), "--output")
        finally:
            locked.chmod(0o700)
        assert list(locked.iterdir()) == []
        return
    locked = Path("/proc/self")
    if not locked.is_dir() or os.access(locked, os.W_OK):
        pytest.skip("running as root without a /proc that refuses writes")
    refused(_export(cli, db, experiment_id, str(locked / "e.yaml")), "--output", "cannot write")
    assert not (locked / "e.yaml").exists()


def test_export_with_a_nul_byte_is_a_clean_error(cli, db, experiment_id):
    refused(_export(cli, db, experiment_id, "out\0.yaml"), "--output")


def test_a_role_named_twice_in_sweep_agents_is_refused(cli, db, experiment_id, tmp_path):
    """Before: `{Guard: 1, guard: 3}` silently kept whichever came last."""
    path = write(tmp_path / "s.yaml", "total_messages: 4\nagents: {Guard: 1, guard: 3}\n")
    before = fingerprint(db)
    refused(cli("sweep", "create", experiment_id, path, "--yes", db=db), "given twice")
    unchanged(db, before)
