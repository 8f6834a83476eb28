"""Hostile experiment and sweep files: each is refused in one paragraph, exit 2, nothing written.

Before: alias bombs took 24 s and gigabytes, recursive aliases and 5,000-digit numbers gave
tracebacks, duplicate keys silently kept the last value, `!!binary` and `!!set` were accepted,
/dev/zero was read until memory ran out and a FIFO blocked forever.
"""

from __future__ import annotations

import contextlib
import os

import pytest

from simulator.domain.limits import MAX_YAML_BYTES

from .conftest import refused, unchanged, within, write
from .harness import PRISON, fingerprint

LAUGHS = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{name}: &{name} [{', '.join([f'*{prev}'] * 9)}]\n"
    for prev, name in zip("abcdefgh", "bcdefghi", strict=True)
)

HOSTILE = {
    "alias_bomb": (LAUGHS, "aliases expanded"),
    "recursive_alias": ("name: &a [*a]\n", "refers to a value that contains it"),
    "recursive_mapping": ("name: &a {b: *a}\n", "refers to a value that contains it"),
    "too_deep": ("name: " + "[" * 200 + "]" * 200 + "\n", "nested more than"),
    "huge_list": ("name: [" + ", ".join(["1"] * 20_000) + "]\n", "entries"),
    "binary_tag": ("name: !!binary aGVsbG8=\n", "!!binary"),
    "set_tag": ("name: !!set {a}\n", "!!set"),
    "python_tag": ("name: !!python/object/apply:os.system [echo]\n", "is not allowed"),
    "int_5000_digits": ("name: x\nseed: " + "9" * 5000 + "\n", "more than 20 digits"),
    "hex_5000_digits": ("name: x\nseed: 0x" + "f" * 5000 + "\n", "more than 20 digits"),
    "explicit_int_tag": ("name: x\nseed: !!int mock\n", "tagged as a whole number"),
    "explicit_float_tag": ("name: x\nnote: !!float they\n", "tagged as a number"),
    "explicit_bool_tag": ("name: x\nfavourite: !!bool maybe\n", "tagged as true or false"),
    "empty_int_tag": ("name: x\nseed: !!int\n", "tagged as a whole number"),
    "nan": ("llms:\n- model: mock:a\n  params: {temperature: .nan}\n", "not a finite number"),
}


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_experiment_file_is_refused_and_creates_no_store(cli, db, tmp_path, case):
    text, fragment = HOSTILE[case]
    path = write(tmp_path / f"{case}.yaml", text)
    result = within(60, lambda: cli("experiment", "create", path, db=db))
    refused(result, path, fragment, "Fix:")
    assert fingerprint(db) is None  # the file is read before the store is opened


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_sweep_file_is_refused_and_leaves_the_store_alone(
    cli, db, experiment_id, tmp_path, case
):
    text, fragment = HOSTILE[case]
    path = write(tmp_path / f"{case}.yaml", text)
    before = fingerprint(db)
    result = within(60, lambda: cli("sweep", "create", experiment_id, path, "--yes", db=db))
    refused(result, fragment)
    unchanged(db, before)


def test_duplicate_key_is_refused_with_both_lines(cli, db, tmp_path):
    text = PRISON.read_text(encoding="utf-8")
    path = write(tmp_path / "dup.yaml", text + "name: Second name\n")
    result = cli("experiment", "create", path, db=db)
    refused(result, "the key 'name' appears twice (first on line 1)", "line ")
    assert fingerprint(db) is None


def test_duplicate_key_in_a_sweep_is_refused(cli, db, experiment_id, tmp_path):
    path = write(tmp_path / "s.yaml", "total_messages: 4\nagents: {Guard: 1}\ntotal_messages: 8\n")
    before = fingerprint(db)
    refused(cli("sweep", "create", experiment_id, path, "--yes", db=db), "appears twice")
    unchanged(db, before)


def test_file_over_the_size_cap_is_refused_unread(cli, db, tmp_path):
    path = tmp_path / "big.yaml"
    path.write_text("note: " + "x" * (MAX_YAML_BYTES + 10), encoding="utf-8")
    refused(cli("experiment", "create", str(path), db=db), "larger than 1,000,000 bytes")


@pytest.mark.parametrize("device", ["/dev/zero", "/dev/urandom"])
def test_devices_are_refused_without_reading(cli, db, device):
    if not os.path.exists(device):
        pytest.skip(f"no {device} here")
    result = within(60, lambda: cli("experiment", "create", device, db=db))
    refused(result, "not an ordinary file")


def test_fifo_is_refused_without_blocking(cli, db, tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("no FIFOs here")
    fifo = tmp_path / "pipe.yaml"
    os.mkfifo(fifo)
    try:
        result = within(60, lambda: cli("experiment", "create", str(fifo), db=db))
    finally:  # release a reader that blocked (the behaviour before the fix)
        with contextlib.suppress(OSError):
            os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
    refused(result, "not an ordinary file")


def test_folder_is_refused(cli, db, tmp_path):
    refused(cli("experiment", "create", str(tmp_path), db=db), "is a folder")


@pytest.mark.parametrize(
    ("old", "new", "field"),
    [
        ("name: Prison experiment", "name: '   '", "name"),
        ("- name: Guard", "- name: '  '", "roles[0].name"),
        ("  - title: Goal", "  - title: '   '", "roles[0].sections[1].title"),
    ],
)
def test_whitespace_only_names_are_refused(cli, db, tmp_path, old, new, field):
    text = PRISON.read_text(encoding="utf-8")
    assert old in text
    path = write(tmp_path / "blank.yaml", text.replace(old, new, 1))
    refused(cli("experiment", "create", path, db=db), f"{field}: ", "blank")
    assert fingerprint(db) is None


def test_whitespace_only_sweep_name_is_refused(cli, db, experiment_id):
    before = fingerprint(db)
    result = cli(
        "sweep",
        "create",
        experiment_id,
        "--name",
        "  ",
        "--messages",
        "4",
        "--agents",
        "guard=1",
        "--yes",
        db=db,
    )
    refused(result, "name", "blank")
    unchanged(db, before)


def test_dates_stay_text(cli, db, tmp_path):
    """A date-like note used to become a datetime and fail as 'not a valid string'."""
    path = write(tmp_path / "dated.yaml", _with_note(PRISON.read_text(encoding="utf-8")))
    result = cli("experiment", "create", path, "--json", db=db)
    assert result.code == 0, result.describe()
    assert '"note": "2024-01-01"' in result.out


def _with_note(text: str) -> str:
    start = text.index("note: |-")
    end = text.index("favourite:")
    return text[:start] + "note: 2024-01-01\n" + text[end:]


@pytest.mark.parametrize(
    ("wrong", "right"),
    [
        ("messages", "total_messages"),
        ("speaker", "speaker_methods"),
        ("speakers", "speaker_methods"),
        ("llm", "llms"),
        ("every_combination", "every_agent_combination"),
        ("every-combination", "every_agent_combination"),
        ("seeds", "seed"),
        ("repetiton", "repetitions"),
        ("total_mesages", "total_messages"),
    ],
)
def test_unknown_sweep_key_suggests_the_right_one(cli, db, experiment_id, tmp_path, wrong, right):
    values = {"messages": "4", "total_mesages": "4"}
    body = "agents: {Guard: 1}\n"
    body += "" if wrong in values else "total_messages: 4\n"
    body += f"{wrong}: {values.get(wrong, '1')}\n"
    path = write(tmp_path / "typo.yaml", body)
    result = cli("sweep", "create", experiment_id, path, "--dry-run", db=db)
    refused(result, f"{wrong}:", f"rename '{wrong}' to '{right}'")
    assert "line 3, column 1" in result.err or "line 2, column 1" in result.err


def test_unknown_experiment_key_suggests_the_right_one(cli, db, tmp_path):
    text = PRISON.read_text(encoding="utf-8").replace("favourite: false", "favorite: false", 1)
    path = write(tmp_path / "typo.yaml", text)
    refused(cli("experiment", "create", path, db=db), "rename 'favorite' to 'favourite'")


def test_unknown_nested_key_suggests_within_its_own_model(cli, db, tmp_path):
    text = PRISON.read_text(encoding="utf-8").replace(
        "    max_tokens: 120", "    max_new_tokens: 120"
    )
    path = write(tmp_path / "typo.yaml", text)
    result = cli("experiment", "create", path, db=db)
    refused(result, "llms[0].params.max_new_tokens", "rename 'max_new_tokens' to 'max_tokens'")


def test_the_store_fingerprint_sees_what_the_cli_writes(cli, db, experiment_id, tmp_path):
    """`unchanged` proves nothing unless the fingerprint moves when the CLI writes, under the
    default database name and under any other."""
    before = fingerprint(db)
    assert before is not None
    made = cli("experiment", "create", str(PRISON), db=db)
    assert made.code == 0, made.describe()
    after = fingerprint(db)
    assert after != before
    made = cli("--db-name", "elsewhere", "experiment", "create", str(PRISON), db=db)
    assert made.code == 0, made.describe()
    assert fingerprint(db) != after
