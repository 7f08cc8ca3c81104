"""Requests that get no answer: the error names the endpoint, what set it, and the cause.

The failures are injected with ``httpx2.MockTransport`` (a resolver error, a timeout, a
refusal): nothing leaves the process, not even a DNS query."""

from __future__ import annotations

import socket
from collections.abc import Callable

import httpx2
import pytest

from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import Message, ModelRequest, TextPart
from lsp_agent.providers import ProviderType, make_provider
from lsp_agent.providers.errors import Endpoint, connection_cause, describe_endpoint

KEY = "sk-unit-conn-SECRET-1234"


def refused(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("All connection attempts failed") from ConnectionRefusedError(
        111, "Connect call failed"
    )


def unresolved(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectError("[Errno -2] Name or service not known") from socket.gaierror(
        -2, "Name or service not known"
    )


def timed_out(request: httpx2.Request) -> httpx2.Response:
    raise httpx2.ConnectTimeout("timed out")


Handler = Callable[[httpx2.Request], httpx2.Response]


async def failure(
    handler: Handler, provider_type: ProviderType, base_url: str | None, env: dict[str, str]
) -> ProviderError:
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(handler)) as client:
        provider = make_provider(
            provider_type, name="p", base_url=base_url, api_key_env="K", env=env, http_client=client
        )
        request = ModelRequest(
            model="m", system=(), messages=(Message(role="user", parts=(TextPart(text="hi"),)),)
        )
        with pytest.raises(ProviderError) as caught:
            async for _ in provider.stream(request):
                pass
    return caught.value


@pytest.mark.parametrize("provider_type", ["anthropic", "openai"])
@pytest.mark.parametrize(
    ("handler", "cause"),
    [
        (refused, "connection refused"),
        (unresolved, "host name not resolved"),
        (timed_out, "timed out"),
    ],
)
async def test_the_cause_is_named_with_the_url_from_the_environment(
    provider_type: ProviderType, handler: Handler, cause: str
) -> None:
    variable = "ANTHROPIC_BASE_URL" if provider_type == "anthropic" else "OPENAI_BASE_URL"
    url = "http://llm.example.invalid:8080"
    error = await failure(handler, provider_type, None, {"K": KEY, variable: url})
    assert error.kind == "connection"
    assert error.retryable
    assert str(error) == f"connection failed: {url} (from {variable}): {cause}"
    assert KEY not in str(error)


async def test_a_configured_base_url_is_named_as_the_providers_setting() -> None:
    url = "http://127.0.0.1:1/v1"
    error = await failure(refused, "openai-compatible", url, {"K": KEY})
    assert str(error) == f"connection failed: {url} (from providers.p.base_url): connection refused"


async def test_the_default_endpoint_says_so() -> None:
    error = await failure(unresolved, "anthropic", None, {"K": KEY})
    assert "https://api.anthropic.com (from the default): host name not resolved" in str(error)


async def test_an_url_without_a_scheme_is_not_retried() -> None:
    def no_scheme(request: httpx2.Request) -> httpx2.Response:
        # What httpx2's real transport raises for it (the CLI test goes through that one).
        raise httpx2.UnsupportedProtocol("Request URL is missing an 'http://' or 'https://'")

    env = {"K": KEY, "ANTHROPIC_BASE_URL": "localhost:8080"}
    error = await failure(no_scheme, "anthropic", None, env)
    assert error.kind == "bad_request"
    assert not error.retryable
    assert "invalid base URL 'localhost:8080' (from ANTHROPIC_BASE_URL)" in str(error)


def test_describe_endpoint_tells_the_sources_apart() -> None:
    env = {"ANTHROPIC_BASE_URL": " http://a:1 "}
    common = {"default": "https://d", "env_var": "ANTHROPIC_BASE_URL", "provider": "x"}
    assert describe_endpoint(None, env=env, **common) == Endpoint("https://d", "the default")
    assert describe_endpoint("http://a:1", env=env, **common).source == "ANTHROPIC_BASE_URL"
    assert describe_endpoint("http://b:2", env=env, **common).source == "providers.x.base_url"


def test_an_unknown_failure_keeps_its_own_words() -> None:
    assert connection_cause(httpx2.ReadError("connection reset by peer")) == (
        "connection reset by peer"
    )
