"""`llm-sim` through the real `main()` inside this test process.

`run_cli_in_process` calls `simulator.cli.main.main(argv)` inside click's CliRunner isolation, so
flags, `SIM_*` variables, `.env`, error rendering and exit statuses are the real ones without
paying an interpreter start per call, and `ProcessState` puts back what a call changes for the
whole process. `llm_sim` shapes the same call as `subprocess.run(..., capture_output=True,
text=True)` returns it, for tests written against a subprocess whose point is not the process.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from simulator.testing.process_state import ProcessState


@dataclass
class CliResult:
    code: int
    out: str
    err: str

    def json(self):
        return json.loads(self.out)


def _exit_code(exc: SystemExit) -> int:
    if exc.code is None:
        return 0
    if isinstance(exc.code, int):
        return exc.code
    print(exc.code, file=sys.stderr)
    return 1


def run_cli_in_process(
    args: list[str], env: dict[str, str] | None = None, input: str | None = None
) -> CliResult:
    """`llm-sim ARGS` through the real `main()` (flags, `SIM_*`, `.env`, errors, exit statuses)
    inside click's CliRunner isolation: no interpreter start per call, no state left behind."""
    from simulator.cli.main import main

    try:
        runner = CliRunner(mix_stderr=False)  # click 8.1 keeps stderr apart only when asked
    except TypeError:
        runner = CliRunner()  # click >= 8.2 always does
    with ProcessState(), runner.isolation(input=input, env=env or {}) as streams:
        out, err = streams[0], streams[1]
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = _exit_code(exc)
        sys.stdout.flush()
        sys.stderr.flush()
        return CliResult(code, out.getvalue().decode(), err.getvalue().decode())


def llm_sim(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: str | Path | None = None,
    input: str | None = None,
) -> subprocess.CompletedProcess:
    """`llm-sim ARGS` in process, as `subprocess.run` would report it: `env` is laid over this
    process's environment (as `{**os.environ, **env}` is for a child), `cwd` is the working
    folder for the call only."""
    with contextlib.chdir(cwd) if cwd is not None else contextlib.nullcontext():
        done = run_cli_in_process(list(args), env=env, input=input)
    return subprocess.CompletedProcess(["llm-sim", *args], done.code, done.out, done.err)
