"""Fuzz `llm-sim` with N generated inputs and print how many broke the property.

The property (see tests/hostile/fuzzing.py): every experiment file, sweep file and argument list
ends with exit 0 or 2, prints no traceback, and leaves the store unchanged after exit 2.

    python bench/fuzz_inputs.py                 # 10,000 cases
    python bench/fuzz_inputs.py -n 500 --seed 3 --show 5

Not a test: it prints figures (cases, failures, exit codes per command, examples of failures).
"""

from __future__ import annotations

import argparse
import collections
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests"))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from hostile.fuzzing import Case, cases, check_case, make_template  # noqa: E402
from hypothesis import HealthCheck, Phase, given, seed, settings  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--cases", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0, help="hypothesis seed (reproducible)")
    parser.add_argument("--show", type=int, default=10, help="failures to print in full")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="llm-sim-fuzz-") as tmp:
        base = Path(tmp)
        for name in ("SIM_DATA_DIR", "SIM_CONFIG_DIR", "SIM_LOG_DIR"):
            os.environ[name] = str(base / name.lower())
        os.chdir(base)
        template = make_template(base)
        work = base / "case"
        failures: list[tuple[Case, str]] = []
        kinds: collections.Counter = collections.Counter()
        seen_cases = 0
        started = time.perf_counter()

        @seed(args.seed)
        @settings(
            max_examples=args.cases,
            deadline=None,
            database=None,
            phases=[Phase.generate],
            suppress_health_check=list(HealthCheck),
        )
        @given(case=cases())
        def fuzz(case: Case) -> None:
            nonlocal seen_cases
            seen_cases += 1
            code, failure = check_case(case, template, work)
            words = [a for a in case.args if a in ("experiment", "sweep", "run", "create")]
            command = " ".join(words[:2])
            kinds[(command, f"exit {code}" + (" FAIL" if failure else ""))] += 1
            if failure:
                failures.append((case, failure))
            if seen_cases % 500 == 0:
                rate = seen_cases / (time.perf_counter() - started)
                print(
                    f"  {seen_cases:,} cases, {len(failures)} failures ({rate:.0f}/s)", flush=True
                )

        fuzz()
        elapsed = time.perf_counter() - started

    print(f"\ncases: {seen_cases:,}  failures: {len(failures)}  time: {elapsed:.0f} s")
    for (command, verdict), count in sorted(kinds.items()):
        print(f"  {command:20} {verdict:12} {count:6,}")
    distinct: dict[str, tuple[Case, str]] = {}
    for case, failure in failures:
        distinct.setdefault(failure.strip().splitlines()[-1][:160], (case, failure))
    print(f"distinct failure kinds: {len(distinct)}")
    for case, failure in list(distinct.values())[: args.show]:
        print("-" * 80)
        print(case.show()[:3000])
        print("=>", failure[-2500:])


if __name__ == "__main__":
    main()
