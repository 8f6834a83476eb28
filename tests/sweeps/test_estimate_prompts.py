"""A chat's estimate sizes every prompt the run sends: with replies of a known length and the
loopback stub's own token rule (whitespace words), the estimated tokens in are exactly what the
stub reported for each call of the run, whatever the speaker format, speaker strategy, days or
manager. The estimate adds up running sums rather than rendering each prompt (a 100,000-turn
chat is sized in a moment), so this checks those sums against the prompts really sent."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from simulator.llm.token_count import WORDS
from simulator.services import estimates
from simulator.services import experiments as exp_service
from simulator.services.runs import models as run_models
from simulator.store.database import open_database
from simulator.store.store import open_store
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.spec import ConversationSpec

REPO = Path(__file__).resolve().parents[2]
REPLY = "one two three four five six seven"


@pytest.fixture
def seven_words():
    with StubLLMServer(models=["stub"]) as server:

        def reply(body: dict) -> str:
            messages = body["messages"]
            if "conversation manager" not in str(messages[0].get("content", "")):
                return REPLY
            # a manager names the one who did not speak last, seven words in all
            transcript = str(messages[1]["content"]).split("\n\nWho speaks next")[0]
            guard_last = transcript.splitlines()[-1].startswith("Guard_1:")
            return ("Prisoner_1" if guard_last else "Guard_1") + " two three four five six seven"

        server.reply_fn = reply
        yield server


@pytest.mark.parametrize(
    "options",
    [
        ["--agents", "guard=1,prisoner=2", "--messages", "7", "--days", "2"],
        ["--agents", "guard=1,prisoner=1", "--messages", "6", "--speaker-format", "name_field"],
        ["--agents", "guard=2,prisoner=2", "--messages", "9", "--speaker", "random"],
        ["--agents", "guard=1,prisoner=2", "--messages", "5", "--speaker", "role_alternating"],
        ["--agents", "guard=1,prisoner=1", "--messages", "4", "--speaker", "auto"],
    ],
    ids=["prefix-2-days", "name-field", "random", "role-alternating", "auto"],
)
def test_estimated_prompt_tokens_are_what_the_run_sent(run_cli, tmp_path, seven_words, options):
    data = yaml.safe_load((REPO / "prompts/experiments/prison.yaml").read_text("utf-8"))
    data["llms"] = [{"model": "openai:stub", "params": {"max_tokens": 7}}]
    path = tmp_path / "exp.yaml"
    path.write_text(yaml.safe_dump(data), "utf-8")
    db = str(tmp_path / "store")
    env = {
        "OPENAI_BASE_URL": seven_words.openai_base_url,
        "OPENAI_API_KEY": "sk-test",
        "SIM_DB": db,
        "SIM_USER": "alice",
    }
    exp_id = run_cli(["experiment", "create", str(path), "--json"], env=env).json()["id"]
    extra = ["--manager-llm", "openai:stub"] if "auto" in options else []
    ran = run_cli(["run", exp_id, *options, *extra, "--seed", "4", "--json"], env=env)
    assert ran.code == 0, ran.err

    store = open_store(open_database(db, "llm_simulator"))
    try:
        [conversation] = list(store.db.conversations.find({}))
        calls = store.calls.for_conversation(conversation["_id"])
        spec = ConversationSpec.model_validate(conversation["spec"])
        view = exp_service.get(store, exp_id, "alice")
        estimate = estimates.run_estimate(
            store, view, spec, run_models("chat", spec), counter=WORDS
        )
    finally:
        store.close()
    assert estimate is not None
    done = [c for c in calls if c["state"] == "done"]
    total = estimate["total"]
    assert total["calls"] == len(done)
    assert total["tokens_in"] == sum(c["tokens_in"] for c in done)
