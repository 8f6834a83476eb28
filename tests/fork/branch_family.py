"""A forked prison chat for the analysis tests: a parent on model a, forked at the guard's turn
where the abuse began (1:4) with a de-escalating guard reply written by the researcher, and
continued on several models, each several times (one `conversation fork` per model)."""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Iterator

from fork_helpers import fork_and_run, parent_chat

from simulator.testing import StubLLMServer

AT = "1:4"  # day 1's fifth message: the guard's (round robin: Guard, Prisoner, ...)
EDIT = (
    "Stop. Put the baton down, nobody is punished today. <script>alert('x')</script> "
    "Tell me what happened & we sort it out."
)
LENGTH = {"a": 4, "b": 9, "c": 14}  # words per reply by model, plus 0-3 by prompt and seed


def model_reply(body: dict) -> str:
    """Replies that differ by model (length), prompt and seed, the same for the same three."""
    model = body["model"]
    seed = (body.get("options") or {}).get("seed")
    text = f"{model}|{seed}|" + "|".join(m["content"] for m in body["messages"])
    digest = hashlib.sha256(text.encode()).hexdigest()
    extra = int(digest[0], 16) % 4
    return " ".join([f"{model}:{digest[:6]}", *["word"] * (LENGTH.get(model, 5) + extra - 1)])


@contextlib.contextmanager
def stub_models(monkeypatch, models=("a", "b", "c")) -> Iterator[StubLLMServer]:
    with StubLLMServer(models=list(models)) as server:
        server.reply_fn = model_reply
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield server


def forked_family(
    store, models=("a", "b", "c"), repetitions: int = 2, messages: int = 8
) -> tuple[str, dict[str, list[str]]]:
    """(parent id, fork ids per model): each model's forks from one `conversation fork`."""
    parent = parent_chat(store, messages=messages, model="ollama:a")
    forks = {
        model: fork_and_run(
            store, parent, AT, edit=EDIT, llm=f"ollama:{model}", repetitions=repetitions
        )
        for model in models
    }
    return parent, forks
