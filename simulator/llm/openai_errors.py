"""The openai client's errors in the engine's vocabulary: fatal (fix something first),
transient (retry) or rate limited (wait as told); each message names the URL and the fix."""

from __future__ import annotations

from collections.abc import Callable

from simulator.llm.base import FatalBackendError, RateLimitedError, TransientBackendError
from simulator.llm.retry import parse_retry_after
from simulator.llm.transport import classify, describe


def map_openai_error(
    exc: Exception, where: str, model: str, timeout: float, scrub: Callable[[str], str]
) -> Exception:
    """The engine's error for the openai client's `exc` at `where` (a URL safe to show);
    `scrub` keeps the key out of server text."""
    import openai

    if isinstance(exc, openai.AuthenticationError):
        return FatalBackendError(
            f"{where} rejected the API key (HTTP 401); set OPENAI_API_KEY to a valid key."
        )
    if isinstance(exc, openai.PermissionDeniedError):
        return FatalBackendError(
            f"{where} refused access to model '{model}' (HTTP 403); check that the "
            "OPENAI_API_KEY project may use it."
        )
    if isinstance(exc, openai.NotFoundError):
        return FatalBackendError(
            f"Model '{model}' was not found at {where} (HTTP 404); check the model "
            "name or OPENAI_BASE_URL."
        )
    if isinstance(exc, openai.RateLimitError):
        if getattr(exc, "code", None) == "insufficient_quota":
            return FatalBackendError(
                f"{where} says the account behind OPENAI_API_KEY has no quota left (HTTP 429)."
            )
        return RateLimitedError(
            f"{where} is rate limiting requests (HTTP 429).",
            retry_after=parse_retry_after(exc.response.headers),
        )
    if isinstance(exc, openai.BadRequestError | openai.UnprocessableEntityError):
        return FatalBackendError(
            f"{where} rejected the request for model '{model}' "
            f"(HTTP {exc.status_code}): {scrub(exc.message)}"
        )
    if isinstance(exc, openai.APIConnectionError):  # APITimeoutError included
        return TransientBackendError(describe(classify(exc), where, "OPENAI_BASE_URL", timeout))
    if isinstance(exc, openai.APIResponseValidationError):
        return TransientBackendError(f"{where} sent a malformed chat completion.")
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        if status >= 500 or status in (408, 409):
            return TransientBackendError(f"{where} answered with server error HTTP {status}.")
        return FatalBackendError(
            f"{where} refused the request (HTTP {status}): {scrub(exc.message)}"
        )
    return TransientBackendError(f"Call to {where} failed ({type(exc).__name__}).")
