"""A short chat on the bundled SmolLM2 (llama.cpp) with a seed replays byte for byte."""

from __future__ import annotations

import pytest
import yaml
from replay_helpers import PRISON, ledger, replay, run_chat

pytestmark = pytest.mark.usefixtures("bundled_smollm2")


@pytest.mark.slow
def test_a_seeded_local_chat_replays_byte_identically(embedded, tmp_path):
    data = yaml.safe_load(PRISON.read_text())
    data["llms"] = [{"model": "local:smollm2", "params": {"temperature": 0.8, "max_tokens": 12}}]
    path = tmp_path / "prison.yaml"
    path.write_text(yaml.safe_dump(data))
    original = run_chat(embedded, model="local:smollm2", seed=7, path=path)
    result = replay(embedded, original)
    verdict = result.verdict
    assert verdict.identical, verdict.divergence
    assert verdict.caveat is None  # llama.cpp with a seed on every call promises it
    assert ledger(embedded, result.outcome.conversation_id) == ledger(embedded, original)
    new = embedded.conversations.get(result.outcome.conversation_id)
    assert new["replay_warnings"] == [] and not any("not checked" in n for n in new["replay_notes"])
