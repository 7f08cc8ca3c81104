"""AnthropicProvider against httpx2.MockTransport replaying documented SSE transcripts."""

from __future__ import annotations

import email.utils
import json
import subprocess
import sys
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx2
import pytest

from lsp_agent.core.errors import ContextOverflow, ProviderError
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.messages import (
    Message,
    ModelRequest,
    ReasoningPart,
    SystemBlock,
    TextPart,
    ThinkingConfig,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.stream_events import (
    Finished,
    FinishReason,
    ReasoningDelta,
    ReasoningEnded,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.providers import make_provider
from lsp_agent.providers.errors import parse_retry_after

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sse"
KEY = "sk-ant-test-SECRET-0123456789"
Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]


class FakeAnthropic:
    """Answers each request with the next queued reply and records what was sent."""

    def __init__(self) -> None:
        self.replies: list[Reply] = []
        self.requests: list[httpx2.Request] = []
        self.client: httpx2.AsyncClient

    def handle(self, request: httpx2.Request) -> httpx2.Response:
        self.requests.append(request)
        reply = self.replies.pop(0)
        return reply(request) if callable(reply) else reply

    def body(self, index: int = -1) -> dict[str, Any]:
        body: dict[str, Any] = json.loads(self.requests[index].content)
        return body

    def provider(
        self,
        env: dict[str, str] | None = None,
        *,
        api_key_env: str | None = "ANTHROPIC_API_KEY",
        base_url: str | None = "https://anthropic.test",
    ) -> Provider:
        return make_provider(
            "anthropic",
            name="anthropic",
            base_url=base_url,
            api_key_env=api_key_env,
            env={"ANTHROPIC_API_KEY": KEY} if env is None else env,
            http_client=self.client,
        )


class BrokenStream(httpx2.AsyncByteStream):
    """Sends ``data``, then the connection dies."""

    def __init__(self, data: bytes) -> None:
        self._data = data

    async def __aiter__(self) -> AsyncIterator[bytes]:
        yield self._data
        raise httpx2.ReadError("connection reset by peer")


@pytest.fixture
async def server() -> AsyncIterator[FakeAnthropic]:
    fake = FakeAnthropic()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handle)) as client:
        fake.client = client
        yield fake


def sse(name: str) -> httpx2.Response:
    return sse_text((FIXTURES / name).read_text())


def sse_text(text: str) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=text)


def sse_events(*events: dict[str, Any]) -> httpx2.Response:
    return sse_text("".join(f"event: {e['type']}\ndata: {json.dumps(e)}\n\n" for e in events))


def api_error(
    status: int, error_type: str, message: str, headers: dict[str, str] | None = None
) -> httpx2.Response:
    body = {"type": "error", "error": {"type": error_type, "message": message}}
    return httpx2.Response(status, headers=headers, json=body)


def request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "model": "claude-test",
        "system": (SystemBlock(text="You are a coding agent.", cache=True),),
        "messages": (Message(role="user", parts=(TextPart(text="hi"),)),),
    }
    fields.update(overrides)
    return ModelRequest(**fields)


async def collect(provider: Provider, req: ModelRequest | None = None) -> list[StreamEvent]:
    return [event async for event in provider.stream(req or request())]


async def collect_until_error(
    provider: Provider, req: ModelRequest | None = None
) -> tuple[list[StreamEvent], ProviderError]:
    events: list[StreamEvent] = []

    async def drain() -> None:
        async for event in provider.stream(req or request()):
            events.append(event)

    with pytest.raises(ProviderError) as info:
        await drain()
    assert KEY not in str(info.value)
    return events, info.value


# --- the stream -----------------------------------------------------------------------------


async def test_text_stream(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_text.txt"))
    events = await collect(server.provider())
    assert events == [
        UsageReported(usage=Usage(input_tokens=25, output_tokens=1)),
        TextDelta(text="Hello"),
        TextDelta(text="!"),
        UsageReported(usage=Usage(input_tokens=25, output_tokens=15)),
        Finished(reason="end_turn", raw_reason="end_turn"),
    ]
    sent = server.requests[0]
    assert sent.url == "https://anthropic.test/v1/messages"
    assert sent.headers["authorization"] == f"Bearer {KEY}"
    assert server.body()["stream"] is True


async def test_tool_use_with_fragmented_args_and_cache_usage(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_tool_use.txt"))
    events = await collect(server.provider())
    call_id = "toolu_01T1x1fJ34qAmk2tNTrN7Up6"
    cache = {"input_tokens": 472, "cache_write_tokens": 1200, "cache_read_tokens": 3400}
    assert events == [
        UsageReported(usage=Usage(**cache, output_tokens=2)),
        TextDelta(text="Okay"),
        TextDelta(text=", let me read the file."),
        ToolCallStarted(tool_call_id=call_id, name="read"),
        ToolCallArgsDelta(tool_call_id=call_id, json_fragment='{"file_path": "sr'),
        ToolCallArgsDelta(tool_call_id=call_id, json_fragment='c/main.py", "lim'),
        ToolCallArgsDelta(tool_call_id=call_id, json_fragment='it": 50}'),
        ToolCallEnded(
            tool_call_id=call_id, name="read", input={"file_path": "src/main.py", "limit": 50}
        ),
        UsageReported(usage=Usage(**cache, output_tokens=89)),
        Finished(reason="tool_use", raw_reason="tool_use"),
    ]


async def test_thinking_signature_round_trips_into_next_request(server: FakeAnthropic) -> None:
    server.replies += [sse("anthropic_thinking.txt"), sse("anthropic_text.txt")]
    provider = server.provider()
    thinking = ThinkingConfig(budget_tokens=10000)
    events = await collect(provider, request(thinking=thinking, max_output_tokens=8192))

    signature = "EqQBCgIYAhIM1gbcDa9GJwZA2b3hGgwKQGYSBnRleHQxMjM0NTY="
    assert [e for e in events if not isinstance(e, UsageReported)] == [
        ReasoningDelta(text="The user wants the files listed."),
        ReasoningDelta(text=" I should call the list tool."),
        ReasoningEnded(signature=signature),
        ReasoningEnded(redacted_data=_redacted_payload()),
        ToolCallStarted(tool_call_id="toolu_01A09q90qw90lq917835lq9", name="list"),
        ToolCallEnded(tool_call_id="toolu_01A09q90qw90lq917835lq9", name="list", input={}),
        Finished(reason="tool_use", raw_reason="tool_use"),
    ]
    assert events[-2] == UsageReported(
        usage=Usage(input_tokens=120, output_tokens=142, reasoning_tokens=97)
    )

    # The core records the parts; the next request must carry them back unchanged.
    assistant = Message(
        role="assistant",
        parts=(
            ReasoningPart(text="The user wants the files listed.", signature=signature),
            ReasoningPart(text="", redacted_data=_redacted_payload()),
            ToolCallPart(tool_call_id="toolu_01A09q90qw90lq917835lq9", name="list", input={}),
        ),
    )
    result = Message(
        role="user",
        parts=(ToolResultPart(tool_call_id="toolu_01A09q90qw90lq917835lq9", output="a.py"),),
    )
    follow_up = request(
        thinking=thinking,
        max_output_tokens=8192,
        messages=(*request().messages, assistant, result),
    )
    await collect(provider, follow_up)
    body = server.body()
    assert body["thinking"] == {"type": "enabled", "budget_tokens": 10000}
    assert body["max_tokens"] > 10000
    assert body["messages"][1]["content"] == [
        {
            "type": "thinking",
            "thinking": "The user wants the files listed.",
            "signature": signature,
        },
        {"type": "redacted_thinking", "data": _redacted_payload()},
        {"type": "tool_use", "id": "toolu_01A09q90qw90lq917835lq9", "name": "list", "input": {}},
    ]


@pytest.mark.parametrize(
    ("raw", "reason"),
    [
        ("end_turn", "end_turn"),
        ("stop_sequence", "end_turn"),
        ("tool_use", "tool_use"),
        ("max_tokens", "max_tokens"),
        ("refusal", "refusal"),
        ("pause_turn", "other"),
    ],
)
async def test_stop_reasons(server: FakeAnthropic, raw: str, reason: FinishReason) -> None:
    server.replies.append(_minimal_stream(stop_reason=raw))
    events = await collect(server.provider())
    assert events[-1] == Finished(reason=reason, raw_reason=raw)


async def test_invalid_tool_json_is_reported_not_raised(server: FakeAnthropic) -> None:
    server.replies.append(
        sse_events(
            _message_start(),
            {
                "type": "content_block_start",
                "index": 0,
                "content_block": {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {}},
            },
            {
                "type": "content_block_delta",
                "index": 0,
                "delta": {"type": "input_json_delta", "partial_json": '{"file_path": '},
            },
            {"type": "content_block_stop", "index": 0},
            *_finish("max_tokens"),
        )
    )
    events = await collect(server.provider())
    ended = next(e for e in events if isinstance(e, ToolCallEnded))
    assert ended.input == {}
    assert ended.parse_error is not None
    assert "not valid JSON" in ended.parse_error


# --- the request ----------------------------------------------------------------------------


async def test_request_body_shape(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_text.txt"))
    tools = (
        ToolSpec(
            name="read",
            description="Read a file",
            input_schema={"type": "object"},
            kind="read",
            mutates=False,
            permission=PermissionKind.READ,
        ),
        ToolSpec(
            name="bash",
            description="Run a command",
            input_schema={"type": "object"},
            kind="execute",
            mutates=True,
            permission=PermissionKind.READ,
        ),
    )
    messages = (
        Message(role="user", parts=(TextPart(text="fix it"),)),
        Message(
            role="assistant",
            parts=(
                ReasoningPart(text="unsigned thoughts from another provider"),
                TextPart(text="Running tests."),
                ToolCallPart(tool_call_id="t1", name="bash", input={"command": "pytest"}),
                ToolCallPart(tool_call_id="t2", name="read", input={"file_path": "x"}),
            ),
        ),
        Message(
            role="user",
            parts=(
                ToolResultPart(tool_call_id="t1", output="1 failed", is_error=True),
                ToolResultPart(tool_call_id="t2", output="contents"),
            ),
        ),
    )
    req = request(
        system=(
            SystemBlock(text="mode prompt", cache=True),
            SystemBlock(text="baseline note", cache=True),
            SystemBlock(text="volatile"),
        ),
        messages=messages,
        tools=tools,
        tool_choice="none",
        max_output_tokens=4096,
    )
    await collect(server.provider(), req)
    body = server.body()
    ephemeral = {"type": "ephemeral"}
    assert body["model"] == "claude-test"
    assert body["max_tokens"] == 4096
    assert "thinking" not in body
    assert body["system"] == [
        {"type": "text", "text": "mode prompt", "cache_control": ephemeral},
        {"type": "text", "text": "baseline note", "cache_control": ephemeral},
        {"type": "text", "text": "volatile"},
    ]
    assert body["tools"] == [
        {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}},
        {
            "name": "bash",
            "description": "Run a command",
            "input_schema": {"type": "object"},
            "cache_control": ephemeral,
        },
    ]
    assert body["tool_choice"] == {"type": "none"}
    assert body["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "fix it"}]},
        {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Running tests."},
                {"type": "tool_use", "id": "t1", "name": "bash", "input": {"command": "pytest"}},
                {"type": "tool_use", "id": "t2", "name": "read", "input": {"file_path": "x"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {
                    "type": "tool_result",
                    "tool_use_id": "t1",
                    "content": "1 failed",
                    "is_error": True,
                },
                {
                    "type": "tool_result",
                    "tool_use_id": "t2",
                    "content": "contents",
                    "cache_control": ephemeral,
                },
            ],
        },
    ]


async def test_at_most_four_cache_breakpoints(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_text.txt"))
    system = tuple(SystemBlock(text=f"block {i}", cache=True) for i in range(5))
    tools = (
        ToolSpec(
            name="read",
            description="Read",
            input_schema={"type": "object"},
            kind="read",
            mutates=False,
            permission=PermissionKind.READ,
        ),
    )
    await collect(server.provider(), request(system=system, tools=tools))
    body = server.body()
    assert json.dumps(body).count('"cache_control"') == 4
    assert "cache_control" in body["tools"][-1]
    assert "cache_control" in body["messages"][-1]["content"][-1]
    assert [("cache_control" in block) for block in body["system"]] == [
        False,
        False,
        False,
        True,
        True,
    ]


async def test_tool_choice_auto_and_no_tools(server: FakeAnthropic) -> None:
    server.replies += [sse("anthropic_text.txt"), sse("anthropic_text.txt")]
    tools = (
        ToolSpec(
            name="read",
            description="Read",
            input_schema={"type": "object"},
            kind="read",
            mutates=False,
            permission=PermissionKind.READ,
        ),
    )
    provider = server.provider()
    await collect(provider, request(tools=tools))
    assert server.body()["tool_choice"] == {"type": "auto"}
    await collect(provider, request(system=()))
    assert "tools" not in server.body()
    assert "tool_choice" not in server.body()
    assert "system" not in server.body()


# --- keys and endpoints ---------------------------------------------------------------------


async def test_missing_key_names_the_variable(server: FakeAnthropic) -> None:
    with pytest.raises(ProviderError) as info:
        await collect(server.provider(env={}))
    assert info.value.kind == "auth"
    assert info.value.message == "ANTHROPIC_API_KEY is not set"
    assert server.requests == []


async def test_key_is_read_at_request_time(server: FakeAnthropic) -> None:
    env: dict[str, str] = {}
    provider = server.provider(env=env, api_key_env="MY_CLAUDE_KEY")
    with pytest.raises(ProviderError, match="MY_CLAUDE_KEY is not set"):
        await collect(provider)
    server.replies += [sse("anthropic_text.txt"), sse("anthropic_text.txt")]
    env["MY_CLAUDE_KEY"] = "first-key"
    await collect(provider)
    env["MY_CLAUDE_KEY"] = "second-key"
    await collect(provider)
    assert [r.headers["authorization"] for r in server.requests] == [
        "Bearer first-key",
        "Bearer second-key",
    ]


async def test_base_url_from_env_when_not_configured(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_text.txt"))
    env = {"ANTHROPIC_API_KEY": KEY, "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999/proxy"}
    await collect(server.provider(env=env, api_key_env=None, base_url=None))
    assert server.requests[0].url == "http://127.0.0.1:9999/proxy/v1/messages"


# --- errors ---------------------------------------------------------------------------------


async def test_401_is_auth_naming_the_variable(server: FakeAnthropic) -> None:
    server.replies.append(api_error(401, "authentication_error", "invalid x-api-key"))
    env = {"MY_CLAUDE_KEY": KEY}
    _, error = await collect_until_error(server.provider(env=env, api_key_env="MY_CLAUDE_KEY"))
    assert error.kind == "auth"
    assert error.status == 401
    assert error.message == "authentication failed (401): check MY_CLAUDE_KEY"
    assert not error.retryable


async def test_key_echoed_by_the_server_is_redacted(server: FakeAnthropic) -> None:
    server.replies.append(api_error(400, "invalid_request_error", f"bad header value {KEY}"))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "bad_request"
    assert "[redacted]" in error.message


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({"retry-after": "7"}, 7.0),
        ({"retry-after-ms": "1500", "retry-after": "2"}, 1.5),
        ({}, None),
    ],
)
async def test_429_is_rate_limit_with_retry_after(
    server: FakeAnthropic, headers: dict[str, str], expected: float | None
) -> None:
    server.replies.append(api_error(429, "rate_limit_error", "Number of requests", headers))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "rate_limit"
    assert error.retry_after == expected
    assert error.retryable


def test_retry_after_http_date() -> None:
    now = 1_700_000_000.0
    date = email.utils.formatdate(now + 30, usegmt=True)
    assert parse_retry_after(httpx2.Headers({"Retry-After": date}), now=now) == 30.0
    assert parse_retry_after(httpx2.Headers({"retry-after": "soon"})) is None
    assert parse_retry_after(None) is None


@pytest.mark.parametrize(
    ("status", "error_type", "kind"),
    [
        (529, "overloaded_error", "overloaded"),
        (500, "api_error", "server"),
        (503, "api_error", "server"),
        (403, "permission_error", "auth"),
        (404, "not_found_error", "bad_request"),
    ],
)
async def test_status_classification(
    server: FakeAnthropic, status: int, error_type: str, kind: str
) -> None:
    server.replies.append(api_error(status, error_type, "something"))
    _, error = await collect_until_error(server.provider())
    assert (error.kind, error.status) == (kind, status)


async def test_prompt_too_long_is_context_overflow(server: FakeAnthropic) -> None:
    server.replies.append(
        api_error(
            400, "invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"
        )
    )
    _, error = await collect_until_error(server.provider())
    assert isinstance(error, ContextOverflow)
    assert error.kind == "context_overflow"
    assert "210000 tokens" in error.message


async def test_other_400_is_bad_request_with_what_the_provider_said(
    server: FakeAnthropic,
) -> None:
    server.replies.append(api_error(400, "invalid_request_error", "max_tokens: must be positive"))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "bad_request"
    assert error.message == "request rejected (400): max_tokens: must be positive"


async def test_overloaded_error_event_mid_stream(server: FakeAnthropic) -> None:
    server.replies.append(sse("anthropic_overloaded_midstream.txt"))
    events, error = await collect_until_error(server.provider())
    assert TextDelta(text="Let me") in events
    assert error.kind == "overloaded"


async def test_unknown_error_event_after_output_is_stream_dropped(server: FakeAnthropic) -> None:
    server.replies.append(
        sse_text(
            (FIXTURES / "anthropic_truncated.txt").read_text()
            + 'event: error\ndata: {"type": "error", "error": {"type": "mystery_error"}}\n\n'
        )
    )
    _, error = await collect_until_error(server.provider())
    assert error.kind == "stream_dropped"


async def test_connection_breaking_mid_stream_is_stream_dropped(server: FakeAnthropic) -> None:
    data = (FIXTURES / "anthropic_truncated.txt").read_bytes()
    server.replies.append(
        httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, stream=BrokenStream(data)
        )
    )
    events, error = await collect_until_error(server.provider())
    assert TextDelta(text="Partial") in events
    assert error.kind == "stream_dropped"
    assert isinstance(error.__cause__, httpx2.ReadError)
    assert not error.retryable


async def test_stream_ending_without_message_stop_is_stream_dropped(
    server: FakeAnthropic,
) -> None:
    server.replies.append(sse("anthropic_truncated.txt"))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "stream_dropped"


async def test_no_connection_is_connection_error(server: FakeAnthropic) -> None:
    def refuse(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ConnectError("connection refused", request=request)

    server.replies.append(refuse)
    events, error = await collect_until_error(server.provider())
    assert events == []
    assert error.kind == "connection"
    assert error.retryable


def test_importing_providers_loads_no_sdk() -> None:
    code = (
        "import lsp_agent.providers, sys; "
        "assert 'anthropic' not in sys.modules and 'openai' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --- helpers --------------------------------------------------------------------------------


def _redacted_payload() -> str:
    for line in (FIXTURES / "anthropic_thinking.txt").read_text().splitlines():
        if '"redacted_thinking"' in line:
            data: str = json.loads(line.removeprefix("data: "))["content_block"]["data"]
            return data
    raise AssertionError("fixture has no redacted_thinking block")


def _message_start() -> dict[str, Any]:
    return {
        "type": "message_start",
        "message": {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "content": [],
            "model": "claude-test",
            "stop_reason": None,
            "usage": {"input_tokens": 10, "output_tokens": 1},
        },
    }


def _finish(stop_reason: str) -> list[dict[str, Any]]:
    return [
        {
            "type": "message_delta",
            "delta": {"stop_reason": stop_reason},
            "usage": {"output_tokens": 3},
        },
        {"type": "message_stop"},
    ]


def _minimal_stream(*, stop_reason: str) -> httpx2.Response:
    return sse_events(_message_start(), *_finish(stop_reason))
