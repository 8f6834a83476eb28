"""A tiny stdlib HTTP server that speaks the Ollama and OpenAI chat protocols (and OpenAI's
`/v1/moderations`, with deterministic keyword-based scores: see `stub_protocol.moderate`, and
`/v1/embeddings`, with vectors from a hash of each text: see `stub_embeddings`).

Why: the real client libraries (``ollama``, ``openai``) should be exercised over loopback in tests
and benchmarks without a model, and a user should be able to try the tool with no model at all.
Replies are scripted, computed, or a deterministic default; faults (429, 500, slow answers,
dropped connections, malformed JSON) can be injected for the next requests or at random.

Run it by hand: ``python -m simulator.testing.llm_stub_server --port 11434 --latency 0.05``.
``--max-concurrent N`` answers at most N chat requests at once and queues the rest, as an
inference server with N slots does (so a benchmark can make the backend the bottleneck).
"""

from __future__ import annotations

import argparse
import random
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Any
from urllib.parse import parse_qsl

from simulator.testing.stub_common import (  # noqa: F401  (re-exported for users and tests)
    _HIDDEN_HEADERS,
    CHAT_PATHS,
    DEFAULT_MODELS,
    FAULT_KINDS,
    RANDOM_FAULT_KINDS,
    RecordedRequest,
    apply_limits,
    basic_credentials,
    count_words,
    fake_digest,
    model_tag,
)
from simulator.testing.stub_protocol import _Handler, _Server


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
        self._in_flight_changed = threading.Condition(self._lock)
        self.in_flight = 0  # chat requests being answered right now
        self.max_in_flight = 0  # the most at once since start (or reset)
        self.queued = 0  # chat requests waiting for a slot (only with `max_concurrent`)
        self._max_concurrent: int | None = None
        self.connections_opened = 0  # TCP connections accepted (keep-alive reuse shows here)
        self.verbose = verbose
        self.latency_s = latency_s
        self.reply_fn: Callable[[dict], str] | None = None
        self.fault_rate = 0.0
        self.fault_kinds: tuple[str, ...] = RANDOM_FAULT_KINDS
        self.retry_after_s: float = 0
        self.timeout_sleep_s = 5.0
        self.require_api_key: str | None = None
        # an endpoint behind a password or a key in its URL: /v1/ requests without these are
        # answered 401 (Basic user and password; query parameters with their values)
        self.require_basic_auth: tuple[str, str] | None = None
        self.require_query: dict[str, str] | None = None
        self.pullable: set[str] | None = None  # None: any name can be pulled
        self.embedding_dim = 64  # length of /v1/embeddings vectors unless a request asks

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

    @property
    def max_concurrent(self) -> int | None:
        """At most this many chat requests are answered at once, as by a server with that
        many slots; the rest wait for a slot, in no promised order (None: no limit, the
        default). Faults and latency are served inside a slot."""
        return self._max_concurrent

    @max_concurrent.setter
    def max_concurrent(self, n: int | None) -> None:
        if n is not None and n < 1:
            raise ValueError(f"max_concurrent must be at least 1 or None, got {n}")
        with self._in_flight_changed:
            self._max_concurrent = n
            self._in_flight_changed.notify_all()  # a raised limit lets waiting requests in

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
            self.max_in_flight = self.in_flight
            self.connections_opened = 0

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._lock:
            return list(self._requests)

    @property
    def chat_requests(self) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path in CHAT_PATHS]

    @property
    def embedding_batches(self) -> list[int]:
        """How many texts each `/v1/embeddings` request carried, in arrival order."""
        sizes = []
        for r in self.requests:
            if r.path == "/v1/embeddings" and isinstance(r.body, dict):
                texts = r.body.get("input")
                sizes.append(1 if isinstance(texts, str) else len(texts or []))
        return sizes

    def clear_requests(self) -> None:
        with self._lock:
            self._requests.clear()

    def wait_for_in_flight(self, n: int, timeout_s: float) -> bool:
        """Block until `n` chat requests are (or once were) answered at once; False after
        `timeout_s`.

        Call it from `reply_fn` (which runs while a request counts as in flight) to hold the
        first requests until `n` have arrived: a test then knows the client really sent `n`
        at once without timing anything. Once reached, later calls return at once.
        """
        with self._in_flight_changed:
            return self._in_flight_changed.wait_for(lambda: self.max_in_flight >= n, timeout_s)

    def wait_for_queued(self, n: int, timeout_s: float) -> bool:
        """Block until at least `n` chat requests wait for a slot (`max_concurrent`); False
        after `timeout_s`."""
        with self._in_flight_changed:
            return self._in_flight_changed.wait_for(lambda: self.queued >= n, timeout_s)

    # -- used by the handler ---------------------------------------------------------------------

    def _chat_begins(self) -> None:
        with self._in_flight_changed:
            limit = self._max_concurrent
            if limit is not None and self.in_flight >= limit:
                self.queued += 1
                self._in_flight_changed.notify_all()
                self._in_flight_changed.wait_for(self._has_free_slot)
                self.queued -= 1
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            self._in_flight_changed.notify_all()

    def _has_free_slot(self) -> bool:
        return self._max_concurrent is None or self.in_flight < self._max_concurrent

    def _chat_ends(self) -> None:
        with self._in_flight_changed:
            self.in_flight -= 1
            self._in_flight_changed.notify_all()

    def _connection_opened(self) -> None:
        with self._lock:
            self.connections_opened += 1

    def _record(self, method: str, path: str, body: Any, headers: Any, query: str = "") -> None:
        kept = {k.lower(): v for k, v in headers.items() if k.lower() not in _HIDDEN_HEADERS}
        names = tuple(name for name, _ in parse_qsl(query, keep_blank_values=True))
        user, _ = basic_credentials(headers.get("Authorization", ""))
        rec = RecordedRequest(path, body, kept, method, time.monotonic(), names, user)
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
    p.add_argument(
        "--max-concurrent",
        type=int,
        default=None,
        metavar="N",
        help="answer at most N chat requests at once, queue the rest (default: no limit)",
    )
    p.add_argument("--fault-rate", type=float, default=0.0)
    p.add_argument("--fault-seed", type=int, default=0)
    p.add_argument("--api-key", default=None, help="require this Bearer key on /v1")
    p.add_argument("--verbose", action="store_true", help="log every request")
    args = p.parse_args(argv)
    if args.max_concurrent is not None and args.max_concurrent < 1:
        p.error("--max-concurrent must be at least 1")
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
    stub.max_concurrent = args.max_concurrent
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
