"""How close is the demo's time estimate to the time the run then takes?

Runs `llm-sim demo` (the real CLI process, the bundled SmolLM2 on this machine's CPU) once per
seed in a fresh data folder, reads the estimate it printed before the run and the time it says
the run took, and prints the ratio per seed and their median. The demo promises its estimate
within 30% (ratios 0.7 to 1.3); replies differ in length from seed to seed (15 to 120 tokens),
so single runs scatter around the middle it estimates.

    python bench/demo_estimate.py                  # seeds 7, 8, 9: about 2 minutes on 2 cores
    python bench/demo_estimate.py --seeds 1,2,3,4,5 --messages 10
"""

from __future__ import annotations

import argparse
import os
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def seconds(text: str) -> float:
    """'2 min 10 s', '40 s', '12 min' as seconds."""
    minutes = re.search(r"(\d+) min", text)
    secs = re.search(r"(\d+) s\b", text)
    return (int(minutes.group(1)) * 60 if minutes else 0) + (int(secs.group(1)) if secs else 0)


def one_run(seed: int, messages: int, days: int) -> tuple[float, float]:
    with tempfile.TemporaryDirectory() as folder:
        env = {**os.environ, "SIM_DATA_DIR": folder, "SIM_LOG_DIR": folder, "SIM_USER": "bench"}
        command = [sys.executable, str(REPO / "main.py"), "demo", "--seed", str(seed)]
        done = subprocess.run(
            [*command, "--messages", str(messages), "--days", str(days)],
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
    estimate = re.search(r"Estimate: about ([^(]+)\(", done.stderr)
    took = re.search(r"Took ([^.]+)\.", done.stderr)
    if estimate is None or took is None:
        raise SystemExit(f"the demo printed no estimate or no time:\n{done.stderr}")
    return seconds(estimate.group(1)), seconds(took.group(1))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", default="7,8,9")
    parser.add_argument("--messages", type=int, default=6)
    parser.add_argument("--days", type=int, default=2)
    args = parser.parse_args()
    ratios = []
    print(f"demo, {args.messages} messages over {args.days} days, local:smollm2")
    print(f"{'seed':>4} {'estimate s':>10} {'took s':>7} {'took/estimate':>13}")
    for seed in (int(s) for s in args.seeds.split(",")):
        estimate, took = one_run(seed, args.messages, args.days)
        ratios.append(took / max(estimate, 1))
        print(f"{seed:>4} {estimate:>10.0f} {took:>7.0f} {ratios[-1]:>13.2f}")
    inside = sum(0.7 <= r <= 1.3 for r in ratios)
    median = statistics.median(ratios)
    print(f"median took/estimate {median:.2f}; within 30%: {inside}/{len(ratios)}")


if __name__ == "__main__":
    main()
