"""How much the hf backend's dynamic batching buys: N agents at once vs the same N one at a time.

Both modes go through the real backend (chat template, batcher, worker thread, `generate`), and
both generate exactly `--max-tokens` tokens per request (`min_new_tokens` is forced), so the
token counts match and tokens/second compare fairly. Target on a GPU with a real model: >= 20x.

    python bench/hf_batching.py                       # tiny random model in a temp dir (CPU ok)
    python bench/hf_batching.py --model /models/SmolLM2-360M-Instruct --max-tokens 64
    python bench/hf_batching.py --random-hidden 1024 --random-layers 16   # GPU, no download

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("HF_HUB_OFFLINE", "1")

from simulator.domain.params import GenerationParams  # noqa: E402
from simulator.llm.hf_backend import HFBackend  # noqa: E402

TOPICS = ["the market", "the new park", "tomorrow's vote", "the weather", "the harvest", "taxes"]


def agent_messages(i: int) -> list[dict]:
    """A different persona and question per agent, so prompts differ in length (real padding)."""
    return [
        {"role": "system", "content": f"You are agent {i}, a villager. " * (1 + i % 3)},
        {"role": "user", "content": f"What do you think about {TOPICS[i % len(TOPICS)]}?"},
    ]


def tiny_model(directory: Path, hidden_size: int, layers: int) -> Path:
    spec = importlib.util.spec_from_file_location("tiny_models", ROOT / "tests/llm/tiny_models.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.build_tiny_model(directory, hidden_size=hidden_size, layers=layers)


async def one_at_a_time(backend: HFBackend, n: int, params: GenerationParams) -> tuple[int, float]:
    start = time.perf_counter()
    tokens = 0
    for i in range(n):
        tokens += (await backend.chat(agent_messages(i), params)).tokens_out or 0
    return tokens, time.perf_counter() - start


async def all_at_once(backend: HFBackend, n: int, params: GenerationParams) -> tuple[int, float]:
    start = time.perf_counter()
    done = await asyncio.gather(*(backend.chat(agent_messages(i), params) for i in range(n)))
    return sum(c.tokens_out or 0 for c in done), time.perf_counter() - start


async def run(model: str, requests: int, max_tokens: int, batch_wait_ms: float) -> None:
    backend = HFBackend(
        model,
        max_batch_size=max(requests, 1),
        batch_wait_ms=batch_wait_ms,
        min_new_tokens=max_tokens,
    )
    params = GenerationParams(temperature=0.8, top_p=0.95, max_tokens=max_tokens)
    warm = await backend.chat(agent_messages(0), params)  # load + first-call costs stay out
    print(f"model   {model}")
    print(f"device  {warm.model_identity['device']}")
    print(f"load    {warm.latency_s:.2f} s (first call, excluded)")

    seq_tokens, seq_s = await one_at_a_time(backend, requests, params)
    calls_before = backend.batcher.generate_calls
    par_tokens, par_s = await all_at_once(backend, requests, params)
    par_calls = backend.batcher.generate_calls - calls_before
    await backend.aclose()

    seq_rate, par_rate = seq_tokens / seq_s, par_tokens / par_s
    print(f"requests {requests} x {max_tokens} new tokens")
    print(f"one at a time : {seq_tokens:6d} tokens in {seq_s:7.2f} s = {seq_rate:9.1f} tok/s")
    print(
        f"concurrent    : {par_tokens:6d} tokens in {par_s:7.2f} s = {par_rate:9.1f} tok/s"
        f"  ({par_calls} generate call{'s' if par_calls != 1 else ''})"
    )
    print(f"speed-up      : {par_rate / seq_rate:.1f}x")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", help="HF folder or hub id (default: a tiny random model)")
    parser.add_argument("--max-tokens", type=int, default=32)
    parser.add_argument("--requests", type=int, default=32)
    parser.add_argument("--batch-wait-ms", type=float, default=5.0)
    parser.add_argument("--random-hidden", type=int, default=32, help="random model width")
    parser.add_argument("--random-layers", type=int, default=2, help="random model depth")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        model = args.model or str(
            tiny_model(Path(tmp) / "tiny", args.random_hidden, args.random_layers)
        )
        asyncio.run(run(model, args.requests, args.max_tokens, args.batch_wait_ms))


if __name__ == "__main__":
    main()
