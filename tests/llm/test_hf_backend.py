"""The hf backend against a tiny random Llama built in a temp dir: no hub, no GPU, a few seconds."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
pytest.importorskip("torch")
pytest.importorskip("transformers")

from simulator.domain.params import GenerationParams
from simulator.llm.base import FatalBackendError
from simulator.llm.hf_backend import HFBackend, _plan, create_backend

from .tiny_models import build_tiny_model

HELLO = [{"role": "user", "content": "hello bob"}]


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_model(tmp_path_factory.mktemp("hf") / "tiny")


@pytest.fixture(scope="module")
def backend(model_dir: Path) -> HFBackend:
    """Shared across tests (and their event loops): the model loads once."""
    return create_backend(str(model_dir))


def _prompt(i: int) -> list[dict]:
    words = ["the mayor", "alice says hello", "what do you think", "bob answers"]
    return [
        {"role": "system", "content": "you are a helpful assistant"},
        {"role": "user", "content": " ".join(words[: i % 4 + 1])},
    ]


async def test_chat_returns_text_counts_and_identity(backend: HFBackend, model_dir: Path) -> None:
    c = await backend.chat(HELLO, GenerationParams(temperature=0.8, seed=1, max_tokens=8))
    assert isinstance(c.text, str)
    assert c.tokens_in == 6  # <s> <|user|> hello bob </s> <|assistant|>
    assert 0 <= c.tokens_out <= 8
    assert c.latency_s > 0
    assert c.model_identity == {
        "provider": "hf",
        "path_or_id": str(model_dir),
        "commit": None,
        "device": "cpu",
    }
    assert c.ignored_params == []
    assert backend.endpoint == f"hf:{model_dir}"


async def test_max_tokens_bounds_output(backend: HFBackend) -> None:
    short = await backend.chat(HELLO, GenerationParams(temperature=0, max_tokens=3))
    assert short.tokens_out <= 3
    assert _plan(GenerationParams(max_tokens=3), False)[0]["max_new_tokens"] == 3


async def test_min_new_tokens_knob_forces_length(model_dir: Path) -> None:
    forced = create_backend(str(model_dir), min_new_tokens=7)
    c = await forced.chat(HELLO, GenerationParams(temperature=1.0, seed=5, max_tokens=7))
    assert c.tokens_out == 7
    await forced.aclose()


async def test_greedy_is_deterministic_and_unchanged_by_batching(backend: HFBackend) -> None:
    greedy = GenerationParams(temperature=0, max_tokens=10)
    first = await backend.chat(_prompt(0), greedy)
    second = await backend.chat(_prompt(0), greedy)
    assert first.text == second.text
    batched = await asyncio.gather(*(backend.chat(_prompt(i), greedy) for i in range(4)))
    assert batched[0].text == first.text  # left padding + attention mask do not change the answer


async def test_seed_reproduces_sampling(backend: HFBackend) -> None:
    def sampled(seed: int) -> GenerationParams:
        return GenerationParams(temperature=1.5, top_k=50, top_p=0.99, seed=seed, max_tokens=16)

    a = await backend.chat(HELLO, sampled(42))
    b = await backend.chat(HELLO, sampled(42))
    others = [(await backend.chat(HELLO, sampled(s))).text for s in (1, 2, 3)]
    assert a.text == b.text
    assert any(text != a.text for text in others)


async def test_seeded_calls_with_different_seeds_share_a_batch_and_keep_their_answers(
    model_dir: Path,
) -> None:
    """Every call of a seeded grid stage has its own seed: they still go out in one `generate`,
    and each answer is the one the same call gets alone (its draws depend on its seed only)."""

    def sampled(seed: int) -> GenerationParams:
        return GenerationParams(temperature=1.3, top_p=0.95, seed=seed, max_tokens=12)

    alone_backend = create_backend(str(model_dir), max_batch_size=1)
    alone = [(await alone_backend.chat(_prompt(i), sampled(100 + i))).text for i in range(6)]
    assert alone_backend.batcher.largest_batch == 1
    batching = create_backend(str(model_dir), batch_wait_ms=50)
    together = await asyncio.gather(
        *(batching.chat(_prompt(i), sampled(100 + i)) for i in range(6))
    )
    assert batching.batcher.generate_calls == 1 and batching.batcher.largest_batch == 6
    assert [c.text for c in together] == alone
    assert len(set(alone)) > 1  # the seeds matter
    await alone_backend.aclose()
    await batching.aclose()


async def test_stop_strings_truncate(backend: HFBackend) -> None:
    greedy = GenerationParams(temperature=0, max_tokens=10)
    full = (await backend.chat(HELLO, greedy)).text
    word = full.split()[1]
    cut = await backend.chat(HELLO, greedy.merge(GenerationParams(stop=[word])))
    assert cut.text == full[: full.find(word)]


async def test_concurrent_calls_are_batched(model_dir: Path) -> None:
    batching = create_backend(str(model_dir), batch_wait_ms=50)
    params = GenerationParams(temperature=0.7, seed=3, max_tokens=5)
    other = GenerationParams(temperature=0, max_tokens=5)
    calls = [batching.chat(_prompt(i), params if i % 2 else other) for i in range(12)]
    results = await asyncio.gather(*calls)
    assert len(results) == 12 and all(r.tokens_out is not None for r in results)
    assert batching.batcher.requests_served == 12
    assert batching.batcher.generate_calls < 12
    assert batching.batcher.largest_batch > 1
    await batching.aclose()


async def test_num_ctx_and_greedy_default_sampling_fields_are_reported_ignored(
    backend: HFBackend,
) -> None:
    c = await backend.chat(HELLO, GenerationParams(num_ctx=4096, top_p=0.5, max_tokens=2))
    assert sorted(c.ignored_params) == ["num_ctx", "top_p"]  # the tiny model decodes greedily


async def test_missing_path_is_fatal(tmp_path: Path) -> None:
    missing = create_backend(str(tmp_path / "nope"))
    with pytest.raises(FatalBackendError, match="does not exist"):
        await missing.preflight()
    with pytest.raises(FatalBackendError, match="does not exist"):
        await missing.chat(HELLO, GenerationParams())


async def test_uncached_hub_id_offline_is_fatal() -> None:
    with pytest.raises(FatalBackendError, match="HF_HUB_OFFLINE"):
        await create_backend("hf:nobody-here/no-such-model").chat(HELLO, GenerationParams())


def test_base_url_does_not_apply(model_dir: Path) -> None:
    with pytest.raises(FatalBackendError):
        create_backend(str(model_dir), base_url="http://localhost:1")


async def test_batcher_splits_groups_and_fails_a_batch_as_a_whole() -> None:
    from simulator.llm.hf_batcher import BatchRequest, DynamicBatcher

    seen: list[int] = []

    def run_batch(requests: list[BatchRequest]) -> list[int]:
        seen.append(len(requests))
        if requests[0].group_key == "bad":
            raise RuntimeError("boom")
        return [sum(r.prompt_ids) for r in requests]

    batcher = DynamicBatcher(run_batch, batch_wait_ms=20, max_batch_size=3)
    good = [batcher.submit(BatchRequest([i, 1], group_key="ok")) for i in range(5)]
    bad = [batcher.submit(BatchRequest([i], group_key="bad")) for i in range(2)]
    results = await asyncio.gather(*good, *bad, return_exceptions=True)
    assert results[:5] == [1, 2, 3, 4, 5]
    assert all(isinstance(r, RuntimeError) for r in results[5:])
    assert sum(seen) == 7 and max(seen) == 3 and len(seen) < 7  # batched, never over the cap
    assert batcher.requests_served == 5
    await batcher.aclose()
