"""Output paths that cannot be written, for `report -o FILE` and `export -o DIR`: one paragraph
naming --output and the fix, exit status 2, and no file (partial or temporary) left behind."""

from __future__ import annotations

import errno
import os
import stat
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from stored_messages import message_doc

from simulator.analysis import exports
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
AS_ROOT = hasattr(os, "geteuid") and os.geteuid() == 0


@pytest.fixture
def stored() -> dict:
    """One finished two-message conversation of a one-cell sweep, written straight to the store."""
    uri = f"mongomock://{uuid.uuid4().hex}"
    store = open_store_uri(uri)
    view = exp_service.import_yaml(store, REPO / "prompts/experiments/prison.yaml", "alice")
    spec = SweepSpec(
        total_messages=2, days=1, agents={"Guard": 1, "Prisoner": 1}, llms=["mock:a"], seed=1
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")
    (conv,) = store.sweeps.conversations(sweep["_id"])
    for seq, role in enumerate(("Guard", "Prisoner")):
        store.messages.insert(message_doc(conv["_id"], seq, f"{role} speaks."))
    store.db.conversations.update_one({"_id": conv["_id"]}, {"$set": {"status": "done"}})
    return {"env": {"SIM_DB": uri, "SIM_USER": "alice"}, "sweep_id": sweep["_id"]}


def _report(run_cli, stored: dict, output: Path):
    return run_cli(["report", stored["sweep_id"], "-o", str(output)], env=stored["env"])


def _export(run_cli, stored: dict, output: Path):
    return run_cli(["export", stored["sweep_id"], "-o", str(output)], env=stored["env"])


def _refused(result, *words: str) -> None:
    assert result.code == 2, (result.code, result.err)
    assert result.err.startswith("Error: --output: ") and "Fix: " in result.err
    assert "Traceback" not in result.err and len(result.err.strip().splitlines()) == 1
    for word in words:
        assert word in result.err


def _leftovers(folder: Path) -> list[str]:
    return sorted(p.name for p in folder.iterdir() if p.name.endswith(".tmp"))


def test_report_into_a_missing_folder_is_refused_and_creates_nothing(tmp_path, stored, run_cli):
    result = _report(run_cli, stored, tmp_path / "nowhere" / "report.html")
    _refused(result, "does not exist", "mkdir -p")
    assert not (tmp_path / "nowhere").exists()


def test_export_into_a_missing_parent_is_refused_and_creates_nothing(tmp_path, stored, run_cli):
    result = _export(run_cli, stored, tmp_path / "nowhere" / "tables")
    _refused(result, "does not exist")
    assert not (tmp_path / "nowhere").exists()


def test_report_onto_a_folder_is_refused(tmp_path, stored, run_cli):
    _refused(_report(run_cli, stored, tmp_path), "is a folder, not a file")


def test_export_onto_a_file_is_refused_and_leaves_it_alone(tmp_path, stored, run_cli):
    target = tmp_path / "tables"
    target.write_text("keep me")
    _refused(_export(run_cli, stored, target), "is a file, not a folder")
    assert target.read_text() == "keep me"


@pytest.mark.parametrize("command", [_report, _export])
def test_a_file_where_a_folder_should_be_is_refused(tmp_path, stored, run_cli, command):
    (tmp_path / "afile").write_text("x")
    _refused(command(run_cli, stored, tmp_path / "afile" / "out"), "is a file, not a folder")


@pytest.mark.parametrize("command", [_report, _export])
def test_a_name_too_long_for_the_file_system_is_refused(tmp_path, stored, run_cli, command):
    _refused(command(run_cli, stored, tmp_path / ("x" * 300)), "File name too long")
    assert list(tmp_path.iterdir()) == []


def test_a_long_but_valid_name_is_written(tmp_path, stored, run_cli):
    output = tmp_path / ("r" * 250 + ".html")  # its temporary name must fit the limit too
    assert _report(run_cli, stored, output).code == 0
    assert output.is_file() and _leftovers(tmp_path) == []


def test_report_onto_a_fifo_is_refused_and_the_fifo_stays(tmp_path, stored, run_cli):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    _refused(_report(run_cli, stored, fifo), "not a regular file")
    assert stat.S_ISFIFO(fifo.stat().st_mode)  # a rename would have replaced it by a file


@pytest.fixture
def read_only_folder(tmp_path) -> Iterator[Path]:
    """A folder the operating system will not let this process write into: a temporary folder
    without write permission, or, for root (which ignores permission bits), a process folder
    under /proc, where the kernel refuses new files to everyone."""
    if not AS_ROOT:
        folder = tmp_path / "locked"
        folder.mkdir()
        folder.chmod(0o500)
        try:
            yield folder
        finally:
            folder.chmod(0o700)
        return
    proc = Path("/proc/self")
    if not proc.is_dir() or os.access(proc, os.W_OK | os.X_OK):
        pytest.skip("running as root without a /proc that refuses writes")
    yield proc


@pytest.mark.parametrize("command", [_report, _export])
def test_a_read_only_folder_is_refused(read_only_folder, stored, run_cli, command):
    before = sorted(os.listdir(read_only_folder))
    _refused(command(run_cli, stored, read_only_folder / "out"), "permission denied")
    assert sorted(os.listdir(read_only_folder)) == before


def _fail_renames_into(monkeypatch, folder: Path, error: OSError) -> None:
    """Make the final rename into `folder` fail as a full or locked disk would (root ignores
    permission bits, so this is how the write error itself is tested everywhere)."""
    real = os.replace

    def replace(src, dst, *args, **kwargs):
        if Path(dst).parent == folder:
            raise error
        return real(src, dst, *args, **kwargs)

    monkeypatch.setattr(os, "replace", replace)


def test_report_write_failure_keeps_the_old_report_and_no_temp_file(
    tmp_path, stored, run_cli, monkeypatch
):
    output = tmp_path / "report.html"
    output.write_text("the previous report")
    _fail_renames_into(monkeypatch, tmp_path, PermissionError(errno.EACCES, "Permission denied"))
    _refused(_report(run_cli, stored, output), "Permission denied")
    assert output.read_text() == "the previous report"
    assert _leftovers(tmp_path) == []


@pytest.mark.parametrize("existing", [False, True])
def test_export_failure_leaves_no_partial_tables(tmp_path, stored, run_cli, monkeypatch, existing):
    out = tmp_path / "tables"
    if existing:
        out.mkdir()
    real = exports._write_jsonl

    def write(rows, path):
        if path.name.startswith(".calls."):
            raise OSError(errno.ENOSPC, "No space left on device")
        real(rows, path)

    monkeypatch.setattr(exports, "_write_jsonl", write)
    _refused(_export(run_cli, stored, out), "No space left on device")
    if existing:
        assert list(out.iterdir()) == []  # neither half the tables nor temporary files
    else:
        assert not out.exists()


def test_export_and_report_still_write_where_they_can(tmp_path, stored, run_cli):
    assert _export(run_cli, stored, tmp_path / "tables").code == 0
    names = sorted(p.name for p in (tmp_path / "tables").iterdir())
    assert names == [f"{t}.jsonl" for t in sorted(exports_tables())]
    result = _report(run_cli, stored, tmp_path / "report.html")
    assert result.code == 0, result.err
    assert (tmp_path / "report.html").read_text().startswith("<!DOCTYPE html>")
    assert _leftovers(tmp_path) == []


def exports_tables() -> tuple[str, ...]:
    from simulator.analysis.tables import TABLES

    return TABLES
