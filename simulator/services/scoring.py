"""Score the finished conversations of an experiment, a sweep or one conversation.

Why it is safe to re-run at any time (like sweeps): a score is one document per (scorer,
target, user) and targets the same user already scored are skipped before any model is called;
another user's scores never make this user's scoring skip (each researcher judges for
themselves). Failed judgements
(values with an `"error"` key) are reported and logged but not stored, so the next run tries
them again. Only `done` conversations are scored. Database calls stay on the event-loop thread;
scorers may use worker threads for their own computation.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from simulator.analysis.scorers import Scorer, create_scorer
from simulator.analysis.scorers.base import is_failed
from simulator.errors import UserError
from simulator.llm.access import LLMAccess
from simulator.store.store import Store

log = logging.getLogger(__name__)
DEFAULT_CONCURRENCY = 8  # conversations in flight; each backend's pool still caps its calls
ProgressFn = Callable[[int, int, dict], Any]  # (conversations done, total, counts so far)


def resolve_conversations(store: Store, target_id: str) -> list[dict]:
    """Every conversation a target id names (any status), each with its experiment snapshot."""
    target = target_id.strip()
    if target.startswith("conv_"):
        docs = [store.conversations.get(target)]
    elif target.startswith("sweep_"):
        store.sweeps.get(target)
        docs = store.sweeps.conversations(target)
    elif target.startswith("exp_"):
        store.experiments.get(target)
        docs = store.conversations.list(experiment_id=target)
    else:
        raise UserError(
            f"{target_id!r} is not an experiment, sweep or conversation id",
            field="TARGET",
            fix="give an id starting with exp_, sweep_ or conv_ (see 'llm-sim sweep list')",
        )
    snapshots: dict[str, dict] = {}
    for doc in docs:
        sweep_id = doc.get("sweep_id")
        if "experiment" not in doc and sweep_id:
            if sweep_id not in snapshots:
                snapshots[sweep_id] = store.sweeps.get(sweep_id)["experiment"]
            doc["experiment"] = snapshots[sweep_id]
    return docs


async def score_target(
    store: Store,
    target_id: str,
    scorer_spec: str,
    *,
    llm: str | None,
    user: str | None = None,
    llms: LLMAccess | None = None,
    on_progress: ProgressFn | None = None,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> dict:
    """Score what `user` has not scored yet; returns counts {scored, skipped, failed} and more.

    The commands always pass the acting user; None (library use) writes scores naming no user.
    """
    docs = resolve_conversations(store, target_id)
    # an imported conversation is a whole transcript: its "failed" is its labellers' verdict
    # (the paper's conversational failures), which a judge is there to give again
    done_docs = [d for d in docs if d.get("status") == "done" or d.get("imported")]
    own_llms = llms is None
    access = llms or LLMAccess()
    try:
        scorer = create_scorer(scorer_spec, llm=llm, llms=access)
        try:
            preflight = getattr(scorer, "preflight", None)
            if preflight is not None and done_docs:
                await preflight()
            counts = await _score_all(store, scorer, done_docs, user, on_progress, concurrency)
        finally:
            closer = getattr(scorer, "aclose", None)  # a scorer's own HTTP client
            if closer is not None:
                await closer()
    finally:
        if own_llms:
            await access.aclose()
    return {
        "target": target_id,
        "scorer": scorer.name,
        "scored_by": user,
        "target_kind": scorer.target_kind,
        "conversations": len(done_docs),
        "not_done": len(docs) - len(done_docs),
        **counts,
    }


async def _score_all(
    store: Store,
    scorer: Scorer,
    docs: list[dict],
    user: str | None,
    on_progress: ProgressFn | None,
    concurrency: int,
) -> dict:
    already = store.scores.scored_ids(scorer.name, [d["_id"] for d in docs], user)
    counts: dict[str, Any] = {"scored": 0, "skipped": 0, "failed": 0, "failures": []}
    finished = 0
    gate = asyncio.Semaphore(max(1, concurrency))

    async def one(doc: dict) -> None:
        nonlocal finished
        async with gate:
            await _score_conversation(store, scorer, doc, user, already, counts)
        finished += 1
        if on_progress is not None:
            on_progress(finished, len(docs), counts)

    await asyncio.gather(*(one(doc) for doc in docs))
    return counts


async def _score_conversation(
    store: Store, scorer: Scorer, doc: dict, user: str | None, already: set[str], counts: dict
) -> None:
    conversation_id = doc["_id"]
    if scorer.target_kind == "conversation" and conversation_id in already:
        counts["skipped"] += 1
        return
    messages = store.messages.for_conversation(conversation_id)
    if scorer.target_kind == "message":
        pending = [m for m in messages if m["_id"] not in already]
        counts["skipped"] += len(messages) - len(pending)
        if not pending:
            return
        messages = pending
    summaries = store.conversations.summaries(conversation_id)
    results = await scorer.score(doc, messages, summaries)
    for target, values, details in results:
        if is_failed((target, values, details)):
            counts["failed"] += 1
            counts["failures"].append(
                {"target_id": target, "conversation_id": conversation_id, "error": values["error"]}
            )
            log.warning("%s could not score %s: %s", scorer.name, target, values["error"])
            continue
        added = store.scores.add(
            scorer.name,
            scorer.target_kind,
            target,
            values,
            conversation_id=conversation_id,
            scored_by=user,
            sweep_id=doc.get("sweep_id"),
            details=details,
        )
        counts["scored" if added else "skipped"] += 1
