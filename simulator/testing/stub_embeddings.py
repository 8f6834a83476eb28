"""OpenAI's `/v1/embeddings` for the stub LLM server: deterministic vectors, no model.

Each input's vector is `domain.memory.vectors.hash_vector(text, dim)`, so a test knows what
should come back; `dim` is the server's `embedding_dim` unless the request asks for
`dimensions`. Both encodings the protocol has are answered: `float` (a JSON list) and `base64`
(little-endian float32, what the `openai` client asks for by default). The server records
every request, and `StubLLMServer.embedding_batches` lists the batch sizes, so tests can see
how texts were batched.
"""

from __future__ import annotations

import base64

from simulator.memory.domain.vectors import hash_vector
from simulator.testing.stub_common import count_words, openai_error

MAX_INPUTS = 2048  # the OpenAI API's limit of inputs per request


class EmbeddingRoutes:
    """Mixed into the stub's request handler; relies on its `_send_json`, `_error`, `server`."""

    def _openai_embeddings(self, body: dict) -> None:
        stub = self.server.stub
        texts = body.get("input")
        texts = [texts] if isinstance(texts, str) else texts
        if not isinstance(texts, list) or not texts or not all(isinstance(t, str) for t in texts):
            self._bad("'input' must be a non-empty string or list of strings.", "input")
            return
        if len(texts) > MAX_INPUTS:
            self._bad(f"'input' holds {len(texts)} items; at most {MAX_INPUTS} are allowed.")
            return
        model = str(body.get("model", ""))
        if not stub.has_model(model):
            message = f"The model '{model}' does not exist or you do not have access to it."
            self._send_json(404, openai_error(message, "invalid_request_error", "model_not_found"))
            return
        dim = body.get("dimensions") or stub.embedding_dim
        encoding = body.get("encoding_format") or "float"
        if not isinstance(dim, int) or dim < 1 or encoding not in ("float", "base64"):
            self._bad("'dimensions' must be a positive integer, 'encoding_format' float or base64.")
            return
        tokens = sum(count_words(t) for t in texts)
        self._send_json(
            200,
            {
                "object": "list",
                "model": model,
                "data": [
                    {"object": "embedding", "index": i, "embedding": _encode(text, dim, encoding)}
                    for i, text in enumerate(texts)
                ],
                "usage": {"prompt_tokens": tokens, "total_tokens": tokens},
            },
        )

    def _bad(self, message: str, param: str | None = None) -> None:
        error = openai_error(message, "invalid_request_error", None)
        error["error"]["param"] = param
        self._send_json(400, error)


def _encode(text: str, dim: int, encoding: str) -> list[float] | str:
    vector = hash_vector(text, dim)
    if encoding == "base64":
        return base64.b64encode(vector.astype("<f4").tobytes()).decode("ascii")
    return [float(v) for v in vector]
