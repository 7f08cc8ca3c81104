"""OpenAIProvider (OpenAI and compatible servers) on httpx2.MockTransport and SSE transcripts."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any, Literal

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
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.providers import make_provider

FIXTURES = Path(__file__).parents[2] / "fixtures" / "sse"
KEY = "sk-proj-test-SECRET-9876543210"
Reply = httpx2.Response | Callable[[httpx2.Request], httpx2.Response]
Kind = Literal["openai", "openai-compatible"]


class FakeOpenAI:
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
        kind: Kind = "openai",
        env: dict[str, str] | None = None,
        *,
        api_key_env: str | None = "OPENAI_API_KEY",
        base_url: str | None = "https://openai.test/v1",
    ) -> Provider:
        return make_provider(
            kind,
            name="local" if kind == "openai-compatible" else "openai",
            base_url=base_url,
            api_key_env=api_key_env,
            env={"OPENAI_API_KEY": KEY} if env is None else env,
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
async def server() -> AsyncIterator[FakeOpenAI]:
    fake = FakeOpenAI()
    async with httpx2.AsyncClient(transport=httpx2.MockTransport(fake.handle)) as client:
        fake.client = client
        yield fake


def sse(name: str) -> httpx2.Response:
    return sse_text((FIXTURES / name).read_text())


def sse_text(text: str) -> httpx2.Response:
    return httpx2.Response(200, headers={"content-type": "text/event-stream"}, content=text)


def chunks(*choices: dict[str, Any]) -> httpx2.Response:
    """A stream of one chunk per choice, then ``[DONE]``."""
    lines = [
        json.dumps(
            {
                "id": "chatcmpl-x",
                "object": "chat.completion.chunk",
                "created": 1730000000,
                "model": "m",
                "choices": [{"index": 0, "logprobs": None, "finish_reason": None, **choice}],
            }
        )
        for choice in choices
    ]
    return sse_text("".join(f"data: {line}\n\n" for line in [*lines, "[DONE]"]))


def api_error(
    status: int,
    message: str,
    *,
    error_type: str = "invalid_request_error",
    code: str | None = None,
    headers: dict[str, str] | None = None,
) -> httpx2.Response:
    body = {"error": {"message": message, "type": error_type, "param": None, "code": code}}
    return httpx2.Response(status, headers=headers, json=body)


def request(**overrides: Any) -> ModelRequest:
    fields: dict[str, Any] = {
        "model": "gpt-test",
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


async def test_text_stream_with_cached_usage(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_text.txt"))
    events = await collect(server.provider())
    assert events == [
        TextDelta(text="Hello"),
        TextDelta(text=" world"),
        UsageReported(usage=Usage(input_tokens=176, cache_read_tokens=1024, output_tokens=12)),
        Finished(reason="end_turn", raw_reason="stop"),
    ]
    sent = server.requests[0]
    assert sent.url == "https://openai.test/v1/chat/completions"
    assert sent.headers["authorization"] == f"Bearer {KEY}"


async def test_parallel_tool_calls_with_fragmented_args(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_tool_call.txt"))
    events = await collect(server.provider())
    assert events == [
        ToolCallStarted(tool_call_id="call_abc123", name="read"),
        ToolCallArgsDelta(tool_call_id="call_abc123", json_fragment='{"file_'),
        ToolCallArgsDelta(tool_call_id="call_abc123", json_fragment='path": "src/a.py"}'),
        ToolCallStarted(tool_call_id="call_def456", name="grep"),
        ToolCallArgsDelta(tool_call_id="call_def456", json_fragment='{"pattern": '),
        ToolCallArgsDelta(tool_call_id="call_def456", json_fragment='"TODO"}'),
        ToolCallEnded(tool_call_id="call_abc123", name="read", input={"file_path": "src/a.py"}),
        ToolCallEnded(tool_call_id="call_def456", name="grep", input={"pattern": "TODO"}),
        UsageReported(usage=Usage(input_tokens=300, output_tokens=80, reasoning_tokens=32)),
        Finished(reason="tool_use", raw_reason="tool_calls"),
    ]


async def test_reasoning_content_from_a_compatible_server(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_reasoning.txt"))
    events = await collect(server.provider("openai-compatible", api_key_env=None))
    assert events == [
        ReasoningDelta(text="Think"),
        ReasoningDelta(text="ing..."),
        TextDelta(text="Done."),
        UsageReported(usage=Usage(input_tokens=50, output_tokens=7)),
        Finished(reason="max_tokens", raw_reason="length"),
    ]


async def test_reasoning_field_and_call_without_id(server: FakeOpenAI) -> None:
    # Some servers name the field `reasoning`, send a whole call in one delta, omit its id,
    # and report "stop" after tool calls; none of that should reach the core.
    server.replies.append(
        chunks(
            {"delta": {"role": "assistant", "reasoning": "hmm"}},
            {
                "delta": {
                    "tool_calls": [
                        {"index": 0, "function": {"name": "list", "arguments": '{"path": "."}'}}
                    ]
                }
            },
            {"delta": {}, "finish_reason": "stop"},
        )
    )
    events = await collect(server.provider("openai-compatible", api_key_env=None))
    assert events == [
        ReasoningDelta(text="hmm"),
        ToolCallStarted(tool_call_id="call_0", name="list"),
        ToolCallArgsDelta(tool_call_id="call_0", json_fragment='{"path": "."}'),
        ToolCallEnded(tool_call_id="call_0", name="list", input={"path": "."}),
        Finished(reason="tool_use", raw_reason="stop"),
    ]


@pytest.mark.parametrize(
    ("arguments", "expected", "error"),
    [("", {}, None), ('{"a": ', {}, "not valid JSON"), ("[1]", {}, "JSON object")],
)
async def test_tool_arguments_parsing(
    server: FakeOpenAI, arguments: str, expected: dict[str, Any], error: str | None
) -> None:
    call = {"index": 0, "id": "c1", "function": {"name": "read", "arguments": arguments}}
    server.replies.append(
        chunks({"delta": {"tool_calls": [call]}}, {"delta": {}, "finish_reason": "tool_calls"})
    )
    events = await collect(server.provider())
    ended = next(e for e in events if isinstance(e, ToolCallEnded))
    assert ended.input == expected
    if error is None:
        assert ended.parse_error is None
    else:
        assert ended.parse_error is not None
        assert error in ended.parse_error


async def test_content_filter_is_refusal(server: FakeOpenAI) -> None:
    server.replies.append(chunks({"delta": {}, "finish_reason": "content_filter"}))
    events = await collect(server.provider())
    assert events == [Finished(reason="refusal", raw_reason="content_filter")]


# --- the request ----------------------------------------------------------------------------


def _conversation() -> tuple[Message, ...]:
    return (
        Message(role="user", parts=(TextPart(text="fix it"),)),
        Message(
            role="assistant",
            parts=(
                ReasoningPart(text="private thoughts", signature="sig"),
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
                TextPart(text="also check the docs"),
            ),
        ),
        Message(role="assistant", parts=(ReasoningPart(text="only thinking"),)),
    )


async def test_request_body_shape(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_text.txt"))
    tools = (
        ToolSpec(
            name="read",
            description="Read a file",
            input_schema={"type": "object"},
            kind="read",
            mutates=False,
            permission=PermissionKind.READ,
        ),
    )
    req = request(
        system=(SystemBlock(text="mode prompt", cache=True), SystemBlock(text="baseline")),
        messages=_conversation(),
        tools=tools,
        tool_choice="none",
        max_output_tokens=4096,
    )
    await collect(server.provider(), req)
    body = server.body()
    assert body["model"] == "gpt-test"
    assert body["stream"] is True
    assert body["stream_options"] == {"include_usage": True}
    assert body["max_completion_tokens"] == 4096
    assert "max_tokens" not in body
    assert "reasoning_effort" not in body
    assert body["tools"] == [
        {
            "type": "function",
            "function": {
                "name": "read",
                "description": "Read a file",
                "parameters": {"type": "object"},
            },
        }
    ]
    assert body["tool_choice"] == "none"
    assert body["messages"] == [
        {"role": "system", "content": "mode prompt\n\nbaseline"},
        {"role": "user", "content": "fix it"},
        {
            "role": "assistant",
            "content": "Running tests.",
            "tool_calls": [
                {
                    "id": "t1",
                    "type": "function",
                    "function": {"name": "bash", "arguments": '{"command": "pytest"}'},
                },
                {
                    "id": "t2",
                    "type": "function",
                    "function": {"name": "read", "arguments": '{"file_path": "x"}'},
                },
            ],
        },
        {"role": "tool", "tool_call_id": "t1", "content": "Error: 1 failed"},
        {"role": "tool", "tool_call_id": "t2", "content": "contents"},
        {"role": "user", "content": "also check the docs"},
    ]


async def test_compatible_server_gets_max_tokens_and_a_dummy_key(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_text.txt"))
    provider = server.provider(
        "openai-compatible", env={}, api_key_env=None, base_url="http://127.0.0.1:11434/v1"
    )
    assert provider.name == "local"
    await collect(provider, request(thinking=ThinkingConfig(budget_tokens=9000)))
    body = server.body()
    assert body["max_tokens"] == 8192
    assert "max_completion_tokens" not in body
    assert "reasoning_effort" not in body
    sent = server.requests[0]
    assert sent.url == "http://127.0.0.1:11434/v1/chat/completions"
    assert sent.headers["authorization"] == "Bearer not-needed"


@pytest.mark.parametrize(("budget", "effort"), [(1024, "low"), (4000, "medium"), (16000, "high")])
async def test_reasoning_effort_from_budget(server: FakeOpenAI, budget: int, effort: str) -> None:
    server.replies.append(sse("openai_text.txt"))
    await collect(server.provider(), request(thinking=ThinkingConfig(budget_tokens=budget)))
    assert server.body()["reasoning_effort"] == effort


# --- keys and endpoints ---------------------------------------------------------------------


async def test_missing_key_names_the_variable(server: FakeOpenAI) -> None:
    with pytest.raises(ProviderError) as info:
        await collect(server.provider(env={}, api_key_env=None))
    assert info.value.kind == "auth"
    assert info.value.message == "OPENAI_API_KEY is not set"
    assert server.requests == []


async def test_compatible_server_with_a_key_variable_requires_it(server: FakeOpenAI) -> None:
    with pytest.raises(ProviderError, match="LOCAL_API_KEY is not set"):
        await collect(server.provider("openai-compatible", env={}, api_key_env="LOCAL_API_KEY"))


async def test_base_url_from_env_when_not_configured(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_text.txt"))
    env = {"OPENAI_API_KEY": KEY, "OPENAI_BASE_URL": "http://127.0.0.1:8080/v1"}
    await collect(server.provider(env=env, base_url=None))
    assert server.requests[0].url == "http://127.0.0.1:8080/v1/chat/completions"


# --- errors ---------------------------------------------------------------------------------


async def test_401_is_auth_naming_the_variable(server: FakeOpenAI) -> None:
    server.replies.append(
        api_error(401, f"Incorrect API key provided: {KEY}.", code="invalid_api_key")
    )
    _, error = await collect_until_error(server.provider())
    assert error.kind == "auth"
    assert error.message == "authentication failed (401): check OPENAI_API_KEY"


async def test_429_with_retry_after_ms(server: FakeOpenAI) -> None:
    headers = {"retry-after-ms": "250", "retry-after": "1"}
    server.replies.append(
        api_error(429, "Rate limit reached", code="rate_limit_exceeded", headers=headers)
    )
    _, error = await collect_until_error(server.provider())
    assert (error.kind, error.retry_after) == ("rate_limit", 0.25)


async def test_429_insufficient_quota_is_not_retryable(server: FakeOpenAI) -> None:
    server.replies.append(api_error(429, "You exceeded your quota", code="insufficient_quota"))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "bad_request"
    assert not error.retryable


@pytest.mark.parametrize(
    ("status", "kind"), [(500, "server"), (502, "server"), (529, "overloaded")]
)
async def test_server_statuses(server: FakeOpenAI, status: int, kind: str) -> None:
    server.replies.append(api_error(status, "boom", error_type="server_error"))
    _, error = await collect_until_error(server.provider())
    assert (error.kind, error.status) == (kind, status)


@pytest.mark.parametrize(
    ("message", "code"),
    [
        ("This model's maximum context length is 128000 tokens.", "context_length_exceeded"),
        ("This model's maximum context length is 32768 tokens. However, you requested 40000", None),
        ("the request exceeds the available context size, try increasing it", None),
    ],
)
async def test_context_overflow(server: FakeOpenAI, message: str, code: str | None) -> None:
    server.replies.append(api_error(400, message, code=code))
    _, error = await collect_until_error(server.provider())
    assert isinstance(error, ContextOverflow)
    assert error.kind == "context_overflow"


async def test_other_400_is_bad_request(server: FakeOpenAI) -> None:
    server.replies.append(api_error(400, "Invalid value for 'tool_choice'."))
    _, error = await collect_until_error(server.provider())
    assert error.message == "request rejected (400): Invalid value for 'tool_choice'."


async def test_error_object_mid_stream_is_classified(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_error_midstream.txt"))
    events, error = await collect_until_error(server.provider())
    assert events == [TextDelta(text="Sure")]
    assert error.kind == "server"


async def test_connection_breaking_mid_stream_is_stream_dropped(server: FakeOpenAI) -> None:
    data = (FIXTURES / "openai_truncated.txt").read_bytes()
    server.replies.append(
        httpx2.Response(
            200, headers={"content-type": "text/event-stream"}, stream=BrokenStream(data)
        )
    )
    events, error = await collect_until_error(server.provider())
    assert events == [TextDelta(text="Partial")]
    assert error.kind == "stream_dropped"


async def test_stream_ending_without_finish_reason_is_stream_dropped(server: FakeOpenAI) -> None:
    server.replies.append(sse("openai_truncated.txt"))
    _, error = await collect_until_error(server.provider())
    assert error.kind == "stream_dropped"


async def test_empty_stream_is_a_connection_error(server: FakeOpenAI) -> None:
    server.replies.append(sse_text("data: [DONE]\n\n"))
    events, error = await collect_until_error(server.provider())
    assert events == []
    assert error.kind == "connection"


async def test_timeout_before_response_is_connection(server: FakeOpenAI) -> None:
    def time_out(request: httpx2.Request) -> httpx2.Response:
        raise httpx2.ReadTimeout("timed out", request=request)

    server.replies.append(time_out)
    _, error = await collect_until_error(server.provider())
    assert error.kind == "connection"
    assert error.retryable
