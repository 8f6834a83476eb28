"""A llama.cpp build this machine cannot run is reported in one paragraph, never a signal death.

The child process that probes the library imports a stand-in `llama_cpp` (put first on its
PYTHONPATH) whose model load dies by a real signal, as a build for the wrong CPU does."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from simulator.llm import llamacpp_probe
from simulator.llm.base import FatalBackendError

FAKE_LIBRARY = """
import os, signal
from pathlib import Path

class Llama:
    def __init__(self, *args, **kwargs):
        log = os.environ.get("FAKE_LLAMA_LOG")
        if log:
            with open(log, "a") as fh:
                fh.write("load\\n")
        sig = os.environ.get("FAKE_LLAMA_SIGNAL")
        if sig:
            os.kill(os.getpid(), int(sig))

    def create_completion(self, *args, **kwargs):
        return {"choices": [{"text": "x"}]}
"""


@pytest.fixture
def fake_library(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A `llama_cpp` stand-in for the probe's child; returns the file the child logs loads to."""
    package = tmp_path / "fake" / "llama_cpp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(FAKE_LIBRARY)
    monkeypatch.setenv("PYTHONPATH", str(package.parent))
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("SIM_LLAMACPP_PROBE", raising=False)
    monkeypatch.setattr(llamacpp_probe, "_checked", set())
    monkeypatch.setattr(llamacpp_probe, "_refused", {})
    log = tmp_path / "loads.log"
    monkeypatch.setenv("FAKE_LLAMA_LOG", str(log))
    return log


def _loads(log: Path) -> int:
    return len(log.read_text().splitlines()) if log.exists() else 0


def test_sigill_in_the_child_is_one_paragraph_with_the_rebuild_command(
    fake_library: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("FAKE_LLAMA_SIGNAL", str(int(signal.SIGILL)))
    with pytest.raises(FatalBackendError) as caught:
        llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")
    text = str(caught.value)
    assert "SIGILL" in text and "Illegal instruction" in text
    assert 'CMAKE_ARGS="-DGGML_NATIVE=OFF"' in text
    assert "--no-cache-dir --force-reinstall" in text
    assert "\n" not in text
    # a second ask in the same process does not start another child
    with pytest.raises(FatalBackendError):
        llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")
    assert _loads(fake_library) == 1
    assert not (tmp_path / "cache" / "llamacpp_probe.json").exists()  # failures are not cached


def test_a_build_that_runs_is_probed_once_per_build(
    fake_library: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")
    assert _loads(fake_library) == 1
    monkeypatch.setattr(llamacpp_probe, "_checked", set())  # as a new process would start
    llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")
    assert _loads(fake_library) == 1  # the verdict came from the cache file
    monkeypatch.setattr(llamacpp_probe, "_checked", set())
    monkeypatch.setattr(llamacpp_probe, "_build_key", lambda: "another build")
    llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")
    assert _loads(fake_library) == 2  # a rebuilt library is asked again


def test_a_child_that_fails_without_a_signal_is_left_to_the_real_load(
    fake_library: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    (fake_library.parent / "fake" / "llama_cpp" / "__init__.py").write_text("raise ImportError")
    llamacpp_probe.ensure_runnable(tmp_path / "model.gguf")  # no verdict against the library


def test_run_on_an_unrunnable_build_exits_2_and_stores_nothing(
    fake_library: Path,
    monkeypatch: pytest.MonkeyPatch,
    run_cli,
    prison_path: Path,
    bundled_smollm2: Path,
    tmp_path: Path,
) -> None:
    # the bundled-model fixture probed the stand-in while it still ran: forget that verdict
    monkeypatch.setattr(llamacpp_probe, "_checked", set())
    monkeypatch.setenv("SIM_CACHE_DIR", str(tmp_path / "another cache"))
    monkeypatch.setenv("FAKE_LLAMA_SIGNAL", str(int(signal.SIGILL)))
    env = {"SIM_DB": str(tmp_path / "store"), "SIM_USER": "ana"}
    imported = run_cli(["experiment", "import", str(prison_path), "--json"], env=env)
    assert imported.code == 0, imported.err
    experiment_id = imported.json()["id"]
    result = run_cli(
        [
            "run",
            experiment_id,
            "--agents",
            "guard=1,prisoner=1",
            "--messages",
            "2",
            "--llm",
            "local:smollm2",
        ],
        env=env,
    )
    assert result.code == 2, (result.out, result.err)
    assert "SIGILL" in result.err and "DGGML_NATIVE=OFF" in " ".join(result.err.split())
    assert "Traceback" not in result.err
    listed = run_cli(["conversation", "list", "--json"], env=env)
    assert listed.code == 0 and listed.json() == []
