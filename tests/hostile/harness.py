"""Run `llm-sim` in-process as a user would, and fingerprint the store around each call.

Shared by the hostile-input tests and `bench/fuzz_inputs.py`: `main(argv)` runs inside click's
CliRunner isolation, so flags, `SIM_*` variables, error rendering and exit statuses are the real
ones; anything that escapes `main` is what a user would see as a traceback.
"""

from __future__ import annotations

import hashlib
import json
import sys
import traceback
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from simulator.testing.process_state import ProcessState

REPO = Path(__file__).resolve().parents[2]
PRISON = REPO / "prompts" / "experiments" / "prison.yaml"
TRACEBACK_MARK = "Traceback (most recent call last)"


@dataclass
class Outcome:
    code: int
    out: str
    err: str
    escaped: str | None = None  # the traceback of an exception that escaped main()

    @property
    def clean(self) -> bool:
        text = self.out + self.err
        return self.escaped is None and TRACEBACK_MARK not in text and self.code in (0, 2)

    def describe(self) -> str:
        tail = self.escaped or (self.err or self.out)[-800:]
        return f"exit {self.code}: {tail.strip()}"


def run_cli(args: list[str], env: dict[str, str] | None = None, stdin: str = "") -> Outcome:
    """`llm-sim ARGS` in this process; never raises."""
    from simulator.cli.main import main

    try:
        runner = CliRunner(mix_stderr=False)
    except TypeError:
        runner = CliRunner()
    escaped = None
    with ProcessState(), runner.isolation(input=stdin, env=env or {}) as io:
        try:
            main(list(args))
            code = 0
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
        except BaseException:  # exactly what the fuzzer looks for
            code = 1
            escaped = traceback.format_exc()
        sys.stdout.flush()
        sys.stderr.flush()
        out, err = (
            io[0].getvalue().decode(errors="replace"),
            io[1].getvalue().decode(errors="replace"),
        )
    return Outcome(code, out, err, escaped)


def fingerprint(db_uri: str) -> str | None:
    """A hash of every document in every collection of every database the store holds (None
    when the store folder is absent), so a write under any database name changes it."""
    if "://" not in db_uri and not Path(db_uri).exists():
        return None
    from simulator.settings import DEFAULT_DB_NAME
    from simulator.store.database import list_databases, open_database

    conn = open_database(db_uri, DEFAULT_DB_NAME)
    try:
        digest = hashlib.sha256()
        for db_name in list_databases(conn) or [DEFAULT_DB_NAME]:
            db = conn.client[db_name]
            for name in sorted(db.list_collection_names()):
                docs = sorted(json.dumps(d, sort_keys=True, default=str) for d in db[name].find())
                digest.update(f"{db_name}.{name}:{len(docs)}\n".encode())
                for doc in docs:
                    digest.update(doc.encode())
        return digest.hexdigest()
    finally:
        conn.close()
