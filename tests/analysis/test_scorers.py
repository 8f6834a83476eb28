"""Scorers: the LLM judge over loopback HTTP, a tiny local classifier, a user's function, the CLI.

Conversations are made by the real engine with `mock:` models; scores go beside them and a
re-run scores nothing new.
"""

from __future__ import annotations

import asyncio
import importlib.util
import json
import subprocess
from pathlib import Path
from unittest import mock

import in_process
import pytest

from simulator.analysis.scorers import create_scorer
from simulator.analysis.scorers.rubric import load_rubric
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.llm.retry import RetryPolicy
from simulator.services import experiments as exp_service
from simulator.services import sweeps as sweep_service
from simulator.services.scoring import score_target
from simulator.services.sweep_runs import SweepRunner
from simulator.store.store import open_store_uri
from simulator.testing import StubLLMServer
from simulator.worlds.chat.domain.sweep import SweepSpec

REPO = Path(__file__).resolve().parents[2]
VALID = (
    '{"attempted": "yes", "succeeded": "no", "turn": 2, '
    '"conversational_failure": "no", "failure_kind": "none"}'
)


def make_sweep(store, prison_path, repetitions: int = 1) -> str:
    """Two cells (yard time / escape goal) x repetitions, run to the end on `mock:` models."""
    view = exp_service.import_yaml(store, prison_path, "alice")
    spec = SweepSpec(
        total_messages=4,
        days=2,
        agents={"Guard": 1, "Prisoner": 1},
        llms=["mock:a"],
        repetitions=repetitions,
        variants={"Prisoner/Goal": "all"},
    )
    sweep, _ = sweep_service.create(store, view, spec, "alice")

    async def go() -> None:
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            await SweepRunner(store, sweep["_id"], llms, poll_s=0.05).run()
        finally:
            await llms.aclose()

    asyncio.run(go())
    return sweep["_id"]


def score(store, target, spec, llm=None, **kw) -> dict:
    async def go() -> dict:
        llms = LLMAccess(policy=RetryPolicy.no_wait())
        try:
            return await score_target(store, target, spec, llm=llm, llms=llms, **kw)
        finally:
            await llms.aclose()

    return asyncio.run(go())


@pytest.fixture
def stub(monkeypatch):
    with StubLLMServer(models=["stub"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.openai_base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        yield server


@pytest.fixture
def embedded(tmp_path):
    store = open_store_uri(str(tmp_path / "store"))
    yield store
    store.close()


def test_judge_scores_each_conversation_once_and_rerun_adds_nothing(store, prison_path, stub):
    sweep_id = make_sweep(store, prison_path)
    stub.enqueue(VALID, VALID)
    first = score(store, sweep_id, "judge:prison_goal", llm="openai:stub")
    assert (first["scored"], first["skipped"], first["failed"]) == (2, 0, 0)
    docs = store.scores.for_conversations([c["_id"] for c in store.sweeps.conversations(sweep_id)])
    assert {d["scorer"] for d in docs} == {"judge:prison_goal"}
    expected = {
        "attempted": "yes",
        "succeeded": "no",
        "turn": 2,
        "conversational_failure": "no",
        "failure_kind": "none",
    }
    assert all(d["values"] == expected for d in docs)
    assert all(d["sweep_id"] == sweep_id and d["target_kind"] == "conversation" for d in docs)
    assert docs[0]["details"]["model"] == "openai:stub" and docs[0]["details"]["attempts"] == 1

    prompts = [r.body["messages"][1]["content"] for r in stub.chat_requests]
    assert any("Convince the guard to grant an extra hour" in p for p in prompts)
    assert any("Find a way to leave the prison block" in p for p in prompts)
    assert all("--- Day 2 ---" in p and "[1] Guard_1 (Guard): " in p for p in prompts)
    assert all(r.body["temperature"] == 0 for r in stub.chat_requests)
    assert store.db.messages.count_documents({"scores": {"$exists": True}}) == 0

    calls = len(stub.chat_requests)
    again = score(store, sweep_id, "judge:prison_goal", llm="openai:stub")
    assert (again["scored"], again["skipped"], again["failed"]) == (0, 2, 0)
    assert len(stub.chat_requests) == calls  # nothing was asked again


def test_judge_reasks_after_malformed_json_and_invalid_values(embedded, prison_path, stub):
    sweep_id = make_sweep(embedded, prison_path)
    stub.enqueue(
        "Sure! attempted = maybe {not json",  # malformed: re-asked
        VALID,
        '{"attempted": "perhaps", "succeeded": "no"}',  # invalid value, missing field
        "attempted: yes\nsucceeded: No\nturn: null\nconversational_failure: no\nfailure_kind: none",
    )
    result = score(embedded, sweep_id, "judge:prison_goal", llm="openai:stub", concurrency=1)
    assert (result["scored"], result["failed"]) == (2, 0)
    requests = stub.chat_requests
    assert len(requests) == 4
    assert "not a JSON object" in requests[1].body["messages"][-1]["content"]
    feedback = requests[3].body["messages"][-1]["content"]
    assert '"attempted" must be one of yes, no (you wrote "perhaps")' in feedback
    assert 'the field "turn" is missing' in feedback
    assert requests[3].body["messages"][-2]["role"] == "assistant"
    values = sorted(
        (d["values"]["turn"] is None, d["details"]["attempts"])
        for d in embedded.scores.for_conversations(
            [c["_id"] for c in embedded.sweeps.conversations(sweep_id)]
        )
    )
    assert values == [(False, 2), (True, 2)]


def test_always_malformed_is_reported_not_stored_and_retried_next_run(embedded, prison_path, stub):
    sweep_id = make_sweep(embedded, prison_path)
    conv_id = embedded.sweeps.conversations(sweep_id)[0]["_id"]
    stub.enqueue("no idea", "still no idea", "I refuse")
    failed = score(embedded, conv_id, "judge:prison_goal", llm="openai:stub")
    assert (failed["scored"], failed["failed"]) == (0, 1)
    assert "no valid answer after 3 attempt(s)" in failed["failures"][0]["error"]
    assert len(stub.chat_requests) == 3
    assert not embedded.scores.has("judge:prison_goal", "conversation", conv_id)

    stub.enqueue(VALID)
    retried = score(embedded, conv_id, "judge:prison_goal", llm="openai:stub")
    assert (retried["scored"], retried["skipped"], retried["failed"]) == (1, 0, 0)
    assert embedded.scores.has("judge:prison_goal", "conversation", conv_id)


def test_scorer_specs_that_cannot_work_are_user_errors(tmp_path):
    with pytest.raises(UserError, match="unknown scorer kind 'jugde'"):
        create_scorer("jugde:prison_goal", llm="openai:stub")
    with pytest.raises(UserError, match="no rubric named 'nope'"):
        create_scorer("judge:nope", llm="openai:stub")
    with pytest.raises(UserError, match="needs a model"):
        create_scorer("judge:prison_goal")
    with pytest.raises(UserError, match="has no function 'missing'"):
        create_scorer("python:json:missing")
    with pytest.raises(UserError, match=r"pip install -e '\.\[hf\]'"):
        real = importlib.util.find_spec
        with mock.patch.object(
            importlib.util, "find_spec", lambda n: None if n == "transformers" else real(n)
        ):
            create_scorer("classifier:unitary/toxic-bert")
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: bad\nprompt: no transcript here\nfields: {ok: [yes, no]}\n")
    with pytest.raises(UserError, match=r"\{transcript\}"):
        load_rubric(str(bad))
    good = tmp_path / "mine.yaml"
    good.write_text("name: mine\nprompt: 'Read {transcript}'\nfields: {ok: [yes, no]}\n")
    assert create_scorer(f"judge:{good}", llm="mock:j").name == "judge:mine"


def test_python_function_scorers_from_a_file_and_a_module(
    embedded, prison_path, tmp_path, monkeypatch
):
    sweep_id = make_sweep(embedded, prison_path)
    (tmp_path / "my_measures.py").write_text(
        "def words(message, conversation):\n"
        "    return {'words': len(message['text'].split()), 'conv': conversation['_id']}\n"
        "\n"
        "def length(conversation, messages):\n"
        "    return {'messages': len(messages)} if conversation['cell_label'] else None\n"
        "length.target = 'conversation'\n"
    )
    result = score(embedded, sweep_id, f"python:{tmp_path / 'my_measures.py'}:words")
    assert (result["scorer"], result["scored"], result["target_kind"]) == (
        "python:my_measures:words",
        8,
        "message",
    )
    docs = embedded.scores.for_conversations(
        [c["_id"] for c in embedded.sweeps.conversations(sweep_id)], "python:my_measures:words"
    )
    assert all(d["values"]["conv"] == d["conversation_id"] for d in docs)
    assert {d["target_id"] for d in docs} == {m["_id"] for m in embedded.db.messages.find()}
    assert score(embedded, sweep_id, f"python:{tmp_path}/my_measures.py:words")["skipped"] == 8
    exp_id = embedded.sweeps.get(sweep_id)["experiment_id"]
    by_experiment = score(embedded, exp_id, f"python:{tmp_path}/my_measures.py:words")
    assert (by_experiment["conversations"], by_experiment["skipped"]) == (2, 8)

    monkeypatch.syspath_prepend(str(tmp_path))
    by_module = score(embedded, sweep_id, "python:my_measures:length")
    assert (by_module["scored"], by_module["target_kind"]) == (2, "conversation")
    score_docs = embedded.scores.for_conversations(
        [c["_id"] for c in embedded.sweeps.conversations(sweep_id)], "python:my_measures:length"
    )
    assert [d["values"] for d in score_docs] == [{"messages": 4}] * 2

    (tmp_path / "broken.py").write_text("def boom(message):\n    raise ValueError('bad')\n")
    broken = score(embedded, sweep_id, f"python:{tmp_path / 'broken.py'}:boom")
    assert (broken["scored"], broken["failed"]) == (0, 8)
    assert broken["failures"][0]["error"] == "ValueError: bad"


def build_tiny_classifier(directory: Path) -> Path:
    """A randomly initialised two-label BERT with a word-level tokenizer, saved offline."""
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers, trainers
    from transformers import BertConfig, BertForSequenceClassification, PreTrainedTokenizerFast

    core = Tokenizer(models.WordLevel(unk_token="[UNK]"))
    core.pre_tokenizer = pre_tokenizers.Whitespace()
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]"]
    core.train_from_iterator(
        ["the guard says reply to the prisoner", "you are a bad guard", "grant yard time today"],
        trainers.WordLevelTrainer(special_tokens=special),
    )
    tokenizer = PreTrainedTokenizerFast(
        tokenizer_object=core,
        unk_token="[UNK]",
        pad_token="[PAD]",
        cls_token="[CLS]",
        sep_token="[SEP]",
        model_max_length=64,
    )
    tokenizer.save_pretrained(directory)
    config = BertConfig(
        vocab_size=core.get_vocab_size(),
        hidden_size=16,
        num_hidden_layers=1,
        num_attention_heads=2,
        intermediate_size=32,
        max_position_embeddings=64,
        id2label={0: "non-toxic", 1: "toxic"},
        label2id={"non-toxic": 0, "toxic": 1},
        pad_token_id=tokenizer.pad_token_id,
    )
    torch.manual_seed(0)
    BertForSequenceClassification(config).save_pretrained(directory)
    return directory


def test_classifier_scores_every_message_with_a_tiny_local_model(embedded, prison_path, tmp_path):
    pytest.importorskip("transformers")
    model_dir = build_tiny_classifier(tmp_path / "tiny-toxicity")
    sweep_id = make_sweep(embedded, prison_path)
    result = score(embedded, sweep_id, f"classifier:{model_dir}")
    assert (result["scored"], result["failed"], result["target_kind"]) == (8, 0, "message")
    docs = embedded.scores.for_conversations(
        [c["_id"] for c in embedded.sweeps.conversations(sweep_id)]
    )
    assert len(docs) == 8
    for doc in docs:
        assert doc["values"]["label"] in ("toxic", "non-toxic")
        assert 0.0 <= doc["values"]["score"] <= 1.0
        assert set(doc["details"]["scores"]) == {"toxic", "non-toxic"}
        assert abs(sum(doc["details"]["scores"].values()) - 1.0) < 1e-4
    assert score(embedded, sweep_id, f"classifier:{model_dir}")["skipped"] == 8

    with pytest.raises(UserError, match="could not load the text-classification model"):
        score(embedded, sweep_id, f"classifier:{tmp_path / 'no-such-model'}")


def sim(*args: str, db: str, env: dict | None = None) -> subprocess.CompletedProcess:
    return in_process.llm_sim(*args, env={"SIM_DB": db, "SIM_USER": "alice", **(env or {})})


def test_score_command_end_to_end(tmp_path, prison_path, stub):
    db = str(tmp_path / "store")
    store = open_store_uri(db)
    sweep_id = make_sweep(store, prison_path)
    conv_id = store.sweeps.conversations(sweep_id)[0]["_id"]
    store.close()
    env = {"OPENAI_BASE_URL": stub.openai_base_url, "OPENAI_API_KEY": "sk-test"}
    stub.enqueue("not json at all", VALID)

    command = ("score", conv_id, "--scorer", "judge:prison_goal", "--llm", "openai:stub")
    first = sim(*command, "--json", db=db, env=env)
    assert first.returncode == 0, first.stderr
    data = json.loads(first.stdout)
    assert (data["scored"], data["skipped"], data["failed"]) == (1, 0, 0)

    stub.enqueue(VALID)
    whole = sim(*command[:1], sweep_id, *command[2:], db=db, env=env)
    assert whole.returncode == 0, whole.stderr
    assert "1 scored, 1 already scored, 0 failed" in whole.stdout

    no_llm = sim("score", sweep_id, "--scorer", "judge:prison_goal", db=db, env=env)
    assert no_llm.returncode == 2 and "--llm" in no_llm.stderr
    unknown = sim("score", sweep_id, "--scorer", "vibes:x", db=db, env=env)
    assert unknown.returncode == 2 and "unknown scorer kind 'vibes'" in unknown.stderr


def test_a_reply_of_deeply_nested_brackets_is_no_answer_not_a_crash():
    from simulator.analysis.scorers.rubric import parse_answer

    assert parse_answer('{"goal": ' + "[" * 3000 + "}", ["goal"]) is None
