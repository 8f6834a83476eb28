"""Prices and estimates through the real entry point: `llm-sim prices`, an experiment's own
`price:`, the researcher's price file, `sweep create` and `run --dry-run` with their estimates,
and the estimate stored with a sweep and printed when it runs."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def stub():
    with StubLLMServer(models=["stub", "gpt-4o-mini"]) as server:
        yield server


def _experiment(tmp_path: Path, llms: list[dict]) -> Path:
    data = yaml.safe_load((REPO / "prompts/experiments/prison.yaml").read_text("utf-8"))
    data["llms"] = llms
    path = tmp_path / "priced.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    return path


@pytest.fixture
def priced(sim, tmp_path):
    """A chat experiment with a priced model, one from the table and one nobody prices."""
    path = _experiment(
        tmp_path,
        [
            {"model": "openai:stub", "price": {"input": 1.0, "output": 4.0}},
            {"model": "openai:gpt-4o-mini"},
            {"model": "openai:house-model"},
        ],
    )
    db = str(tmp_path / "store")
    exp_id = sim("experiment", "create", str(path), "--json", db=db).json()["id"]
    return db, exp_id


def _sweep_file(tmp_path: Path, llms: list[str]) -> str:
    path = tmp_path / "sweep.yaml"
    spec = {"name": "costs", "repetitions": 2, "llms": llms, "total_messages": 4}
    spec |= {"agents": {"Guard": 1, "Prisoner": 1}, "seed": 3}
    path.write_text(yaml.safe_dump(spec), "utf-8")
    return str(path)


def test_prices_lists_the_table_with_its_date_and_page_and_says_unknown(sim):
    listed = sim("prices", "--json").json()
    rows = {row["model"]: row for row in listed["prices"]}
    assert rows["openai:gpt-4.1"]["price"]["input_per_million"] == 2.0
    assert rows["openai:gpt-4.1"]["price"]["source"].startswith("table 20")
    assert rows["openai:gpt-4.1"]["page"].startswith("https://platform.openai.com/")
    asked = sim("prices", "openai:gpt-4.1-mini", "openai:nobody-knows", "ollama:llama3")
    assert asked.code == 0, asked.err
    lines = {line.split()[0]: line for line in asked.out.splitlines()}
    assert "price unknown" in lines["openai:nobody-knows"]
    assert "local" in lines["ollama:llama3"]
    assert "table 20" in lines["openai:gpt-4.1-mini"]
    assert "taken 20" in asked.out and "platform.openai.com" in asked.out


def test_the_price_file_wins_over_the_table_and_a_bad_one_is_refused(sim, tmp_path):
    own = tmp_path / "mine.yaml"
    own.write_text("prices:\n  openai:gpt-4.1: {input: 1.5, output: 6}\n", "utf-8")
    shown = sim("prices", "openai:gpt-4.1", "--json", env={"SIM_PRICES": str(own)}).json()
    price = shown["prices"][0]["price"]
    assert (price["input_per_million"], price["source"]) == (1.5, f"file {own}")

    own.write_text("prices:\n  openai:gpt-4.1: {input: -1, output: 6}\n", "utf-8")
    refused = sim("prices", env={"SIM_PRICES": str(own)})
    assert refused.code == 2
    assert str(own) in refused.err and "prices.openai:gpt-4.1.input" in refused.err
    missing = sim("prices", env={"SIM_PRICES": str(tmp_path / "none.yaml")})
    assert missing.code == 2 and "SIM_PRICES" in missing.err and "none.yaml" in missing.err

    folder = tmp_path / "config"
    folder.mkdir()
    (folder / "prices.yaml").write_text("prices:\n  openai:x: {input: 1}\n", "utf-8")
    bad_default = sim("prices", env={"SIM_CONFIG_DIR": str(folder)})
    assert bad_default.code == 2 and "prices.openai:x.output" in bad_default.err


def test_an_experiment_price_must_be_non_negative_numbers(sim, tmp_path):
    path = _experiment(tmp_path, [{"model": "openai:stub", "price": {"input": -2, "output": 1}}])
    refused = sim("experiment", "create", str(path), db=str(tmp_path / "store"))
    assert refused.code == 2
    assert "price.input" in refused.err and "greater than or equal to 0" in refused.err
    path = _experiment(tmp_path, [{"model": "openai:stub", "price": {"input": 2}}])
    refused = sim("experiment", "create", str(path), db=str(tmp_path / "store"))
    assert refused.code == 2 and "price.output" in refused.err


def test_the_dry_run_estimate_prices_each_model_and_never_says_zero_for_unknown(
    sim, tmp_path, priced
):
    db, exp_id = priced
    sweep = _sweep_file(tmp_path, ["openai:stub", "openai:gpt-4o-mini"])
    plan = sim("sweep", "create", exp_id, sweep, "--dry-run", "--json", db=db).json()
    estimate = plan["estimate"]
    assert estimate["method"] == "approximation: 4 characters per token"
    assert estimate["price_unknown"] == [] and estimate["total"]["cost"] > 0
    assert estimate["total"]["calls"] == plan["expected_calls"]
    assert estimate["total"]["conversations"] == plan["conversations"] == 4
    assert len(estimate["cells"]) == 2
    assert sorted(c["label"].split()[0] for c in estimate["cells"].values()) == [
        "openai:gpt-4o-mini",
        "openai:stub",
    ]
    assert estimate["total"]["seconds"] is None  # nothing in the ledger yet

    unknown = _sweep_file(tmp_path, ["openai:house-model"])
    printed = sim("sweep", "create", exp_id, unknown, "--dry-run", db=db)
    assert printed.code == 0, printed.err
    words = " ".join(printed.out.split())  # lines are wrapped at the terminal's width
    line = words[words.index("estimate: ") :].split(" estimate: ")[0]
    assert "price unknown" in line and "openai:house-model" in line and "$0" not in line
    assert sim("sweep", "list", "--json", db=db).json() == []  # a dry run writes nothing


def test_the_estimate_is_stored_with_the_sweep_and_shown_when_it_runs(sim, stub, tmp_path, priced):
    db, exp_id = priced
    env = {"OPENAI_BASE_URL": stub.openai_base_url, "OPENAI_API_KEY": "sk-test"}
    sweep = _sweep_file(tmp_path, ["openai:stub"])
    created = sim("sweep", "create", exp_id, sweep, "--yes", "--json", db=db).json()
    store = open_store(open_database(db, "llm_simulator"))
    try:
        stored = store.sweeps.get(created["sweep_id"])["estimate"]
    finally:
        store.close()
    assert stored["total"]["calls"] == created["expected_calls"]
    assert stored["concurrency"] == 8 and stored["taken_at"] is not None
    ran = sim("sweep", "run", created["sweep_id"], "--concurrency", "2", db=db, env=env)
    assert ran.code == 0, ran.err
    err = " ".join(ran.err.split())  # wrapped at the terminal's width
    assert "estimate: " in err and "made when the sweep was created" in err

    # now the ledger knows the stub's replies and latency: the next estimate uses them
    again = sim("run", exp_id, "--agents", "guard=1,prisoner=1", "--messages", "4",
                "--llm", "openai:stub", "--dry-run", "--json", db=db).json()  # fmt: skip
    estimate = again["estimate"]
    assert "openai:stub" in estimate["reply_tokens"] and estimate["total"]["seconds"] is not None
    assert estimate["total"]["calls"] == 5  # 4 turns and the day's summary
    listed = sim("conversation", "list", "--json", db=db).json()
    assert len(listed) == created["conversations"] == 2  # the dry run stored nothing


@pytest.mark.parametrize(
    ("file", "options", "spec_model"),
    [
        ("takata_grid.yaml", ["--agents", "4", "--steps", "2"], "grid"),
        ("party_grid.yaml", ["--steps", "2"], "grid"),
        ("llm_sam_network.yaml", [], "network"),
        ("prison_memory.yaml", ["--agents", "guard=1,prisoner=1", "--messages", "4"], "chat"),
    ],
)
def test_every_world_estimates_its_runs_calls_before_running(
    sim, tmp_path, file, options, spec_model
):
    db = str(tmp_path / "store")
    path = str(REPO / "prompts" / "experiments" / file)
    exp_id = sim("experiment", "create", path, "--json", db=db).json()["id"]
    out = sim("run", exp_id, *options, "--dry-run", "--json", db=db)
    assert out.code == 0, out.err
    planned = out.json()
    estimate = planned["estimate"]
    if spec_model == "grid":
        from simulator.worlds.grid.domain.experiment import GridSpec as Spec
    elif spec_model == "network":
        from simulator.worlds.network.domain.experiment import NetworkSpec as Spec
    else:
        from simulator.worlds.chat.domain.spec import ConversationSpec as Spec
    spec = Spec.model_validate(planned["spec"])
    stream = spec.memory.is_stream
    calls = getattr(spec, "calls", None)
    if calls is None:  # a chat: its turns and a summary per day
        calls = spec.agent_turns + spec.days
    total = estimate["total"]
    # a stream's ratings come on top of the world's own calls: "at least"
    assert total["calls"] >= calls if stream else total["calls"] == calls
    assert estimate["calls_at_least"] == stream
    assert total["tokens_in"] > 0 and total["tokens_out"] > 0
    assert total["cost"] == 0  # the shipped experiments run locally
    assert sim("conversation", "list", "--json", db=db).json() == []
