"""A tiny stdlib HTTP server that speaks the Ollama and OpenAI chat protocols.

Why: the real client libraries (``ollama``, ``openai``) should be exercised over loopback in tests
and benchmarks without a model, and a user should be able to try the tool with no model at all.
Replies are scripted, computed, or a deterministic default; faults (429, 500, slow answers,
dropped connections, malformed JSON) can be injected for the next requests or at random.

Run it by hand: ``python -m simulator.testing.llm_stub_server --port 11434 --latency 0.05``.
"""

from __future__ import annotations

import argparse
import contextlib
import hashlib
import json
import random
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

FAULT_KINDS = ("429", "500", "timeout", "drop", "malformed")
RANDOM_FAULT_KINDS = ("429", "500", "drop", "malformed")  # "timeout" only when asked for
CHAT_PATHS = ("/api/chat", "/v1/chat/completions")
DEFAULT_MODELS = ("stub",)
_HIDDEN_HEADERS = frozenset({"authorization", "x-api-key", "api-key"})


@dataclass(frozen=True)
class RecordedRequest:
    """One request as the server saw it; credentials are never recorded."""

    path: str
    body: Any
    headers: dict[str, str]
    method: str = "GET"
    received_at: float = 0.0  # time.monotonic()


def model_tag(name: str) -> str:
    """Ollama reports every model with a tag; ``llama3`` and ``llama3:latest`` are one model."""
    return name if ":" in name else f"{name}:latest"


def fake_digest(name: str) -> str:
    return hashlib.sha256(model_tag(name).encode()).hexdigest()


def count_words(text: str) -> int:
    return len(text.split())


def apply_limits(text: str, stop: Iterable[str] | None, max_tokens: int | None) -> tuple[str, str]:
    """Honour stop strings and a word budget the way a model would; returns (text, reason)."""
    for s in stop or ():
        if s and s in text:
            text = text[: text.index(s)]
    words = text.split(" ")
    if max_tokens is not None and len(words) > max_tokens:
        return " ".join(words[:max_tokens]), "length"
    return text, "stop"


class StubLLMServer:
    """Loopback server for tests; every knob may be changed while it runs."""

    def __init__(
        self,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        latency_s: float = 0.0,
        models: Iterable[str] = DEFAULT_MODELS,
        verbose: bool = False,
    ) -> None:
        self._host = host
        self._port = port
        self._lock = threading.Lock()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._models: list[str] = [model_tag(m) for m in models]
        self._replies: deque[str] = deque()
        self._faults: deque[str] = deque()
        self._requests: list[RecordedRequest] = []
        self._rng = random.Random(0)
        self._fault_seed = 0
        self._counter = 0
        self.verbose = verbose
        self.latency_s = latency_s
        self.reply_fn: Callable[[dict], str] | None = None
        self.fault_rate = 0.0
        self.fault_kinds: tuple[str, ...] = RANDOM_FAULT_KINDS
        self.retry_after_s: float = 0
        self.timeout_sleep_s = 5.0
        self.require_api_key: str | None = None
        self.pullable: set[str] | None = None  # None: any name can be pulled

    # -- lifecycle -------------------------------------------------------------------------------

    def start(self) -> StubLLMServer:
        if self._server is not None:
            return self
        self._server = _Server((self._host, self._port), _Handler)
        self._server.stub = self
        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.shutdown()
        server.server_close()
        server.close_connections()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def __enter__(self) -> StubLLMServer:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    @property
    def port(self) -> int:
        if self._server is None:
            raise RuntimeError("StubLLMServer is not running; call start() first")
        return self._server.server_address[1]

    @property
    def url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def openai_base_url(self) -> str:
        return self.url + "/v1"

    # -- configuration ---------------------------------------------------------------------------

    @property
    def models(self) -> list[str]:
        with self._lock:
            return list(self._models)

    @models.setter
    def models(self, names: Iterable[str]) -> None:
        with self._lock:
            self._models = [model_tag(m) for m in names]

    def has_model(self, name: str) -> bool:
        with self._lock:
            return model_tag(name) in self._models

    def add_model(self, name: str) -> None:
        with self._lock:
            if model_tag(name) not in self._models:
                self._models.append(model_tag(name))

    @property
    def fault_seed(self) -> int:
        return self._fault_seed

    @fault_seed.setter
    def fault_seed(self, seed: int) -> None:
        with self._lock:
            self._fault_seed = seed
            self._rng = random.Random(seed)

    def enqueue(self, *texts: str) -> None:
        """Script the next chat replies, first in first out."""
        with self._lock:
            self._replies.extend(texts)

    def enqueue_faults(self, *kinds: str) -> None:
        """Make the next chat requests fail, one fault per request, in order."""
        bad = [k for k in kinds if k not in FAULT_KINDS]
        if bad:
            raise ValueError(f"unknown fault kind(s) {bad}; known: {', '.join(FAULT_KINDS)}")
        with self._lock:
            self._faults.extend(kinds)

    def reset(self) -> None:
        """Forget scripted replies, pending faults and recorded requests."""
        with self._lock:
            self._replies.clear()
            self._faults.clear()
            self._requests.clear()
            self._counter = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path in CHAT_PATHS]

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    # -- used by the handler ---------------------------------------------------------------------

    def _record(self, method: str, path: str, body: Any, headers: Any) -> None:
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in _HIDDEN_HEADERS}
        rec = RecordedRequest(path, body, kept, method, time.monotonic())
        with self._lock:
            self._requests.append(rec)

    def _plan_chat(self) -> tuple[str | None, str | None, int]:
        """Decide (fault, scripted reply, request number) for one chat request atomically."""
        with self._lock:
            self._counter += 1
            fault = self._faults.popleft() if self._faults else None
            if fault is None and self.fault_rate > 0 and self._rng.random() < self.fault_rate:
                fault = self._rng.choice(self.fault_kinds)
            scripted = self._replies.popleft() if fault is None and self._replies else None
            return fault, scripted, self._counter

    def _reply_text(self, body: dict, scripted: str | None, number: int) -> str:
        if scripted is not None:
            return scripted
        fn = self.reply_fn
        if fn is not None:
            return fn(body)
        last = next(
            (
                m.get("content", "")
                for m in reversed(body.get("messages") or [])
                if m.get("role") == "user"
            ),
            "",
        )
        last = " ".join(str(last).split())
        if len(last) > 60:
            last = last[:57] + "..."
        return f"Reply {number} to: {last}"


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


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True  # headers and body are separate writes
    server: _Server

    def setup(self) -> None:
        super().setup()
        with self.server.sockets_lock:
            self.server.open_sockets.add(self.request)

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
        path = self.path.split("?", 1)[0]
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            stub._record(method, path, raw.decode(errors="replace"), self.headers)
            self._error(path, 400, "request body is not valid JSON")
            return
        stub._record(method, path, body, self.headers)
        route = _ROUTES.get((method, path))
        if route is None:
            self._error(path, 404, f"no route for {method} {path}")
            return
        if path.startswith("/v1/") and not self._key_ok():
            return
        try:
            route(self, body if isinstance(body, dict) else {})
        except (BrokenPipeError, ConnectionResetError):
            self.close_connection = True

    def _key_ok(self) -> bool:
        want = self.server.stub.require_api_key
        if want is None:
            return True
        got = self.headers.get("Authorization", "").removeprefix("Bearer ").strip()
        if got == want:
            return True
        # Echo the wrong key, unmasked, so tests can prove a backend never repeats server text.
        msg = f"Incorrect API key provided: {got}."
        self._send_json(401, _openai_error(msg, "invalid_request_error", "invalid_api_key"))
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
            self._send_json(status, _openai_error(message, kind, None), headers)
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
                {"Retry-After": _fmt_seconds(stub.retry_after_s)},
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
                    _openai_error(
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

    def _ollama_chat(self, body: dict, model: str, text: str, prompt_tokens: int) -> None:
        options = body.get("options") or {}
        text, reason = apply_limits(text, options.get("stop"), options.get("num_predict"))
        now = datetime.now(UTC).isoformat()
        final = {
            "model": model,
            "created_at": now,
            "message": {"role": "assistant", "content": text},
            "done": True,
            "done_reason": reason,
            "total_duration": 1_000_000,
            "load_duration": 1000,
            "prompt_eval_count": prompt_tokens,
            "prompt_eval_duration": 1000,
            "eval_count": count_words(text),
            "eval_duration": 1000,
        }
        if body.get("stream", True) is False:
            self._send_json(200, final)
            return
        pieces = [w + " " for w in text.split(" ")]
        pieces[-1] = pieces[-1][:-1]
        chunks = [
            {
                "model": model,
                "created_at": now,
                "message": {"role": "assistant", "content": p},
                "done": False,
            }
            for p in pieces
        ]
        self._stream([*chunks, {**final, "message": {"role": "assistant", "content": ""}}])

    def _ollama_tags(self, body: dict) -> None:
        models = [
            {
                "name": m,
                "model": m,
                "modified_at": "2024-01-01T00:00:00Z",
                "size": 1_000_000,
                "digest": fake_digest(m),
                "details": {
                    "format": "gguf",
                    "family": "stub",
                    "parameter_size": "1M",
                    "quantization_level": "Q8_0",
                },
            }
            for m in self.server.stub.models
        ]
        self._send_json(200, {"models": models})

    def _ollama_pull(self, body: dict) -> None:
        stub = self.server.stub
        name = str(body.get("model") or body.get("name") or "")
        allowed = stub.pullable is None or model_tag(name) in {model_tag(p) for p in stub.pullable}
        if not allowed:
            lines: list[dict] = [
                {"status": "pulling manifest"},
                {"error": "pull model manifest: file does not exist"},
            ]
        else:
            digest, total = "sha256:" + fake_digest(name), 4000
            lines = [{"status": "pulling manifest"}]
            lines += [
                {
                    "status": f"pulling {digest[7:19]}",
                    "digest": digest,
                    "total": total,
                    "completed": done,
                }
                for done in (0, 1000, 2500, 4000)
            ]
            lines += [
                {"status": "verifying sha256 digest"},
                {"status": "writing manifest"},
                {"status": "success"},
            ]
            stub.add_model(name)
        if body.get("stream", True) is False:
            last = lines[-1]
            self._send_json(500 if "error" in last else 200, last)
        else:
            self._stream(lines)

    def _ollama_show(self, body: dict) -> None:
        name = str(body.get("model") or body.get("name") or "")
        if not self.server.stub.has_model(name):
            self._send_json(404, {"error": f"model '{name}' not found"})
            return
        self._send_json(
            200,
            {
                "modelfile": f"FROM {model_tag(name)}\n",
                "parameters": "",
                "template": "{{ .Prompt }}",
                "details": {
                    "format": "gguf",
                    "family": "stub",
                    "parameter_size": "1M",
                    "quantization_level": "Q8_0",
                },
                "model_info": {"general.architecture": "stub", "stub.context_length": 4096},
                "capabilities": ["completion"],
                "modified_at": "2024-01-01T00:00:00Z",
            },
        )

    def _ollama_version(self, body: dict) -> None:
        self._send_json(200, {"version": "0.0.0-stub"})

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


def _openai_error(message: str, kind: str, code: str | None) -> dict:
    return {"error": {"message": message, "type": kind, "param": None, "code": code}}


def _fmt_seconds(s: float) -> str:
    return str(int(s)) if float(s).is_integer() else str(s)


_ROUTES: dict[tuple[str, str], Callable[[_Handler, dict], None]] = {
    ("GET", "/api/tags"): _Handler._ollama_tags,
    ("GET", "/api/version"): _Handler._ollama_version,
    ("POST", "/api/pull"): _Handler._ollama_pull,
    ("POST", "/api/show"): _Handler._ollama_show,
    ("POST", "/api/chat"): lambda h, b: h._chat(b, openai=False),
    ("GET", "/v1/models"): _Handler._openai_models,
    ("POST", "/v1/chat/completions"): lambda h, b: h._chat(b, openai=True),
}


def main(argv: list[str] | None = None) -> None:
    """Serve until interrupted, so the tool can be tried without a model."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=11434)
    p.add_argument("--latency", type=float, default=0.0, help="seconds before each chat reply")
    p.add_argument(
        "--model",
        action="append",
        dest="models",
        help="model reported as installed (repeatable; default: stub)",
    )
    p.add_argument("--fault-rate", type=float, default=0.0)
    p.add_argument("--fault-seed", type=int, default=0)
    p.add_argument("--api-key", default=None, help="require this Bearer key on /v1")
    p.add_argument("--verbose", action="store_true", help="log every request")
    args = p.parse_args(argv)
    stub = StubLLMServer(
        host=args.host,
        port=args.port,
        latency_s=args.latency,
        models=args.models or DEFAULT_MODELS,
        verbose=args.verbose,
    )
    stub.fault_rate, stub.fault_seed, stub.require_api_key = (
        args.fault_rate,
        args.fault_seed,
        args.api_key,
    )
    with stub:
        print(f"Stub LLM server on {stub.url}  (models: {', '.join(stub.models)})")
        print(f"  Ollama:  OLLAMA_HOST={stub.url}        e.g. ollama:stub")
        print(f"  OpenAI:  OPENAI_BASE_URL={stub.openai_base_url}   e.g. openai:stub")
        print("Press Ctrl-C to stop.", flush=True)
        try:
            while True:
                time.sleep(3600)
        except KeyboardInterrupt:
            pass


if __name__ == "__main__":
    main()
