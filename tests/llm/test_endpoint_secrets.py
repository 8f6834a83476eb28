"""Endpoint URLs with secrets (domain/endpoint_secrets.py, llm/endpoint_url.py), and embedder
strings checked when an experiment is read: the pure rules, then the real clients against the
loopback stub (Basic password, query key, `/v1/models` on the path, `openai:MODEL@URL`)."""

from __future__ import annotations

import asyncio

import pytest
from pydantic import ValidationError

from simulator.domain.endpoint_secrets import (
    MissingVariable,
    expand,
    is_credential_name,
    literal_secrets,
    masked,
    refusal,
    split_query,
)
from simulator.domain.llm_choice import LLMChoice
from simulator.domain.params import GenerationParams
from simulator.errors import UserError
from simulator.llm.base import FatalBackendError
from simulator.llm.embeddings import create_embedder, require_available
from simulator.llm.openai_backend import OpenAIBackend
from simulator.logs import redact
from simulator.memory.domain.settings import MemorySettings
from simulator.testing import StubLLMServer


@pytest.mark.parametrize(
    "name",
    [
        *("key", "api_key", "apikey", "api-key", "token", "access_token", "password", "secret"),
        *("sig", "X-Amz-Signature", "X-Amz-Security-Token", "client_secret", "auth"),
    ],
)
def test_credential_like_query_names(name):
    assert is_credential_name(name)


@pytest.mark.parametrize("name", ["api-version", "model", "monkey", "v", "keyboard_layout"])
def test_other_query_names_are_not_credentials(name):
    assert not is_credential_name(name)


@pytest.mark.parametrize(
    ("url", "found", "shown"),
    [
        ("http://u:pw@h/v1", ["the password (user:PASSWORD@host)"], "http://u:***@h/v1"),
        (
            "http://h/v1?api_key=k&x=1",
            ["the query parameter 'api_key'"],
            "http://h/v1?api_key=***&x=1",
        ),
        ("http://u:${PW}@h/v1?token=${T}", [], "http://u:${PW}@h/v1?token=${T}"),
        ("http://u@h/v1?api-version=2024-01-01", [], "http://u@h/v1?api-version=2024-01-01"),
        ("http://u:p@ss@h/v1", ["the password (user:PASSWORD@host)"], "http://u:***@h/v1"),
    ],
)
def test_spelled_out_secrets_are_found_and_masked(url, found, shown):
    assert literal_secrets(url) == found
    assert masked(url) == shown
    assert (refusal(url) is None) == (not found)


def test_references_are_filled_in_encoded_and_a_missing_one_is_named():
    url = "http://bob:${PW}@h/v1?api_key=${KEY}"
    assert expand(url, {"PW": "p@ss/w", "KEY": "k&1"}) == "http://bob:p%40ss%2Fw@h/v1?api_key=k%261"
    with pytest.raises(MissingVariable) as caught:
        expand(url, {"PW": "x"})
    assert caught.value.name == "KEY"
    assert split_query("http://h/v1?api_key=k&x=1") == ("http://h/v1", {"api_key": "k", "x": "1"})


def test_redaction_hides_credential_query_values_and_keeps_references():
    text = "GET http://h/v1/models?api_key=abc123&x=1 http://u:${PW}@h/?sig=zz&token=${T}"
    assert redact(text) == (
        "GET http://h/v1/models?api_key=***&x=1 http://u:${PW}@h/?sig=***&token=${T}"
    )


def test_an_llm_choice_refuses_a_spelled_out_secret_unless_read_back_from_the_store():
    with pytest.raises(ValidationError, match=r"spells out the password.*\$\{LLM_ENDPOINT"):
        LLMChoice(model="openai:m", base_url="http://u:pw@h/v1")
    with pytest.raises(ValidationError, match="'api_key'"):
        LLMChoice(model="openai:m", base_url="http://h/v1?api_key=k")
    old = LLMChoice.model_validate(
        {"model": "openai:m", "base_url": "http://u:pw@h/v1"}, context={"stored": True}
    )
    assert old.base_url == "http://u:pw@h/v1"  # an experiment saved before the rule still opens
    assert LLMChoice(model="openai:m", base_url="http://u:${P}@h/v1").base_url


@pytest.mark.parametrize(
    ("embedder", "message"),
    [
        ("mock:99999999", "whole number from 1 to 4096"),
        ("mock:0", "whole number from 1 to 4096"),
        ("mock:-3", "whole number from 1 to 4096"),
        ("stt:x", "did you mean 'st'"),
        ("openai:m@http://", "with a host"),
        ("openai:m@ftp://h/v1", "must be an http:// or https:// URL"),
        ("openai:m@http://u:pw@h/v1", "spells out the password"),
    ],
)
def test_bad_embedder_strings_are_refused_when_the_block_is_read(embedder, message):
    with pytest.raises(ValidationError, match=message):
        MemorySettings(kind="stream", embedder=embedder)


def test_the_largest_mock_dimension_is_accepted():
    assert MemorySettings(kind="stream", embedder="mock:4096").embedder == "mock:4096"
    assert create_embedder("mock:4096").embed(["a"]).shape == (1, 4096)


def test_st_without_its_package_names_the_embeddings_extra_and_the_cpu_build(monkeypatch):
    monkeypatch.setitem(__import__("sys").modules, "sentence_transformers", None)
    for spec in ("st:all-mpnet-base-v2", "minilm"):
        with pytest.raises(UserError) as caught:
            require_available(spec)
        text = caught.value.render()
        assert caught.value.field == "memory.embedder"
        assert "pip install -e '.[embeddings]'" in text
        assert "pip install torch --index-url https://download.pytorch.org/whl/cpu" in text
        assert "mock:64" in text and "openai:text-embedding-3-small" in text


def test_a_key_and_password_in_the_url_reach_the_stub_and_models_stays_on_the_path(
    monkeypatch,
):
    monkeypatch.setenv("EP_PW", "p@ss")
    monkeypatch.setenv("EP_KEY", "k3y")
    with StubLLMServer(models=["stub"]) as stub:
        stub.require_basic_auth = ("bob", "p@ss")
        stub.require_query = {"api_key": "k3y"}
        url = f"http://bob:${{EP_PW}}@127.0.0.1:{stub.port}/v1?api_key=${{EP_KEY}}"
        backend = OpenAIBackend("stub", base_url=url)
        assert backend.base_url == url and "k3y" not in repr(backend)

        async def go() -> str:
            try:
                await backend.preflight()
                reply = await backend.chat([{"role": "user", "content": "hi"}], GenerationParams())
                return reply.model_identity["base_url"]
            finally:
                await backend.aclose()

        assert asyncio.run(go()) == url  # the reference is what a ledger row records
        embedder = create_embedder(f"openai:stub@{url}", cached=False)
        assert embedder.embed(["a", "b"]).shape == (2, stub.embedding_dim)
        requests = stub.requests
    assert [r.path for r in requests] == ["/v1/models", "/v1/chat/completions", "/v1/embeddings"]
    assert all(r.query_names == ("api_key",) and r.basic_auth_user == "bob" for r in requests)


def test_a_wrong_key_is_refused_without_repeating_it(monkeypatch):
    monkeypatch.setenv("EP_KEY", "wrong-key-123")
    with StubLLMServer(models=["stub"]) as stub:
        stub.require_query = {"api_key": "right"}
        backend = OpenAIBackend("stub", base_url=f"http://127.0.0.1:{stub.port}/v1?key=${{EP_KEY}}")
        with pytest.raises(FatalBackendError, match="HTTP 401") as caught:
            asyncio.run(backend.preflight())
    assert "wrong-key-123" not in str(caught.value)


def test_an_unset_reference_is_named(monkeypatch):
    monkeypatch.delenv("EP_NOT_SET", raising=False)
    with pytest.raises(FatalBackendError, match="EP_NOT_SET, which is not set"):
        OpenAIBackend("m", base_url="http://u:${EP_NOT_SET}@127.0.0.1:9/v1")


def test_the_url_after_the_at_sign_wins_over_openai_base_url(monkeypatch):
    """`openai:MODEL@URL` embeds at URL even when OPENAI_BASE_URL names another server."""
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")  # nothing listens there
    with StubLLMServer(models=["emb"]) as stub:
        embedder = create_embedder(f"openai:emb@{stub.openai_base_url}", cached=False)
        assert embedder.embed(["one", "two", "three"]).shape == (3, stub.embedding_dim)
        assert stub.embedding_batches == [3]


def test_the_moderation_scorer_sends_a_query_key_apart_and_shows_it_masked(monkeypatch):
    from simulator.analysis.scorers.moderation import create

    with StubLLMServer(models=["omni-moderation-latest"]) as stub:
        stub.require_query = {"api_key": "mod-key-42"}
        monkeypatch.setenv("OPENAI_BASE_URL", f"{stub.openai_base_url}?api_key=mod-key-42")
        scorer = create("omni-moderation-latest")
        assert "mod-key-42" not in repr(scorer) and scorer.url.endswith(
            "/v1/moderations?api_key=***"
        )

        async def go() -> None:
            try:
                await scorer.preflight()
            finally:
                await scorer.aclose()

        asyncio.run(go())
        (request,) = stub.requests
    assert request.path == "/v1/moderations" and request.query_names == ("api_key",)
