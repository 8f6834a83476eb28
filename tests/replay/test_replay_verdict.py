"""The pure verdict: calls matched by place (not by seq), a differing prompt shown before its
reply, a missing or an extra call named, and the determinism caveat in one sentence."""

from __future__ import annotations

from simulator.domain.replay_verdict import compare, determinism_caveat, fingerprint

PROMPTS = {"p1": [{"role": "user", "content": "hello"}], "p2": [{"role": "user", "content": "bye"}]}


def row(seq, index, response, prompt="p1", agent="a", state="done", model="local:x", seed=1):
    return {
        "seq": seq,
        "purpose": "agent_turn",
        "day": 1,
        "index": index,
        "agent": agent,
        "prompt_hash": prompt,
        "response": response,
        "state": state,
        "model": model,
        "params": {"seed": seed},
    }


def verdict(ours, theirs):
    return compare("conv_a", "conv_b", ours, theirs, PROMPTS.__getitem__)


def test_calls_match_by_place_whatever_their_seq():
    ours = [row(1, 0, "x"), row(2, 1, "y", agent="b")]
    theirs = [row(5, 1, "y", agent="b"), row(6, 0, "x"), row(7, 0, "lost", state="failed")]
    found = verdict(ours, theirs)
    assert found.identical and found.compared == 2


def test_a_differing_prompt_is_shown_rather_than_its_reply():
    found = verdict([row(1, 0, "x")], [row(1, 0, "z", prompt="p2")])
    assert found.divergence.what == "prompt"
    assert "-hello" in found.divergence.diff and "+bye" in found.divergence.diff


def test_missing_and_extra_calls_are_divergences():
    missing = verdict([row(1, 0, "x"), row(2, 1, "y")], [row(1, 0, "x")])
    assert missing.divergence.what == "missing" and missing.divergence.original_seq == 2
    assert "the replay made no agent_turn call" in missing.headline()
    extra = verdict([row(1, 0, "x")], [row(1, 0, "x"), row(2, 1, "y")])
    assert extra.divergence.what == "extra" and extra.divergence.replay_seq == 2


def test_the_caveat_names_what_does_not_promise_determinism():
    assert determinism_caveat([row(1, 0, "x")]) is None
    assert "no seed" in determinism_caveat([row(1, 0, "x", seed=None)])
    sentence = determinism_caveat([row(1, 0, "x", model="openai:gpt")])
    assert sentence.count(".") == 1 and "OpenAI-compatible" in sentence
    assert "without a seed" in determinism_caveat([row(1, 0, "x", model="ollama:m", seed=None)])


def test_identity_fingerprints_name_the_weights():
    local = {"provider": "local", "path": "/a/m.gguf", "sha256": "abc"}
    assert fingerprint(local) == fingerprint({**local, "path": "/elsewhere/m.gguf"})
    assert fingerprint({"provider": "ollama", "model": "m", "digest": "d1"}) == {"digest": "d1"}
    assert fingerprint(None) == {} and fingerprint({"provider": "openai", "model": "g"})
