"""Ollama routes of the stub LLM server (`/api/chat`, `/api/tags`, `/api/pull`, `/api/show`)."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    pass

from simulator.testing.stub_common import apply_limits, count_words, fake_digest, model_tag


class OllamaRoutes:
    """Mixed into the stub's request handler; relies on its `_send_json`, `_stream`, `server`."""

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
