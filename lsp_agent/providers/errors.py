"""SDK exceptions → :class:`ProviderError`, classified once so the core's retry policy can decide.

One function per SDK (``anthropic_error``, ``openai_error``). Each SDK is imported inside its
function, so this module can be imported without either SDK being loaded. Messages say what to
do (which variable to set) and what the provider said; they never contain the API key, and
:func:`_build` scrubs the key from the provider's own words too, in case a server echoes it.

A request that gets no answer at all names the endpoint (:class:`Endpoint`: the URL and the
setting it came from) and the cause: refused, name not resolved, timed out, or a base URL
that is not a URL (that one is not retried: waiting does not fix it).

Also :func:`parse_tool_input`, shared by both providers: bad tool-call JSON is an error too,
but one the model reads rather than one that is raised.
"""

from __future__ import annotations

import email.utils
import json
import math
import re
import socket
import time
from collections.abc import Iterator, Mapping
from typing import Any

import attrs

from lsp_agent.core.errors import ContextOverflow, ProviderError, ProviderErrorKind

# Wordings used by Anthropic, OpenAI, vLLM and llama.cpp for "the prompt does not fit".
_OVERFLOW = re.compile(
    r"prompt is too long|context_length_exceeded|maximum context length"
    r"|context window|exceeds? the available context size",
    re.IGNORECASE,
)

# Anthropic's documented error types, as they appear in an SSE `error` event (HTTP status 200).
_ANTHROPIC_TYPES: dict[str, ProviderErrorKind] = {
    "overloaded_error": "overloaded",
    "rate_limit_error": "rate_limit",
    "api_error": "server",
    "timeout_error": "server",
    "authentication_error": "auth",
    "permission_error": "auth",
    "invalid_request_error": "bad_request",
    "request_too_large": "bad_request",
    "not_found_error": "bad_request",
    "billing_error": "bad_request",
}

# OpenAI `code` / `type` values seen in error objects sent inside a stream.
_OPENAI_CODES: dict[str, ProviderErrorKind] = {
    "context_length_exceeded": "context_overflow",
    "rate_limit_exceeded": "rate_limit",
    "server_error": "server",
    "server_overloaded": "overloaded",
    "overloaded": "overloaded",
    "invalid_request_error": "bad_request",
}

_PREFIXES: dict[ProviderErrorKind, str] = {
    "rate_limit": "rate limited",
    "overloaded": "the provider is overloaded",
    "server": "server error",
    "connection": "connection failed",
    "context_overflow": "the prompt is too long for the model",
    "bad_request": "request rejected",
    "stream_dropped": "the response stream broke off",
    "other": "provider error",
}

_DETAIL_LIMIT = 500


@attrs.frozen
class Endpoint:
    """Where a provider sends its requests, and what chose it (for error messages)."""

    url: str
    source: str
    """``ANTHROPIC_BASE_URL``, ``providers.NAME.base_url`` or ``the default``."""

    @property
    def described(self) -> str:
        return f"{self.url} (from {self.source})"


def describe_endpoint(
    base_url: str | None, *, default: str, env: Mapping[str, str], env_var: str, provider: str
) -> Endpoint:
    """The endpoint a provider built from ``base_url`` (the config's, else ``env_var``'s)."""
    if not base_url:
        return Endpoint(default, "the default")
    if env.get(env_var, "").strip() == base_url.strip():
        return Endpoint(base_url, env_var)
    return Endpoint(base_url, f"providers.{provider}.base_url")


def connection_cause(exc: BaseException) -> str:
    """Why a request got no answer, in words: refused, not resolved, timed out, bad URL."""
    import httpx2

    for link in _chain(exc):
        if isinstance(link, httpx2.UnsupportedProtocol | httpx2.InvalidURL):
            return "invalid URL (it needs http:// or https://)"
        if isinstance(link, ConnectionRefusedError):
            return "connection refused"
        if isinstance(link, socket.gaierror):
            return "host name not resolved"
        if isinstance(link, httpx2.TimeoutException | TimeoutError):
            return "timed out"
    return str(exc) or type(exc).__name__


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    link: BaseException | None = exc
    while link is not None and id(link) not in seen:
        seen.add(id(link))
        yield link
        link = link.__cause__ or link.__context__


def _connection_error(
    exc: BaseException, *, provider: str, endpoint: Endpoint | None, started: bool
) -> ProviderError:
    cause = connection_cause(exc)
    if endpoint is None:
        return _build(_broken(started, default="connection"), cause, provider=provider)
    if cause.startswith("invalid URL"):
        return ProviderError(
            f"invalid base URL {endpoint.url!r} (from {endpoint.source}): it needs http:// or"
            " https://",
            kind="bad_request",
            provider=provider,
        )
    detail = f"{endpoint.described}: {cause}"
    return _build(_broken(started, default="connection"), detail, provider=provider)


def parse_retry_after(
    headers: Mapping[str, str] | None, *, now: float | None = None
) -> float | None:
    """Seconds to wait from ``retry-after-ms`` (float ms) or ``retry-after`` (seconds or a date)."""
    if headers is None:
        return None
    millis = _finite(headers.get("retry-after-ms"))
    if millis is not None:
        return millis / 1000
    raw = headers.get("retry-after")
    if not raw:
        return None
    seconds = _finite(raw)
    if seconds is not None:
        return seconds
    try:
        when = email.utils.parsedate_to_datetime(raw)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def missing_key(key_env: str, *, provider: str) -> ProviderError:
    return ProviderError(f"{key_env} is not set", kind="auth", provider=provider)


def truncated(*, provider: str, started: bool) -> ProviderError:
    """The stream ended cleanly but without its final event (a proxy cut it, a server died)."""
    detail = "the stream ended before the response was complete"
    return _build(_broken(started, default="connection"), detail, provider=provider)


def parse_tool_input(text: str) -> tuple[dict[str, Any], str | None]:
    """Parse a tool call's JSON arguments; bad JSON is reported to the model, never raised."""
    if not text.strip():
        return {}, None
    try:
        value = json.loads(text)
    except ValueError as exc:
        return {}, f"tool arguments are not valid JSON: {exc}"
    if not isinstance(value, dict):
        return {}, f"tool arguments must be a JSON object, not {type(value).__name__}"
    return value, None


def anthropic_error(
    exc: BaseException,
    *,
    provider: str,
    key_env: str | None,
    secret: str | None,
    started: bool,
    endpoint: Endpoint | None = None,
) -> ProviderError:
    """Classify an exception raised by the ``anthropic`` SDK (or httpx2 under it)."""
    import anthropic
    import httpx2

    if isinstance(exc, ProviderError):
        return exc
    kind: ProviderErrorKind
    status: int | None = None
    retry_after: float | None = None
    if isinstance(exc, anthropic.APIStatusError):
        detail = exc.api_message or exc.message
        if exc.status_code >= 400:
            status = exc.status_code
            kind = "overloaded" if exc.type == "overloaded_error" else _status_kind(status)
            retry_after = parse_retry_after(exc.response.headers)
        else:
            # An SSE `error` event inside a 200 stream: only its type tells what happened.
            kind = _ANTHROPIC_TYPES.get(exc.type or "") or _broken(started, default="other")
        if kind == "bad_request" and _OVERFLOW.search(detail):
            kind = "context_overflow"
    elif isinstance(exc, anthropic.APIConnectionError | httpx2.TransportError):
        # The SDK wraps errors before the response; mid-stream, raw httpx2 errors come through.
        return _connection_error(exc, provider=provider, endpoint=endpoint, started=started)
    else:
        detail = str(exc) or type(exc).__name__
        kind = _broken(started, default="other")
    return _build(
        kind,
        detail,
        status=status,
        retry_after=retry_after,
        provider=provider,
        key_env=key_env,
        secret=secret,
    )


def openai_error(
    exc: BaseException,
    *,
    provider: str,
    key_env: str | None,
    secret: str | None,
    started: bool,
    endpoint: Endpoint | None = None,
) -> ProviderError:
    """Classify an exception raised by the ``openai`` SDK (or httpx2 under it)."""
    import httpx2
    import openai

    if isinstance(exc, ProviderError):
        return exc
    kind: ProviderErrorKind
    status: int | None = None
    retry_after: float | None = None
    if isinstance(exc, openai.APIStatusError):
        status = exc.status_code
        detail = _openai_detail(exc.body, exc.message)
        kind = _status_kind(status)
        if exc.code == "insufficient_quota":
            kind = "bad_request"  # a 429 that waiting does not fix: the account is out of credit
        elif exc.code == "context_length_exceeded" or (
            kind == "bad_request" and _OVERFLOW.search(detail)
        ):
            kind = "context_overflow"
        retry_after = parse_retry_after(exc.response.headers)
    elif isinstance(exc, openai.APIConnectionError | httpx2.TransportError):
        return _connection_error(exc, provider=provider, endpoint=endpoint, started=started)
    elif isinstance(exc, openai.APIError):
        # An `{"error": …}` object sent inside the stream; no HTTP status to go by.
        detail = _openai_detail(exc.body, exc.message)
        kind = _OPENAI_CODES.get(exc.code or "") or _OPENAI_CODES.get(exc.type or "") or "other"
        if kind in ("bad_request", "other") and _OVERFLOW.search(detail):
            kind = "context_overflow"
        elif kind == "other":
            kind = _broken(started, default="other")
    else:
        detail = str(exc) or type(exc).__name__
        kind = _broken(started, default="other")
    return _build(
        kind,
        detail,
        status=status,
        retry_after=retry_after,
        provider=provider,
        key_env=key_env,
        secret=secret,
    )


def _broken(started: bool, *, default: ProviderErrorKind) -> ProviderErrorKind:
    """Once events have been yielded, a failure leaves a partial response: the stream dropped."""
    return "stream_dropped" if started else default


def _status_kind(status: int) -> ProviderErrorKind:
    if status in (401, 403):
        return "auth"
    if status == 429:
        return "rate_limit"
    if status == 529:
        return "overloaded"
    if status >= 500:
        return "server"
    return "bad_request"


def _build(
    kind: ProviderErrorKind,
    detail: str,
    *,
    provider: str,
    status: int | None = None,
    retry_after: float | None = None,
    key_env: str | None = None,
    secret: str | None = None,
) -> ProviderError:
    code = f" ({status})" if status is not None else ""
    if secret:  # before truncating, so no fragment of the key survives the cut
        detail = detail.replace(secret, "[redacted]")
    detail = detail.strip()
    if len(detail) > _DETAIL_LIMIT:
        detail = detail[:_DETAIL_LIMIT] + "…"
    if kind == "auth":
        # The provider's words are dropped: they only ever say the key is wrong.
        hint = f"check {key_env}" if key_env else f"set api_key_env for provider {provider!r}"
        message = f"authentication failed{code}: {hint}"
    else:
        prefix = _PREFIXES[kind]
        message = f"{prefix}{code}: {detail}" if detail else f"{prefix}{code}"
    if kind == "context_overflow":
        return ContextOverflow(message, status=status, provider=provider)
    return ProviderError(
        message, kind=kind, status=status, retry_after=retry_after, provider=provider
    )


def _openai_detail(body: object, fallback: str) -> str:
    # openai's APIStatusError.message is "Error code: 400 - {whole body}"; prefer the message.
    if isinstance(body, Mapping):
        message: Any = body.get("message")
        if isinstance(message, str) and message:
            return message
    return fallback


def _finite(raw: str | None) -> float | None:
    if raw is None:
        return None
    try:
        value = float(raw)
    except ValueError:
        return None
    return value if math.isfinite(value) and value >= 0 else None
