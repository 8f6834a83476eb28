"""`moderation:MODEL`: the OpenAI moderation API on every message (e.g. omni-moderation-latest).

Why: the prison paper (arXiv 2410.07109) measured harassment and violence with this API, so a
researcher reproducing it needs the same numbers beside each message. The messages' texts go in
batches to `POST {base}/moderations` (OPENAI_BASE_URL, else OPENAI_API_BASE, else the OpenAI
API; key OPENAI_API_KEY, sent only as the Authorization header, never logged or stored). Each
message gets `flagged` (1/0 in measures) and one value per category score, named as OpenAI
names them with `/` and `-` turned into `_` (`harassment`, `harassment_threatening`,
`violence`, `self_harm_intent`, ...); the categories' booleans and the model that answered go
in the details. A failed request makes every message of that batch a failed score: reported,
not stored, tried again on the next run.
"""

from __future__ import annotations

import os
import re
from typing import Any

import httpx

from simulator.analysis.scorers.base import ScoreResult, TargetKind, failed
from simulator.errors import UserError
from simulator.llm.base import FatalBackendError
from simulator.llm.endpoint_url import endpoint
from simulator.llm.transport import classify, describe, preflight_timeout_s
from simulator.settings import openai_base_url

OFFICIAL_BASE_URL = "https://api.openai.com/v1"
BATCH_SIZE = 32  # inputs per request
TIMEOUT_S = 60.0
_NAME = re.compile(r"[/\-\s]+")
_MODEL = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._:\-]{0,99}$")


def field_name(category: str) -> str:
    """`harassment/threatening` -> `harassment_threatening`, `self-harm` -> `self_harm`."""
    return _NAME.sub("_", category.strip()).lower()


class ModerationScorer:
    """One moderation model; `name` is "moderation:<model>"."""

    target_kind: TargetKind = "message"

    def __init__(self, model: str, base_url: str, api_key: str | None) -> None:
        self.model = model
        self.name = f"moderation:{model}"
        try:
            where = endpoint(base_url, "OPENAI_BASE_URL")
        except FatalBackendError as exc:
            raise UserError(str(exc), field="OPENAI_BASE_URL") from None
        self.base_url = where.shown  # shown in messages: a password or key reads ***
        self.url = where.shown_at("/moderations")
        self._post_url = where.url.rstrip("/") + "/moderations"  # the query goes as params
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.AsyncClient(
            headers=headers, timeout=TIMEOUT_S, params=where.query or None
        )

    def __repr__(self) -> str:  # never show the key
        return f"ModerationScorer(model={self.model!r}, url={self.url!r})"

    async def aclose(self) -> None:
        await self._client.aclose()

    async def preflight(self) -> None:
        """One tiny request before anything is scored: a wrong key, URL or model fails once."""
        try:
            await self._moderate(["ok"], timeout=preflight_timeout_s())
        except ModerationError as exc:
            raise UserError(str(exc), field="--scorer", fix=exc.fix) from None

    async def score(
        self, conversation: dict, messages: list[dict], summaries: list[dict]
    ) -> list[ScoreResult]:
        results: list[ScoreResult] = []
        for start in range(0, len(messages), BATCH_SIZE):
            batch = messages[start : start + BATCH_SIZE]
            try:
                answers, model = await self._moderate([m.get("text") or "" for m in batch])
            except ModerationError as exc:
                results.extend(failed(m["_id"], str(exc), model=self.model) for m in batch)
                continue
            for message, answer in zip(batch, answers, strict=True):
                results.append(self._result(message["_id"], answer, model))
        return results

    def _result(self, target: str, answer: dict, model: str) -> ScoreResult:
        scores = answer.get("category_scores") or {}
        values: dict[str, Any] = {"flagged": bool(answer.get("flagged"))}
        for category, value in sorted(scores.items()):
            if isinstance(value, int | float) and not isinstance(value, bool):
                values[field_name(category)] = round(float(value), 6)
        categories = answer.get("categories") or {}
        details = {
            "model": model,
            "categories": {field_name(k): bool(v) for k, v in sorted(categories.items())},
        }
        return target, values, details

    async def _moderate(
        self, texts: list[str], timeout: float | None = None
    ) -> tuple[list[dict], str]:
        try:
            response = await self._client.post(
                self._post_url,
                json={"model": self.model, "input": texts},
                timeout=timeout or TIMEOUT_S,
            )
        except httpx.HTTPError as exc:
            kind = classify(exc)
            raise ModerationError(
                describe(kind, self.url, "OPENAI_BASE_URL", timeout or TIMEOUT_S),
                "check OPENAI_BASE_URL (or OPENAI_API_BASE) and that the server is running",
            ) from None
        if response.status_code != 200:
            raise self._http_error(response)
        try:
            body = response.json()
            results = body["results"]
        except (ValueError, KeyError, TypeError):
            raise ModerationError(
                f"{self.url} answered with something that is not a moderation result",
                "point OPENAI_BASE_URL at a server with the OpenAI moderation API",
            ) from None
        if not isinstance(results, list) or len(results) != len(texts):
            raise ModerationError(
                f"{self.url} returned {len(results) if isinstance(results, list) else 'no'} "
                f"result(s) for {len(texts)} text(s)",
                "point OPENAI_BASE_URL at a server with the OpenAI moderation API",
            )
        return [r if isinstance(r, dict) else {} for r in results], str(
            body.get("model") or self.model
        )

    def _http_error(self, response: httpx.Response) -> ModerationError:
        status = response.status_code
        if status == 401:
            return ModerationError(
                f"{self.base_url} rejected the API key (HTTP 401)",
                "set OPENAI_API_KEY to a valid key",
            )
        if status == 404:
            return ModerationError(
                f"{self.url} or the model {self.model!r} does not exist (HTTP 404)",
                "check the model (e.g. moderation:omni-moderation-latest) and OPENAI_BASE_URL",
            )
        if status == 429:
            return ModerationError(
                f"{self.base_url} is rate limiting moderation requests (HTTP 429)",
                "run the same command again later; what was scored stays stored",
            )
        return ModerationError(
            f"{self.url} answered HTTP {status}", "run the same command again later"
        )


class ModerationError(Exception):
    """A request that gave no usable answer; `fix` says what to do. Never holds the key."""

    def __init__(self, message: str, fix: str) -> None:
        super().__init__(message)
        self.fix = fix


def create(argument: str, **_: Any) -> ModerationScorer:
    """Registry factory for `moderation:MODEL`; reads the OpenAI settings, calls nothing."""
    model = argument.strip()
    if not _MODEL.match(model):
        raise UserError(
            f"{model!r} is not a moderation model name",
            field="--scorer",
            fix="write e.g. moderation:omni-moderation-latest",
        )
    base = (openai_base_url() or OFFICIAL_BASE_URL).rstrip("/")
    key = os.environ.get("OPENAI_API_KEY") or None
    if key is None and httpx.URL(base).host == "api.openai.com":
        raise UserError(
            "the moderation scorer needs an OpenAI API key",
            field="OPENAI_API_KEY",
            fix="export OPENAI_API_KEY (or put it in .env), or set OPENAI_BASE_URL to an "
            "OpenAI-compatible server with a /moderations endpoint",
        )
    return ModerationScorer(model, base, key)
