"""Can llama.cpp run on this machine? Asked in a child process before the first in-process load.

Why: llama-cpp-python compiles llama.cpp on install, by default for every instruction the CPU
advertises. Some virtual machines advertise instructions (AMX, AVX-512) that their hypervisor does
not let a process use; the library then dies with SIGILL ("Illegal instruction") the moment a
model runs, taking the whole tool with it, with nothing stored and nothing said. A child process
that loads a model and generates one token takes that death instead, and the tool says what
happened and how to rebuild. The verdict is cached per build of the library (its shared files'
sizes and times), so the probe costs one short model load per install, not per run.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

from platformdirs import user_cache_dir

from simulator.llm.base import FatalBackendError

PORTABLE_CMAKE_ARGS = "-DGGML_NATIVE=OFF"
PROBE_TIMEOUT_S = 300.0
_PROBE_CODE = """
import sys
import llama_cpp
llama = llama_cpp.Llama(model_path=sys.argv[1], n_ctx=256, verbose=False)
llama.create_completion("Hi", max_tokens=1, temperature=0.0)
print("ok")
"""

_checked: set[str] = set()
_refused: dict[str, str] = {}  # build -> verdict, so one process probes a broken build once
_lock = threading.Lock()


def rebuild_command() -> str:
    """The command that rebuilds llama-cpp-python for any x86-64 CPU of the last decade."""
    version = _library_version()
    pin = f"=={version}" if version else ""
    return (
        f'CMAKE_ARGS="{PORTABLE_CMAKE_ARGS}" pip install --no-cache-dir --force-reinstall '
        f"--no-deps llama-cpp-python{pin}"
    )


def ensure_runnable(model_path: Path) -> None:
    """Return if llama.cpp can run a model here; else raise FatalBackendError with the fix.

    The probe runs the bundled model, else `model_path`; only a death by signal
    counts against the library: a file llama.cpp cannot read is reported by the real load."""
    if os.environ.get("SIM_LLAMACPP_PROBE", "1") == "0":
        return
    build = _build_key()
    with _lock:
        if build in _checked or _cached_ok(build):
            _checked.add(build)
            return
        verdict = _refused.get(build) or _probe(model_path)
        if verdict is None:
            _checked.add(build)
            _remember_ok(build)
            return
        _refused[build] = verdict
    raise FatalBackendError(verdict)


def _probe(model_path: Path) -> str | None:
    """None when the child ran the model (or failed for a reason of the model file's own)."""
    try:
        done = subprocess.run(
            [sys.executable, "-c", _PROBE_CODE, str(_small_model(model_path))],
            capture_output=True,
            text=True,
            timeout=PROBE_TIMEOUT_S,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return None  # slow is not broken: the real load will tell
    if done.returncode >= 0:
        return None
    return describe_signal_death(-done.returncode)


def _small_model(model_path: Path) -> Path:
    """The bundled 135M model when installed (a second to load), else the model asked for."""
    from simulator.llm.llamacpp_backend import bundled_model_path

    try:
        return bundled_model_path("smollm2")
    except ModuleNotFoundError:
        return model_path


def describe_signal_death(signum: int) -> str:
    """One paragraph: what killed the model process, why it happens, the command that fixes it."""
    name = _signal_name(signum)
    if signum == signal.SIGILL:
        cause = (
            "llama.cpp cannot run on this machine: a test model process died with SIGILL "
            "(Illegal instruction), because llama-cpp-python was compiled for instructions this "
            "CPU advertises but the system does not let programs use (common in virtual machines "
            "whose CPU reports AMX or AVX-512)."
        )
    else:
        cause = (
            f"llama.cpp cannot run on this machine: a test model process died with {name}, "
            "which usually means llama-cpp-python was compiled for another CPU."
        )
    return (
        f"{cause} Rebuild it for a portable CPU target (about 8 minutes on 2 cores): "
        f"{rebuild_command()}  — or use a model served elsewhere (ollama:NAME, openai:NAME with "
        "OPENAI_BASE_URL), or mock:NAME to try the mechanics."
    )


def _signal_name(signum: int) -> str:
    try:
        return signal.Signals(signum).name
    except ValueError:
        return f"signal {signum}"


def _library_version() -> str | None:
    try:
        return importlib.metadata.version("llama-cpp-python")
    except importlib.metadata.PackageNotFoundError:
        return None


def _build_key() -> str:
    """Identifies one build of the library: version plus its shared files' sizes and times."""
    import llama_cpp  # the caller has imported it already; this only finds its folder

    folder = Path(llama_cpp.__file__).parent
    parts = [_library_version() or "?"]
    for lib in sorted(folder.rglob("*.so*")) + sorted(folder.rglob("*.dylib")):
        stat = lib.stat()
        parts.append(f"{lib.name}:{stat.st_size}:{stat.st_mtime_ns}")
    return "|".join(parts)


def _cache_file() -> Path:
    folder = os.environ.get("SIM_CACHE_DIR") or user_cache_dir("llm-sim")
    return Path(folder) / "llamacpp_probe.json"


def _cached_ok(build: str) -> bool:
    try:
        return json.loads(_cache_file().read_text()).get("ok") == build
    except (OSError, ValueError, AttributeError):
        return False


def _remember_ok(build: str) -> None:
    path = _cache_file()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".tmp")
        tmp.write_text(json.dumps({"ok": build}))
        tmp.replace(path)
    except OSError:
        pass  # an unwritable cache only means probing again next time
