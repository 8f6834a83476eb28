"""Which sampling makes the demo's model (local:smollm2) least repetitive on the prison prompts.

Each setting runs one short prison conversation (1 guard, 1 prisoner, 1 day, with its summary)
through the real engine and store; the conversations run side by side on the one in-process model,
so llama.cpp reuses the shared prompt prefix between calls and the bench stays short.

Repetitiveness of the stored transcript (messages and summary):
  distinct-2  unique word bigrams / all word bigrams (higher is better)
  repeated    share of sentences that already appeared earlier in the transcript (lower is better)
  score       distinct-2 x (1 - repeated), the ranking
  rep-4       share of word 4-grams seen earlier in the transcript (lower is better; unlike
              distinct-2 it hardly favours short replies)
Also shown: mean reply tokens, share of replies cut at max_tokens, and one line of sample text.

Rows with `repeat_penalty` (rp) measured the field that the demo now uses.

    python bench/demo_sampling.py                 # 6 settings x 1 seed, a few minutes on 2 cores
    python bench/demo_sampling.py --seeds 3 --messages 6
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import statistics
import time
from dataclasses import dataclass, field
from itertools import pairwise

from simulator.domain.params import GenerationParams
from simulator.domain.yaml_io import load_model
from simulator.llm.access import LLMAccess
from simulator.prompting.templates import PROMPTS_DIR
from simulator.services import experiments as exp_service
from simulator.services import runs as run_service
from simulator.store.store import open_store_uri
from simulator.worlds.chat.domain.experiment import Experiment
from simulator.worlds.chat.services import runs as conv_service

MODEL = "local:smollm2"
MAX_TOKENS = 120  # the prison experiment's own, kept equal so lengths stay comparable


@dataclass(frozen=True)
class Setting:
    temperature: float
    top_p: float
    top_k: int | None = None
    repeat_penalty: float | None = None

    @property
    def label(self) -> str:
        parts = [f"t={self.temperature:g}", f"top_p={self.top_p:g}"]
        if self.top_k:
            parts.append(f"top_k={self.top_k}")
        if self.repeat_penalty:
            parts.append(f"rp={self.repeat_penalty:g}")
        return " ".join(parts)

    def params(self) -> GenerationParams:
        return GenerationParams(
            temperature=self.temperature,
            top_p=self.top_p,
            top_k=self.top_k,
            max_tokens=MAX_TOKENS,
            repeat_penalty=self.repeat_penalty,
        )


SETTINGS = [
    Setting(0.7, 0.9),  # the prison experiment's own (llama.cpp's top_k default is 40)
    Setting(0.9, 0.95, 40),
    Setting(1.1, 0.95, 40),
    Setting(0.9, 0.9, 40),
    Setting(0.7, 0.9, None, 1.3),
    Setting(0.9, 0.95, 40, 1.2),
]


@dataclass
class Result:
    setting: Setting
    texts: list[list[str]] = field(default_factory=list)  # one transcript per seed
    tokens_out: list[int] = field(default_factory=list)


WORD = re.compile(r"[a-z0-9']+")
SENTENCE_END = re.compile(r"(?<=[.!?])\s+|\n+")


def distinct_2(texts: list[str]) -> float:
    bigrams = []
    for text in texts:
        words = WORD.findall(text.lower())
        bigrams.extend(pairwise(words))
    return len(set(bigrams)) / len(bigrams) if bigrams else 0.0


def repeated_share(texts: list[str]) -> float:
    """Sentences (3+ words) whose words already appeared as a sentence earlier in the transcript."""
    seen: set[tuple[str, ...]] = set()
    total = repeated = 0
    for text in texts:
        for sentence in SENTENCE_END.split(text):
            words = tuple(WORD.findall(sentence.lower()))
            if len(words) < 3:
                continue
            total += 1
            repeated += words in seen
            seen.add(words)
    return repeated / total if total else 0.0


def repeated_4grams(texts: list[str]) -> float:
    seen: set[tuple[str, ...]] = set()
    total = repeated = 0
    for text in texts:
        words = WORD.findall(text.lower())
        for i in range(len(words) - 3):
            gram = tuple(words[i : i + 4])
            total += 1
            repeated += gram in seen
            seen.add(gram)
    return repeated / total if total else 0.0


async def run_all(seeds: list[int], messages: int) -> tuple[list[Result], float]:
    experiment = load_model(PROMPTS_DIR / "experiments" / "prison.yaml", Experiment, "experiment")
    store = open_store_uri("mongomock://bench", "bench")
    llms = LLMAccess()
    results = [Result(s) for s in SETTINGS]
    jobs = []
    for result in results:
        choice = experiment.llms[0].model_copy(update={"params": result.setting.params()})
        assert choice.model == MODEL
        variant = experiment.model_copy(update={"llms": [choice]})
        view = exp_service.create(store, variant, "bench")
        for seed in seeds:
            spec = conv_service.build_spec(
                view,
                agents="guard=1,prisoner=1",
                total_messages=messages,
                days=1,
                llm=MODEL,
                summarizer_llm=MODEL,
                seed=seed,
            )
            doc = run_service.create_run(store, view, spec, "bench")
            jobs.append((result, doc["_id"]))

    async def one(result: Result, conversation_id: str) -> None:
        outcome = await conv_service.run(store, conversation_id, llms)
        if outcome.status != "done":
            raise SystemExit(f"{result.setting.label}: {outcome.status} {outcome.error}")
        data = conv_service.transcript(store, conversation_id)
        texts = [m["text"] for m in data["messages"]] + [s["text"] for s in data["summaries"]]
        result.texts.append(texts)
        for call in conv_service.prompts(store, conversation_id):
            if call.get("tokens_out") is not None:
                result.tokens_out.append(call["tokens_out"])

    await llms.preflight([experiment.llms[0]])
    start = time.perf_counter()
    # side by side: the calls of one turn follow each other and share their prompt prefix
    await asyncio.gather(*(one(result, cid) for result, cid in jobs))
    elapsed = time.perf_counter() - start
    await llms.aclose()
    return results, elapsed


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=1, help="conversations per setting")
    parser.add_argument("--messages", type=int, default=4, help="messages per conversation")
    args = parser.parse_args()
    seeds = [7 + 1000 * i for i in range(args.seeds)]
    cpu_start = time.process_time()
    results, elapsed = asyncio.run(run_all(seeds, args.messages))
    cpu = time.process_time() - cpu_start
    rows = []
    for result in results:
        d2 = statistics.mean(distinct_2(t) for t in result.texts)
        rep = statistics.mean(repeated_share(t) for t in result.texts)
        rep4 = statistics.mean(repeated_4grams(t) for t in result.texts)
        cut = sum(n >= MAX_TOKENS for n in result.tokens_out) / max(len(result.tokens_out), 1)
        mean_out = statistics.mean(result.tokens_out) if result.tokens_out else 0
        sample = " ".join(result.texts[0][1].split())[:70] if result.texts else ""
        rows.append((d2 * (1 - rep), d2, rep, rep4, mean_out, cut, result.setting.label, sample))
    rows.sort(reverse=True)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    print(
        f"{MODEL}, prison, 1 guard + 1 prisoner, {args.messages} messages + 1 summary, "
        f"max_tokens {MAX_TOKENS}, seeds {seeds}; {elapsed:.0f} s wall, {cpu:.0f} s CPU "
        f"on {cores} cores"
    )
    print(
        f"{'setting':34} {'score':>6} {'dist-2':>6} {'repeat':>6} {'rep-4':>6} {'tok/call':>8} "
        f"{'cut':>5}  "
        "second message"
    )
    for score, d2, rep, rep4, mean_out, cut, label, sample in rows:
        figures = f"{score:6.3f} {d2:6.3f} {rep:6.1%} {rep4:6.1%} {mean_out:8.0f} {cut:5.0%}"
        print(f"{label:34} {figures}  {sample}")


if __name__ == "__main__":
    main()
