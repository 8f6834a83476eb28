"""What the store costs: recording a message and its call, and reading back / exporting 100k.

1. The recorder path a conversation uses for every turn (`StoreRecorder.call_recorder(...)`,
   its callback with an `Attempt`, then `record_message(doc)`) on the embedded store, timed per
   (message + call) pair: median and p99, target median <= 1 ms. The same run times a bare
   litemongo `insert_one` of a message-sized and a call-sized document, interleaved with the
   pairs, as the baseline, and splits the pair into its repository calls.
2. 100k messages (100 conversations x 1000) bulk-loaded, then read back per conversation
   (`store.messages.for_conversation`), exported to JSONL conversation by conversation, and
   read by a full scan (`db.messages.find()`, whose cost per row grows with N on litemongo and
   mongomock, so by default only its first rows are timed and scaled): rows/s. The same on
   mongomock for comparison (skip with `--no-mongomock`).

    python bench/store_writes.py
    python bench/store_writes.py --pairs 500 --conversations 20 --per-conversation 500

Not a test: it prints figures.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from simulator.domain.clock import now  # noqa: E402
from simulator.domain.ids import new_id  # noqa: E402
from simulator.engine.recorder import StoreRecorder  # noqa: E402
from simulator.llm.base import Completion  # noqa: E402
from simulator.llm.retry import Attempt  # noqa: E402
from simulator.services import experiments  # noqa: E402
from simulator.services import runs as run_service  # noqa: E402
from simulator.store.repositories.messages import SCHEMA_VERSION, message_id  # noqa: E402
from simulator.store.store import Store, open_store_uri  # noqa: E402
from simulator.worlds.chat.engine.agents import build_agents  # noqa: E402
from simulator.worlds.chat.prompting.assembly import agent_system_prompt, starting_message  # noqa: E402
from simulator.worlds.chat.prompting.transcript import Line, agent_messages, day_opening  # noqa: E402
from simulator.worlds.chat.services import runs as conv_service  # noqa: E402

EXPERIMENT = ROOT / "prompts" / "experiments" / "prison.yaml"
USER = "bench"
WORDS = (
    "order",
    "cell",
    "yard",
    "rule",
    "schedule",
    "quiet",
    "request",
    "uniform",
    "keys",
    "warden",
    "privilege",
    "breakfast",
    "count",
    "lights",
    "respect",
    "complaint",
)


def reply_text(i: int, words: int = 60) -> str:
    """A deterministic agent reply of about `words` words (a typical short model answer)."""
    return " ".join(WORDS[(i * 7 + k * 3) % len(WORDS)] for k in range(words)).capitalize() + "."


def quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.3f}"


# -- part 1: one message and its call ------------------------------------------------------------


class Split:
    """Per-call wall times of a few repository methods, patched on one store's instances."""

    def __init__(self) -> None:
        self.times: dict[str, list[float]] = {}

    def wrap(self, owner: Any, attr: str, label: str) -> None:
        original: Callable = getattr(owner, attr)
        bucket = self.times.setdefault(label, [])

        def timed(*a: Any, **kw: Any) -> Any:
            t0 = time.perf_counter()
            try:
                return original(*a, **kw)
            finally:
                bucket.append(time.perf_counter() - t0)

        setattr(owner, attr, timed)


def record_pairs(store: Store, pairs: int, per_conversation: int) -> None:
    asyncio.run(_record_pairs(store, pairs, per_conversation))


async def _record_pairs(store: Store, pairs: int, per_conversation: int) -> None:
    """The writes go through the store's group commit, as in a run; one conversation at a time
    has nothing to gather, so the flush goes out at once and the figure is the write cost."""
    writes = store.group_commit()
    writes._delay_s = 0.0
    view = experiments.import_yaml(store, EXPERIMENT, USER)
    spec = conv_service.build_spec(view, agents="guard=1,prisoner=1", total_messages=20, seed=1)
    experiment = view.experiment
    agents = build_agents(experiment, spec)
    prompts = {
        r.name: agent_system_prompt(experiment, r.name, spec.agents) for r in experiment.roles
    }
    opening = day_opening(starting_message(experiment, spec.agents), [])

    split = Split()
    split.wrap(store.calls, "prompt_document", "calls.prompt_document (hash, prompt doc)")
    split.wrap(writes, "_write_batch", "group commit: one flush (all its groups)")
    bare = store.db["bench_bare"]

    pair_times: list[float] = []
    bare_pair: list[float] = []
    bare_message: list[float] = []
    recorder: StoreRecorder | None = None
    lines: list[Line] = []
    for i in range(pairs):
        index = i % per_conversation
        if index == 0:
            conversation = run_service.create_run(store, view, spec, USER)
            recorder = StoreRecorder(store, conversation["_id"])
            recorder.mark("running")
            lines = []
        assert recorder is not None
        agent = agents[index % len(agents)]
        messages = agent_messages(prompts[agent.role], opening, lines, agent.name)
        params = agent.llm.params.merge(type(agent.llm.params)(seed=1 + index))
        text = reply_text(i)
        completion = Completion(
            text=text,
            tokens_in=400 + 40 * index,
            tokens_out=80,
            latency_s=0.05,
            model_identity={"provider": "bench"},
        )
        attempt = Attempt(
            number=1,
            completion=completion,
            error=None,
            error_kind=None,
            latency_s=0.05,
            started_at=now(),
            waited_s=0.0,
        )
        doc = {
            "day": 1,
            "index": index,
            "seq": index,
            "speaker": agent.name,
            "role": agent.role,
            "text": text,
            "raw_text": text,
            "trimmed": False,
            "cut_at": None,
            "empty": False,
            "speaker_fallback": False,
            "speaker_notes": [],
            "model": agent.llm.model,
            "latency_s": 0.05,
            "tokens_in": completion.tokens_in,
            "tokens_out": 80,
        }

        t0 = time.perf_counter()
        on_attempt = recorder.call_recorder(
            "agent_turn", 1, index, agent.name, agent.llm, messages, params
        )
        await on_attempt.begin(1, attempt.started_at)
        await on_attempt(attempt)
        await recorder.record_message(doc)
        pair_times.append(time.perf_counter() - t0)
        lines.append(Line(agent.name, text))

        # Baseline, interleaved so machine load hits both alike: documents of the same size.
        if i == 0:
            message_doc = store.db.messages.find_one({"conversation_id": recorder.conversation_id})
            call_doc = store.db.calls.find_one({"conversation_id": recorder.conversation_id})
        t0 = time.perf_counter()
        bare.insert_one({**message_doc, "_id": f"bm{i}"})
        t1 = time.perf_counter()
        bare.insert_one({**call_doc, "_id": f"bc{i}"})
        t2 = time.perf_counter()
        bare_message.append(t1 - t0)
        bare_pair.append(t2 - t0)

    med, p99 = statistics.median(pair_times), quantile(pair_times, 0.99)
    bmed = statistics.median(bare_pair)
    msg_size = len(json.dumps(message_doc, default=str))
    call_size = len(json.dumps(call_doc, default=str))
    print(
        f"Record a message and its call (embedded store, {pairs} pairs, conversations of "
        f"{per_conversation} messages; message doc ~{msg_size} B, call doc ~{call_size} B "
        "as JSON)"
    )
    print(f"  {'':52s} {'median ms':>10s} {'p99 ms':>8s}")
    print(
        f"  {'recorder: call_recorder, begin, outcome, message':52s} {ms(med):>10s} "
        f"{ms(p99):>8s}   target median <= 1 ms " + ("OK" if med <= 0.001 else "MISSED")
    )
    for label, values in split.times.items():
        print(
            f"  {'  ' + label:52s} {ms(statistics.median(values)):>10s} "
            f"{ms(quantile(values, 0.99)):>8s}"
        )
    print(
        f"  {'baseline: bare insert_one, message-sized doc':52s} "
        f"{ms(statistics.median(bare_message)):>10s} {ms(quantile(bare_message, 0.99)):>8s}"
    )
    print(
        f"  {'baseline: bare insert_one x2, message + call sized':52s} {ms(bmed):>10s} "
        f"{ms(quantile(bare_pair, 0.99)):>8s}"
    )
    print(f"  {'ratio recorder pair / bare pair (median)':52s} {med / bmed:>10.2f}")


# -- part 2: 100k messages -----------------------------------------------------------------------


def message_docs(conversations: int, per_conversation: int) -> list[list[dict]]:
    """Messages as the recorder stores them, one list per conversation."""
    created = now()
    result = []
    for c in range(conversations):
        cid = f"conv_b{c:05d}"
        docs = []
        for i in range(per_conversation):
            text = reply_text(c * per_conversation + i)
            docs.append(
                {
                    "_id": message_id(cid, 1, i),
                    "schema_version": SCHEMA_VERSION,
                    "conversation_id": cid,
                    "created_at": created,
                    "day": 1,
                    "index": i,
                    "seq": i,
                    "speaker": ("Guard", "Prisoner")[i % 2],
                    "role": ("Guard", "Prisoner")[i % 2],
                    "text": text,
                    "raw_text": text,
                    "trimmed": False,
                    "cut_at": None,
                    "empty": False,
                    "speaker_fallback": False,
                    "speaker_notes": [],
                    "model": "openai:stub",
                    "latency_s": 0.05,
                    "tokens_in": 400 + i,
                    "tokens_out": 80,
                }
            )
        result.append(docs)
    return result


def to_json(value: Any) -> str:
    if isinstance(value, datetime):
        return value.isoformat(timespec="milliseconds") + "Z"
    raise TypeError(f"cannot export {type(value).__name__}")


def bulk(
    store: Store,
    label: str,
    per_conv: list[list[dict]],
    tmp: Path,
    chunk: int,
    sample: int,
    scan_sample: int,
) -> None:
    """Load, read back per conversation, export per conversation, then a full scan.

    `sample` > 0 times only that many conversations (spread over the set) and scales up.
    `scan_sample` > 0 times only the first rows of the full scan and scales up: in the
    (vendored) mongomock Cursor every `__next__` copies the whole result list
    (`self._results[self._skip:]`), so a full scan costs N x N and each row costs the same.
    """
    total = sum(len(d) for d in per_conv)
    col = store.db.messages
    t0 = time.perf_counter()
    for docs in per_conv:
        for start in range(0, len(docs), chunk):
            col.insert_many([dict(d) for d in docs[start : start + chunk]])
    load = time.perf_counter() - t0

    ids = [docs[0]["conversation_id"] for docs in per_conv]
    probe = ids if sample <= 0 else ids[:: max(1, len(ids) // sample)][:sample]
    scale = len(ids) / len(probe)
    t0 = time.perf_counter()
    rows = 0
    for cid in probe:
        got = store.messages.for_conversation(cid)
        assert got and got[0]["seq"] == 0, cid
        rows += len(got)
    read = (time.perf_counter() - t0) * scale
    rows_scaled = rows * scale

    out = tmp / f"{label.split()[0]}-messages.jsonl"
    t0 = time.perf_counter()
    with out.open("w", encoding="utf-8") as f:
        for cid in probe:
            for doc in store.messages.for_conversation(cid):
                f.write(json.dumps(doc, default=to_json, ensure_ascii=False) + "\n")
    export = (time.perf_counter() - t0) * scale
    size = out.stat().st_size * scale

    # The first row pays for loading every document; each later row pays a copy of the list.
    limit = total if scan_sample <= 0 else min(total, scan_sample)
    cursor = col.find()
    t0 = time.perf_counter()
    next(cursor)
    t1 = time.perf_counter()
    scanned = 1
    for _ in cursor:
        scanned += 1
        if scanned >= limit:
            break
    t2 = time.perf_counter()
    scan = (t1 - t0) + (t2 - t1) * (total - 1) / max(1, scanned - 1)
    scan_note = (
        ""
        if scanned == total
        else f"  (load {t1 - t0:.2f} s + first {scanned} rows timed, scaled: cost/row ~ N)"
    )

    note = "" if scale == 1 else f"  ({len(probe)} of {len(ids)} conversations timed, scaled)"
    print(f"  {label}")
    print(
        f"    {'bulk load (insert_many, chunks of ' + str(chunk) + ')':46s} {load:8.2f} s "
        f"{total / load:10.0f} rows/s"
    )
    print(
        f"    {'read back: messages.for_conversation x ' + str(len(ids)):46s} {read:8.2f} s "
        f"{rows_scaled / read:10.0f} rows/s{note}"
    )
    print(
        f"    {'export JSONL, conversation by conversation':46s} {export:8.2f} s "
        f"{rows_scaled / export:10.0f} rows/s  ({size / 1e6:.1f} MB){note}"
    )
    print(
        f"    {'read back: full scan db.messages.find()':46s} {scan:8.2f} s "
        f"{total / scan:10.0f} rows/s{scan_note}"
    )


def main(argv: list[str] | None = None) -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--pairs", type=int, default=2000, help="message+call pairs to time")
    p.add_argument(
        "--pair-conversation",
        type=int,
        default=20,
        help="messages per conversation while timing pairs (prompts grow with it)",
    )
    p.add_argument("--conversations", type=int, default=100, help="conversations in the bulk set")
    p.add_argument(
        "--per-conversation",
        type=int,
        default=1000,
        help="messages per conversation in the bulk set",
    )
    p.add_argument("--chunk", type=int, default=1000, help="insert_many chunk size for loading")
    p.add_argument("--no-mongomock", action="store_true", help="skip the mongomock comparison")
    p.add_argument(
        "--mongomock-sample",
        type=int,
        default=10,
        help="conversations read back one by one on mongomock (scaled up; 0: all)",
    )
    p.add_argument(
        "--scan-sample",
        type=int,
        default=5000,
        help="rows of the full scan to time (scaled up; 0: the whole scan, which "
        "takes minutes at 100k because the scan is quadratic)",
    )
    args = p.parse_args(argv)

    with tempfile.TemporaryDirectory(prefix="sim-bench-store-") as tmp_name:
        tmp = Path(tmp_name)
        store = open_store_uri(str(tmp / "pairs"))
        record_pairs(store, args.pairs, args.pair_conversation)
        store.close()

        per_conv = message_docs(args.conversations, args.per_conversation)
        total = args.conversations * args.per_conversation
        print(
            f"\n{total} messages ({args.conversations} conversations x "
            f"{args.per_conversation}), {os.cpu_count()} CPUs"
        )
        store = open_store_uri(str(tmp / "bulk"))
        bulk(
            store,
            "embedded store (litemongo, SQLite)",
            per_conv,
            tmp,
            args.chunk,
            0,
            args.scan_sample,
        )
        store.close()
        if not args.no_mongomock:
            store = open_store_uri(f"mongomock://bench-{new_id('x')}")
            bulk(
                store,
                "mongomock (in memory)",
                per_conv,
                tmp,
                args.chunk,
                args.mongomock_sample,
                args.scan_sample,
            )
            store.close()


if __name__ == "__main__":
    main()
