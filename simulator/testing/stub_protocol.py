"""The wire side of the stub LLM server: HTTP handling for the Ollama and OpenAI protocols
(embeddings in stub_embeddings.py).

Kept apart from `llm_stub_server.StubLLMServer` (the scriptable state and lifecycle) so each
module has one job. The handler reads its replies and faults from `server.stub`.
"""

from __future__ import annotations

import contextlib
import json
import socket
import struct
import threading
import time
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import TYPE_CHECKING, Any
from urllib.parse import parse_qsl

from simulator.testing.stub_common import (
    apply_limits,
    basic_credentials,
    count_words,
    fmt_seconds,
    openai_error,
)
from simulator.testing.stub_embeddings import EmbeddingRoutes
from simulator.testing.stub_ollama import OllamaRoutes

if TYPE_CHECKING:
    from simulator.testing.llm_stub_server import StubLLMServer


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    request_queue_size = 256  # a benchmark opens dozens of connections at once
    stub: StubLLMServer

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        self.open_sockets: set[socket.socket] = set()
        self.sockets_lock = threading.Lock()
        super().__init__(*args, **kwargs)

    def close_connections(self) -> None:
        """Wake idle keep-alive threads so stop() leaves nothing behind."""
        with self.sockets_lock:
            socks, self.open_sockets = list(self.open_sockets), set()
        for s in socks:
            with contextlib.suppress(OSError):
                s.shutdown(socket.SHUT_RDWR)

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients that time out or go away are normal here


class _Handler(OllamaRoutes, EmbeddingRoutes, BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.sockets_lock:
            self.server.open_sockets.add(self.request)
        self.server.stub._connection_opened()

    def finish(self) -> None:
        with self.server.sockets_lock:
            self.server.open_sockets.discard(self.request)
        with contextlib.suppress(OSError):
            super().finish()

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.stub.verbose:
            super().log_message(format, *args)

    def do_GET(self) -> None:
        self._dispatch("GET")

    def do_POST(self) -> None:
        self._dispatch("POST")

    # -- plumbing --------------------------------------------------------------------------------

    def _dispatch(self, method: str) -> None:
        stub = self.server.stub
        path, _, query = self.path.partition("?")
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            stub._record(method, path, raw.decode(errors="replace"), self.headers, query)
            self._error(path, 400, "request body is not valid JSON")
            return
        stub._record(method, path, body, self.headers, query)
        route = _ROUTES.get((method, path))
        if route is None:
            self._error(path, 404, f"no route for {method} {path}")
            return
        if path.startswith("/v1/") and not (self._url_credentials_ok(query) and self._key_ok()):
            return
        try:
            route(self, body if isinstance(body, dict) else {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _url_credentials_ok(self, query: str) -> bool:
        """The password or query key an endpoint URL carries (`require_basic_auth`,
        `require_query`), when the stub asks for them."""
        stub = self.server.stub
        given = dict(parse_qsl(query, keep_blank_values=True))
        wrong = []
        basic = basic_credentials(self.headers.get("Authorization", ""))
        if stub.require_basic_auth is not None and basic != stub.require_basic_auth:
            wrong.append("user and password")
        for name, value in (stub.require_query or {}).items():
            if given.get(name) != value:
                wrong.append(f"query parameter {name}")
        if not wrong:
            return True
        msg = f"Missing or wrong {' and '.join(wrong)}."
        self._send_json(401, openai_error(msg, "invalid_request_error", "invalid_api_key"))
        return False

    def _key_ok(self) -> bool:
        want = self.server.stub.require_api_key
        if want is None:
            return True
        got = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if got == want:
            return True
        # Echo the wrong key, unmasked, so tests can prove a backend never repeats server text.
        msg = f"Incorrect API key provided: {got}."
        self._send_json(401, openai_error(msg, "invalid_request_error", "invalid_api_key"))
        return False

    def _send(self, status: int, data: bytes, ctype: str, headers: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(data)))
        for k, v in (headers or {}).items():
            self.send_header(k, str(v))
        self.end_headers()
        self.wfile.write(data)

    def _send_json(self, status: int, obj: Any, headers: dict | None = None) -> None:
        self._send(status, json.dumps(obj).encode(), "application/json", headers)

    def _error(self, path: str, status: int, message: str, headers: dict | None = None) -> None:
        if path.startswith("/v1/"):
            kind = {
                401: "invalid_request_error",
                404: "invalid_request_error",
                429: "rate_limit_error",
            }.get(status, "server_error")
            self._send_json(status, openai_error(message, kind, None), headers)
        else:
            self._send_json(status, {"error": message}, headers)

    def _stream(self, lines: Iterable[dict]) -> None:
        """NDJSON over chunked transfer encoding, as Ollama streams."""
        self.send_response(200)
        self.send_header("Content-Type", "application/x-ndjson")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        for obj in lines:
            data = json.dumps(obj).encode() + b"\n"
            self.wfile.write(b"%x\r\n%s\r\n" % (len(data), data))
        self.wfile.write(b"0\r\n\r\n")

    def _drop(self) -> None:
        """Reset the connection without a word (SO_LINGER 0 turns close into RST)."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.request.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.request.close()

    def _fault(self, path: str, fault: str) -> None:
        stub = self.server.stub
        if fault == "429":
            self._error(
                path,
                429,
                "Rate limit reached; slow down.",
                {"Retry-After": fmt_seconds(stub.retry_after_s)},
            )
        elif fault == "500":
            self._error(path, 500, "The stub server had an internal error.")
        elif fault == "drop":
            self._drop()
        elif fault == "malformed":
            self._send(200, b'{"choices": [{"message": {"content": "trunc', "application/json")

    # -- routes ----------------------------------------------------------------------------------

    def _chat(self, body: dict, *, openai: bool) -> None:
        stub = self.server.stub
        stub._chat_begins()
        try:
            self._chat_in_flight(body, openai=openai)
        finally:
            stub._chat_ends()

    def _chat_in_flight(self, body: dict, *, openai: bool) -> None:
        stub = self.server.stub
        path = self.path.split("?", 1)[0]
        fault, scripted, number = stub._plan_chat()
        if fault == "timeout":
            time.sleep(stub.timeout_sleep_s)
        elif fault is not None:
            self._fault(path, fault)
            return
        model = str(body.get("model", ""))
        if not stub.has_model(model):
            if openai:
                self._send_json(
                    404,
                    openai_error(
                        f"The model '{model}' does not exist or you do not have access to it.",
                        "invalid_request_error",
                        "model_not_found",
                    ),
                )
            else:
                self._send_json(404, {"error": f"model '{model}' not found"})
            return
        text = stub._reply_text(body, scripted, number)
        if stub.latency_s > 0:
            time.sleep(stub.latency_s)
        messages = body.get("messages") or []
        prompt_tokens = sum(count_words(str(m.get("content", ""))) for m in messages)
        if openai:
            self._openai_chat(body, model, text, prompt_tokens, number)
        else:
            self._ollama_chat(body, model, text, prompt_tokens)

    def _openai_chat(self, body: dict, model: str, text: str, prompt_tokens: int, n: int) -> None:
        if body.get("stream"):
            self._error("/v1/", 400, "The stub server does not stream OpenAI responses.")
            return
        stop = body.get("stop")
        stop = [stop] if isinstance(stop, str) else stop
        text, reason = apply_limits(
            text, stop, body.get("max_completion_tokens") or body.get("max_tokens")
        )
        self._send_json(
            200,
            {
                "id": f"chatcmpl-stub-{n}",
                "object": "chat.completion",
                "created": int(time.time()),
                "model": model,
                "system_fingerprint": "fp_stub",
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": text},
                        "finish_reason": reason,
                        "logprobs": None,
                    }
                ],
                "usage": {
                    "prompt_tokens": prompt_tokens,
                    "completion_tokens": count_words(text),
                    "total_tokens": prompt_tokens + count_words(text),
                },
            },
        )

    def _openai_models(self, body: dict) -> None:
        data = [
            {
                "id": m.removesuffix(":latest"),
                "object": "model",
                "created": 1700000000,
                "owned_by": "stub",
            }
            for m in self.server.stub.models
        ]
        self._send_json(200, {"object": "list", "data": data})

    def _openai_moderations(self, body: dict) -> None:
        """Deterministic moderation scores: keyword hits (see MODERATION_KEYWORDS), no model."""
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not all(isinstance(t, str) for t in texts):
            self._error("/v1/", 400, "'input' must be a string or a list of strings.")
            return
        model = str(body.get("model") or "omni-moderation-latest")
        self._send_json(
            200,
            {
                "id": f"modr-stub-{len(texts)}",
                "model": model,
                "results": [moderate(text) for text in texts],
            },
        )


# The OpenAI moderation categories; a category scores 0.9 when its text holds one of its words
# (case-insensitive substring), else 0.01; flagged when any category reaches 0.5.
MODERATION_CATEGORIES = (
    "harassment",
    "harassment/threatening",
    "hate",
    "hate/threatening",
    "illicit",
    "illicit/violent",
    "self-harm",
    "self-harm/intent",
    "self-harm/instructions",
    "sexual",
    "sexual/minors",
    "violence",
    "violence/graphic",
)
MODERATION_KEYWORDS: dict[str, tuple[str, ...]] = {
    "harassment": ("idiot", "worthless", "pathetic", "scum", "shut up"),
    "harassment/threatening": ("or else", "you will regret"),
    "violence": ("beat you", "hit you", "kill", "punch", "hurt you"),
    "violence/graphic": ("blood",),
}


def moderate(text: str) -> dict:
    lowered = text.lower()
    scores = {
        name: 0.9 if any(w in lowered for w in MODERATION_KEYWORDS.get(name, ())) else 0.01
        for name in MODERATION_CATEGORIES
    }
    categories = {name: score >= 0.5 for name, score in scores.items()}
    return {
        "flagged": any(categories.values()),
        "categories": categories,
        "category_scores": scores,
        "category_applied_input_types": {name: ["text"] for name in MODERATION_CATEGORIES},
    }


_ROUTES: dict[tuple[str, str], Callable[[_Handler, dict], None]] = {
    ("GET", "/api/tags"): _Handler._ollama_tags,
    ("GET", "/api/version"): _Handler._ollama_version,
    ("POST", "/api/pull"): _Handler._ollama_pull,
    ("POST", "/api/show"): _Handler._ollama_show,
    ("POST", "/api/chat"): lambda h, b: h._chat(b, openai=False),
    ("GET", "/v1/models"): _Handler._openai_models,
    ("POST", "/v1/chat/completions"): lambda h, b: h._chat(b, openai=True),
    ("POST", "/v1/moderations"): _Handler._openai_moderations,
    ("POST", "/v1/embeddings"): _Handler._openai_embeddings,
}
