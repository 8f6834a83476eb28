"""`classifier:MODEL_PATH_OR_ID`: a Hugging Face text-classification pipeline on every message.

Why a pipeline: any sequence classifier the user names (a toxicity or sentiment model, a local
fine-tune) works unchanged, with its own labels. Each message gets `{"label", "score"}` (the top
label) and every label's score in the details. transformers is an optional extra (`.[hf]`) and is
imported only here; with HF_HUB_OFFLINE=1 or a local path nothing is downloaded. The model is
loaded in `preflight` (before anything is scored) and runs in a worker thread so the event loop,
which owns the database, stays free.
"""

from __future__ import annotations

import asyncio
from typing import Any

from simulator.analysis.scorers.base import ScoreResult, TargetKind
from simulator.errors import UserError

INSTALL_HINT = "pip install -e '.[hf]'"
BATCH_SIZE = 16


class MessageClassifier:
    """One pipeline; `name` is "classifier:<model as given>"."""

    target_kind: TargetKind = "message"

    def __init__(self, model: str, *, batch_size: int = BATCH_SIZE) -> None:
        self.model = model
        self.name = f"classifier:{model}"
        self.batch_size = batch_size
        self._pipeline: Any = None
        self._lock = asyncio.Lock()  # a fast tokenizer must not be used by two threads at once

    async def preflight(self) -> None:
        if self._pipeline is None:
            self._pipeline = await asyncio.to_thread(load_pipeline, self.model)

    async def score(
        self, conversation: dict, messages: list[dict], summaries: list[dict]
    ) -> list[ScoreResult]:
        if not messages:
            return []
        await self.preflight()
        texts = [m.get("text") or "" for m in messages]
        async with self._lock:
            outputs = await asyncio.to_thread(self._classify, texts)
        results: list[ScoreResult] = []
        for message, labels in zip(messages, outputs, strict=True):
            ranked = sorted(labels, key=lambda item: item["score"], reverse=True)
            top = ranked[0]
            values = {"label": top["label"], "score": round(float(top["score"]), 6)}
            details = {
                "model": self.model,
                "scores": {item["label"]: round(float(item["score"]), 6) for item in ranked},
            }
            results.append((message["_id"], values, details))
        return results

    def _classify(self, texts: list[str]) -> list[list[dict]]:
        out = self._pipeline(texts, top_k=None, truncation=True, batch_size=self.batch_size)
        # one text may come back as a bare dict list or, with top_k=None, as a list of lists
        return [item if isinstance(item, list) else [item] for item in out]


def load_pipeline(model: str) -> Any:
    """The text-classification pipeline, on the GPU when there is one."""
    try:
        import torch
        from transformers import pipeline
    except ImportError as exc:
        raise UserError(
            f"the classifier scorer needs '{exc.name or 'transformers'}', which is not installed",
            field="--scorer",
            fix=f"install it with: {INSTALL_HINT}",
        ) from None
    device = 0 if torch.cuda.is_available() else -1
    try:
        return pipeline("text-classification", model=model, tokenizer=model, device=device)
    except (OSError, ValueError) as exc:
        raise UserError(
            f"could not load the text-classification model {model!r}: {exc}",
            field="--scorer",
            fix="give a local folder holding a sequence-classification model and its tokenizer, "
            "or a hub id already in the Hugging Face cache (nothing is downloaded offline)",
        ) from None


def create(argument: str, **_: Any) -> MessageClassifier:
    """Registry factory for `classifier:MODEL`; checks the extra is installed, loads nothing."""
    import importlib.util

    for module in ("torch", "transformers"):
        if importlib.util.find_spec(module) is None:
            raise UserError(
                f"the classifier scorer needs '{module}', which is not installed",
                field="--scorer",
                fix=f"install it with: {INSTALL_HINT}",
            )
    return MessageClassifier(argument)
