"""A scripted fake LLM server speaking the real Anthropic and OpenAI streaming wire formats.

The server is a minimal HTTP/1.1 server written on ``asyncio`` streams. It answers

* ``POST /v1/messages`` in the Anthropic Messages format (SSE when ``"stream": true``),
* ``POST /v1/chat/completions`` in the OpenAI Chat Completions format (SSE when
  ``"stream": true``),
* ``POST /v1/messages/count_tokens`` with a token estimate,

from a *script*: a list of turns, each describing one model response (text, thinking,
tool calls, an HTTP error, a dropped connection, delays...). Requests that offer no tools
are *side requests* (e.g. title generation): they get a fixed short answer and do not
consume the script. See ``docs/fake-llm.md`` for the script and log formats.

Control endpoints: ``GET /_health``, ``GET /_log`` (the request log as JSON) and
``POST /_script`` (replace the script at run time).

Use it in-process (``async with FakeLLMServer(script) as server``), from synchronous
tests (``with running_fake_llm(script) as server``, which runs the server's loop in a
background thread) or as a separate process
(``python -m lsp_agent.testing.fake_llm --script FILE.json``).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import hashlib
import http
import json
import math
import os
import re
import signal
import socket
import sys
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

__all__ = [
    "DEFAULT_SIDE_TEXT",
    "FakeLLMServer",
    "Inject",
    "RequestRecord",
    "Script",
    "ScriptError",
    "StreamError",
    "ToolCall",
    "Turn",
    "TurnUsage",
    "load_script",
    "main",
    "parse_script",
    "running_fake_llm",
]

DEFAULT_SIDE_TEXT = "Test title"
DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
_MAX_HEAD_BYTES = 64 * 1024

# --------------------------------------------------------------------------- script model

AnthropicStopReason = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
OpenAIFinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
ErrorPreset = Literal[
    "context_overflow",
    "rate_limit",
    "overloaded",
    "auth",
    "server_error",
    "invalid_request",
]

_ANTHROPIC_TO_OPENAI_FINISH: dict[str, str] = {
    "end_turn": "stop",
    "max_tokens": "length",
    "stop_sequence": "stop",
    "tool_use": "tool_calls",
    "pause_turn": "stop",
    "refusal": "content_filter",
    "model_context_window_exceeded": "length",
}
_OPENAI_TO_ANTHROPIC_STOP: dict[str, str] = {
    "stop": "end_turn",
    "length": "max_tokens",
    "tool_calls": "tool_use",
    "content_filter": "refusal",
}


class _StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_StrictModel):
    """One tool call made by the model.

    ``input`` is serialised to JSON and streamed in several fragments. ``arguments_raw``
    streams a literal string instead (e.g. deliberately malformed JSON). ``id`` overrides
    the generated ``toolu_…``/``call_…`` id.
    """

    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    arguments_raw: str | None = None
    id: str | None = Field(default=None, min_length=1)


class TurnUsage(_StrictModel):
    """Usage numbers to report; ``None`` fields get the deterministic defaults."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int | None = Field(default=None, ge=0)
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)


class StreamError(_StrictModel):
    """An error event sent in the middle of a 200 stream, after ``after`` SSE events."""

    after: int = Field(default=0, ge=0)
    type: str = "overloaded_error"
    message: str = "Overloaded"


class Inject(_StrictModel):
    """Raw bytes written into a stream before event ``before`` (malformed-SSE tests)."""

    before: int = Field(ge=0)
    raw: str


_SUCCESS_FIELDS = frozenset(
    {"text", "thinking", "signature", "tool_calls", "stop_reason", "usage", "stream_error"}
)
_STREAM_FAULT_FIELDS = frozenset({"drop_after", "stall_after", "event_order", "inject"})
_ERROR_ONLY_FIELDS = frozenset(
    {
        "error_type",
        "error_message",
        "error_code",
        "times",
        "retry_after",
        "retry_after_ms",
        "should_retry",
        "then",
    }
)


class Turn(_StrictModel):
    """One scripted model response (or a run of HTTP errors followed by ``then``)."""

    # success part
    text: str | list[str] | None = None
    thinking: str | list[str] | None = None
    signature: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: AnthropicStopReason | OpenAIFinishReason | None = None
    usage: TurnUsage | None = None
    stream_error: StreamError | None = None
    # error part
    status: int | None = Field(default=None, ge=400, le=599)
    error: ErrorPreset | None = None
    error_type: str | None = None
    error_message: str | None = None
    error_code: str | None = None
    times: int = Field(default=1, ge=1, le=1000)
    retry_after: float | None = Field(default=None, ge=0)
    retry_after_ms: float | None = Field(default=None, ge=0)
    should_retry: bool | None = None
    then: Turn | None = None
    # faults and timing
    drop_after: int | None = Field(default=None, ge=0)
    stall_after: int | None = Field(default=None, ge=0)
    hold_after: int | None = Field(default=None, ge=0)
    event_order: list[int] | None = None
    inject: list[Inject] = Field(default_factory=list)
    delay: float = Field(default=0.0, ge=0, le=600)
    chunk_delay: float = Field(default=0.0, ge=0, le=60)
    paced: bool = False

    @property
    def is_error(self) -> bool:
        return self.status is not None or self.error is not None

    @model_validator(mode="after")
    def _check_consistency(self) -> Self:
        given = self.model_fields_set
        if self.is_error:
            clash = sorted(given & _SUCCESS_FIELDS)
            if clash:
                raise ValueError(
                    f"an error turn (`status`/`error`) cannot also set {clash}; "
                    "put the response served after the errors in `then`"
                )
            faults = sorted(given & (_STREAM_FAULT_FIELDS | {"hold_after"}))
            if faults:
                raise ValueError(f"{faults} apply to success turns, not error turns")
        else:
            misplaced = sorted(given & _ERROR_ONLY_FIELDS)
            if misplaced:
                raise ValueError(
                    f"{misplaced} only apply to error turns; set `status` or `error` too"
                )
            if not given & (_SUCCESS_FIELDS | _STREAM_FAULT_FIELDS):
                raise ValueError(
                    "empty turn: give `text`, `thinking`, `tool_calls`, `stream_error`, "
                    '`drop_after`, or an error `status`/`error` (use "text": "" for an '
                    "empty answer)"
                )
        if "signature" in given and self.thinking is None:
            raise ValueError("`signature` needs `thinking`")
        return self


class Script(_StrictModel):
    """A whole script. A bare JSON list is accepted as ``{"turns": [...]}``."""

    turns: list[Turn] = Field(default_factory=list)
    side_requests_use_script: bool = False
    side_text: str = DEFAULT_SIDE_TEXT
    side_turn: Turn | None = None
    """Served to every side request instead of ``side_text`` (e.g. a stalled summary)."""
    by_history: bool = False
    """Serve turn *k* to a request whose conversation holds *k* assistant messages, instead
    of the turns in arrival order: concurrent conversations each walk the script."""

    @model_validator(mode="after")
    def _history_turns_are_answers(self) -> Self:
        if self.by_history and any(turn.is_error for turn in self.turns):
            raise ValueError("`by_history` scripts take success turns only")
        if self.side_turn is not None and self.side_turn.is_error:
            raise ValueError("`side_turn` must be a success turn")
        return self

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"turns": data}
        return data


class ScriptError(ValueError):
    """The script is not valid; the message lists every problem with its location."""


def _format_validation_error(err: ValidationError, source: str) -> str:
    lines = [f"invalid fake LLM script ({source}):"]
    for item in err.errors():
        loc = ".".join(str(part) for part in item["loc"]) or "<root>"
        lines.append(f"  {loc}: {item['msg']}")
    return "\n".join(lines)


ScriptLike = Script | Mapping[str, Any] | Sequence[Any]


def parse_script(data: ScriptLike | None, *, source: str = "<data>") -> Script:
    """Validate ``data`` (a ``Script``, a mapping or a list of turns) into a ``Script``."""
    if data is None:
        return Script()
    if isinstance(data, Script):
        return data
    if isinstance(data, str | bytes):
        raise ScriptError(f"invalid fake LLM script ({source}): expected an object or a list")
    try:
        return Script.model_validate(data)
    except ValidationError as err:
        raise ScriptError(_format_validation_error(err, source)) from None


def load_script(path: str | os.PathLike[str]) -> Script:
    """Read and validate a JSON script file."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise ScriptError(f"cannot read fake LLM script {p}: {err}") from err
    except json.JSONDecodeError as err:
        raise ScriptError(f"fake LLM script {p} is not valid JSON: {err}") from err
    return parse_script(raw, source=str(p))


# --------------------------------------------------------------------------- errors


@dataclasses.dataclass(frozen=True)
class _ErrorInfo:
    status: int
    anthropic_type: str
    anthropic_message: str
    openai_type: str
    openai_message: str
    openai_code: str | None = None
    openai_param: str | None = None


_PRESETS: dict[str, _ErrorInfo] = {
    "context_overflow": _ErrorInfo(
        400,
        "invalid_request_error",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "invalid_request_error",
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 250000 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        "messages",
    ),
    "rate_limit": _ErrorInfo(
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization. Please try again later.",
        "requests",
        "Rate limit reached for requests. Please try again later.",
        "rate_limit_exceeded",
    ),
    "overloaded": _ErrorInfo(
        529,
        "overloaded_error",
        "Overloaded",
        "server_error",
        "The server is overloaded or not ready yet.",
    ),
    "auth": _ErrorInfo(
        401,
        "authentication_error",
        "invalid x-api-key",
        "invalid_request_error",
        "Incorrect API key provided.",
        "invalid_api_key",
    ),
    "server_error": _ErrorInfo(
        500,
        "api_error",
        "Internal server error",
        "server_error",
        "The server had an error while processing your request.",
    ),
    "invalid_request": _ErrorInfo(
        400,
        "invalid_request_error",
        "Invalid request",
        "invalid_request_error",
        "Invalid request",
    ),
}

_ANTHROPIC_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_OPENAI_BY_STATUS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def _resolve_error(turn: Turn) -> _ErrorInfo:
    if turn.error is not None:
        base = _PRESETS[turn.error]
    else:
        status = turn.status if turn.status is not None else 500
        a_type = _ANTHROPIC_TYPE_BY_STATUS.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        o_type, o_code = _OPENAI_BY_STATUS.get(
            status, ("server_error" if status >= 500 else "invalid_request_error", None)
        )
        message = f"fake error {status}"
        base = _ErrorInfo(status, a_type, message, o_type, message, o_code)
    return dataclasses.replace(
        base,
        status=turn.status if turn.status is not None else base.status,
        anthropic_type=turn.error_type or base.anthropic_type,
        openai_type=turn.error_type or base.openai_type,
        anthropic_message=turn.error_message or base.anthropic_message,
        openai_message=turn.error_message or base.openai_message,
        openai_code=turn.error_code if turn.error_code is not None else base.openai_code,
    )


Provider = Literal["anthropic", "openai"]


def _error_body(provider: Provider | None, info: _ErrorInfo, request_id: str) -> dict[str, Any]:
    if provider == "openai":
        return {
            "error": {
                "message": info.openai_message,
                "type": info.openai_type,
                "param": info.openai_param,
                "code": info.openai_code,
            }
        }
    return {
        "type": "error",
        "error": {"type": info.anthropic_type, "message": info.anthropic_message},
        "request_id": request_id,
    }


def _simple_error(status: int, message: str, anthropic_type: str | None = None) -> _ErrorInfo:
    a_type = anthropic_type or _ANTHROPIC_TYPE_BY_STATUS.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    o_type = "server_error" if status >= 500 else "invalid_request_error"
    return _ErrorInfo(status, a_type, message, o_type, message)


# --------------------------------------------------------------------------- request log


@dataclasses.dataclass
class RequestRecord:
    """One logged request. ``turn`` is the script turn index, ``"side"`` or ``None``."""

    seq: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    body_bytes: int
    provider: Provider | None
    stream: bool
    connection: int
    arrived_monotonic: float
    arrived_wall: float
    turn: int | Literal["side"] | None = None
    attempt: int | None = None
    kind: str = "pending"
    status: int | None = None
    ended_monotonic: float | None = None
    ended_wall: float | None = None
    events_sent: int = 0
    dropped: bool = False
    stalled: bool = False
    error: str | None = None
    delta_times: list[float] = dataclasses.field(default_factory=list)

    def copy(self) -> RequestRecord:
        """A copy that shares no mutable list with the live record."""
        return dataclasses.replace(self, delta_times=list(self.delta_times))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


# --------------------------------------------------------------------------- rendering


@dataclasses.dataclass(frozen=True)
class _Step:
    turn_index: int
    attempt: int
    turn: Turn


def _expand(turn: Turn, index: int) -> list[_Step]:
    steps: list[_Step] = []
    current: Turn | None = turn
    while current is not None:
        if current.is_error:
            for _ in range(current.times):
                steps.append(_Step(index, len(steps), current))
            current = current.then
        else:
            steps.append(_Step(index, len(steps), current))
            current = None
    return steps


_WORD_RE = re.compile(r"\S+\s*|\s+")


def _pieces(value: str | list[str] | None) -> list[str] | None:
    if value is None:
        return None
    if isinstance(value, list):
        return list(value)
    return _WORD_RE.findall(value)


def _fragments(s: str, parts: int = 3) -> list[str]:
    if not s:
        return []
    size = max(1, math.ceil(len(s) / parts))
    return [s[i : i + size] for i in range(0, len(s), size)]


def _fake_id(prefix: str, *parts: object, length: int = 24) -> str:
    digest = hashlib.sha256(":".join(str(p) for p in parts).encode()).hexdigest()
    return prefix + digest[:length]


@dataclasses.dataclass(frozen=True)
class _ToolOut:
    id_anthropic: str
    id_openai: str
    name: str
    arguments: str
    input: dict[str, Any]
    fragments: list[str]


@dataclasses.dataclass(frozen=True)
class _Completion:
    """A provider-neutral response computed from a turn and a request."""

    message_id: str
    model: str
    thinking: list[str] | None
    signature: str
    text: list[str] | None
    tools: list[_ToolOut]
    stop_reason: str  # Anthropic vocabulary
    input_tokens: int
    output_tokens: int
    cache_read: int
    cache_creation: int
    reasoning_tokens: int

    @property
    def finish_reason(self) -> str:
        return _ANTHROPIC_TO_OPENAI_FINISH.get(self.stop_reason, "stop")


def _completion(turn: Turn, body: Mapping[str, Any], body_bytes: int, seq: int) -> _Completion:
    thinking = _pieces(turn.thinking)
    text = _pieces(turn.text)
    tools: list[_ToolOut] = []
    for i, call in enumerate(turn.tool_calls):
        if call.arguments_raw is not None:
            arguments = call.arguments_raw
            try:
                parsed = json.loads(arguments)
            except json.JSONDecodeError:
                parsed = {}
            tool_input = parsed if isinstance(parsed, dict) else {}
        else:
            arguments = json.dumps(call.input, ensure_ascii=False)
            tool_input = dict(call.input)
        tools.append(
            _ToolOut(
                id_anthropic=call.id or _fake_id("toolu_fake", seq, i),
                id_openai=call.id or _fake_id("call_fake", seq, i),
                name=call.name,
                arguments=arguments,
                input=tool_input,
                fragments=_fragments(arguments),
            )
        )
    if turn.stop_reason is not None:
        stop = _OPENAI_TO_ANTHROPIC_STOP.get(turn.stop_reason, turn.stop_reason)
    else:
        stop = "tool_use" if tools else "end_turn"
    n_thinking = len(thinking or [])
    n_deltas = n_thinking + len(text or []) + sum(len(t.fragments) for t in tools)
    usage = turn.usage or TurnUsage()
    model = body.get("model")
    return _Completion(
        message_id=_fake_id("msg_fake", "msg", seq),
        model=model if isinstance(model, str) else "fake-model",
        thinking=thinking,
        signature=turn.signature or _fake_id("sig_fake", "sig", seq, length=40),
        text=text,
        tools=tools,
        stop_reason=stop,
        input_tokens=(
            usage.input_tokens if usage.input_tokens is not None else max(1, body_bytes // 4)
        ),
        output_tokens=usage.output_tokens if usage.output_tokens is not None else max(1, n_deltas),
        cache_read=usage.cache_read_input_tokens or 0,
        cache_creation=usage.cache_creation_input_tokens or 0,
        reasoning_tokens=n_thinking,
    )


def _anthropic_usage(c: _Completion, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": c.input_tokens,
        "cache_creation_input_tokens": c.cache_creation,
        "cache_read_input_tokens": c.cache_read,
        "output_tokens": output_tokens,
    }


def _anthropic_events(c: _Completion) -> list[tuple[str, dict[str, Any]]]:
    events: list[tuple[str, dict[str, Any]]] = [
        (
            "message_start",
            {
                "type": "message_start",
                "message": {
                    "id": c.message_id,
                    "type": "message",
                    "role": "assistant",
                    "model": c.model,
                    "content": [],
                    "stop_reason": None,
                    "stop_sequence": None,
                    "usage": _anthropic_usage(c, 1),
                },
            },
        ),
        ("ping", {"type": "ping"}),
    ]
    index = 0

    def block(start: dict[str, Any], deltas: list[dict[str, Any]]) -> None:
        nonlocal index
        events.append(
            (
                "content_block_start",
                {"type": "content_block_start", "index": index, "content_block": start},
            )
        )
        for delta in deltas:
            events.append(
                (
                    "content_block_delta",
                    {"type": "content_block_delta", "index": index, "delta": delta},
                )
            )
        events.append(("content_block_stop", {"type": "content_block_stop", "index": index}))
        index += 1

    if c.thinking is not None:
        block(
            {"type": "thinking", "thinking": "", "signature": ""},
            [{"type": "thinking_delta", "thinking": p} for p in c.thinking]
            + [{"type": "signature_delta", "signature": c.signature}],
        )
    if c.text is not None:
        block({"type": "text", "text": ""}, [{"type": "text_delta", "text": p} for p in c.text])
    for tool in c.tools:
        block(
            {"type": "tool_use", "id": tool.id_anthropic, "name": tool.name, "input": {}},
            [{"type": "input_json_delta", "partial_json": ""}]
            + [{"type": "input_json_delta", "partial_json": f} for f in tool.fragments],
        )
    events.append(
        (
            "message_delta",
            {
                "type": "message_delta",
                "delta": {"stop_reason": c.stop_reason, "stop_sequence": None},
                "usage": _anthropic_usage(c, c.output_tokens),
            },
        )
    )
    events.append(("message_stop", {"type": "message_stop"}))
    return events


def _anthropic_message(c: _Completion) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if c.thinking is not None:
        content.append(
            {"type": "thinking", "thinking": "".join(c.thinking), "signature": c.signature}
        )
    if c.text is not None:
        content.append({"type": "text", "text": "".join(c.text)})
    for tool in c.tools:
        content.append(
            {"type": "tool_use", "id": tool.id_anthropic, "name": tool.name, "input": tool.input}
        )
    return {
        "id": c.message_id,
        "type": "message",
        "role": "assistant",
        "model": c.model,
        "content": content,
        "stop_reason": c.stop_reason,
        "stop_sequence": None,
        "usage": _anthropic_usage(c, c.output_tokens),
    }


def _openai_usage(c: _Completion) -> dict[str, Any]:
    prompt = c.input_tokens + c.cache_read + c.cache_creation
    return {
        "prompt_tokens": prompt,
        "completion_tokens": c.output_tokens,
        "total_tokens": prompt + c.output_tokens,
        "prompt_tokens_details": {"cached_tokens": c.cache_read},
        "completion_tokens_details": {"reasoning_tokens": c.reasoning_tokens},
    }


def _openai_chunks(c: _Completion, created: int, include_usage: bool) -> list[dict[str, Any]]:
    chat_id = "chatcmpl-" + c.message_id.removeprefix("msg_")

    def chunk(delta: dict[str, Any], finish: str | None = None) -> dict[str, Any]:
        out: dict[str, Any] = {
            "id": chat_id,
            "object": "chat.completion.chunk",
            "created": created,
            "model": c.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        if include_usage:
            out["usage"] = None
        return out

    chunks = [chunk({"role": "assistant", "content": ""})]
    chunks.extend(chunk({"reasoning_content": p}) for p in c.thinking or [])
    chunks.extend(chunk({"content": p}) for p in c.text or [])
    for k, tool in enumerate(c.tools):
        chunks.append(
            chunk(
                {
                    "tool_calls": [
                        {
                            "index": k,
                            "id": tool.id_openai,
                            "type": "function",
                            "function": {"name": tool.name, "arguments": ""},
                        }
                    ]
                }
            )
        )
        chunks.extend(
            chunk({"tool_calls": [{"index": k, "function": {"arguments": f}}]})
            for f in tool.fragments
        )
    chunks.append(chunk({}, c.finish_reason))
    if include_usage:
        chunks.append(
            {
                "id": chat_id,
                "object": "chat.completion.chunk",
                "created": created,
                "model": c.model,
                "choices": [],
                "usage": _openai_usage(c),
            }
        )
    return chunks


def _openai_completion(c: _Completion, created: int) -> dict[str, Any]:
    message: dict[str, Any] = {
        "role": "assistant",
        "content": "".join(c.text) if c.text is not None else None,
        "refusal": None,
    }
    if c.thinking is not None:
        message["reasoning_content"] = "".join(c.thinking)
    if c.tools:
        message["tool_calls"] = [
            {
                "id": t.id_openai,
                "type": "function",
                "function": {"name": t.name, "arguments": t.arguments},
            }
            for t in c.tools
        ]
    return {
        "id": "chatcmpl-" + c.message_id.removeprefix("msg_"),
        "object": "chat.completion",
        "created": created,
        "model": c.model,
        "choices": [
            {"index": 0, "message": message, "logprobs": None, "finish_reason": c.finish_reason}
        ],
        "usage": _openai_usage(c),
    }


# --------------------------------------------------------------------------- HTTP plumbing


class _HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclasses.dataclass(frozen=True)
class _Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    connection: int
    arrived_monotonic: float
    arrived_wall: float
    version: str = "HTTP/1.1"

    @property
    def wants_close(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" not in connection
        return "close" in connection


async def _read_request(
    reader: asyncio.StreamReader, max_body: int, connection: int
) -> _Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as err:
        if not err.partial.strip():
            return None
        raise _HttpError(400, "truncated request head") from None
    except asyncio.LimitOverrunError:
        raise _HttpError(431, "request head too large") from None
    arrived_monotonic, arrived_wall = time.monotonic(), time.time()
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise _HttpError(400, f"bad request line: {lines[0][:200]!r}")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise _HttpError(400, f"bad header line: {line[:200]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise _HttpError(501, "chunked request bodies are not supported")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise _HttpError(400, "bad content-length") from None
    if length < 0:
        raise _HttpError(400, "bad content-length")
    if length > max_body:
        raise _HttpError(413, f"request body of {length} bytes exceeds {max_body}")
    body = await reader.readexactly(length) if length else b""
    path, _, query = target.partition("?")
    return _Request(
        method, path, query, headers, body, connection, arrived_monotonic, arrived_wall, version
    )


_EXTRA_REASONS = {529: "Overloaded"}


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "Error")


def _head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_reason(status)}"]
    lines.extend(f"{k}: {v}" for k, v in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def _sse_anthropic(name: str, payload: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def _sse_openai(payload: Mapping[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def _chunk(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


_LAST_CHUNK = b"0\r\n\r\n"


# --------------------------------------------------------------------------- the server


class FakeLLMServer:
    """A scripted fake Anthropic/OpenAI server on a real loopback socket.

    The request log and the script are guarded by a lock, so ``requests``,
    ``set_script`` and ``wait_for_requests`` may be used from other threads while the
    server runs its own event loop (see ``running_fake_llm``).

    With ``record_delta_times``, each streamed record gets ``delta_times``: the
    ``time.monotonic()`` at which each answer-text delta had been written (after its
    ``drain()``), in order (for latency benchmarks).
    """

    def __init__(
        self,
        script: ScriptLike | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        record_delta_times: bool = False,
    ) -> None:
        self._host = host
        self._record_delta_times = record_delta_times
        self._requested_port = port
        self._request_timeout = request_timeout
        self._max_body = max_body_bytes
        self._lock = threading.Lock()
        self._changed = threading.Condition(self._lock)
        self._script = Script()
        self._steps: list[_Step] = []
        self._next_step = 0
        self._log: list[RequestRecord] = []
        self._next_seq = 0
        self._holds_begun = 0
        self._releases = 0
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._readers: dict[int, asyncio.StreamReader] = {}
        self._connection_count = 0
        self.set_script(parse_script(script))

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("fake LLM server already started")
        self._server = await asyncio.start_server(
            self._on_connection, self._host, self._requested_port, limit=_MAX_HEAD_BYTES
        )
        sockets = self._server.sockets
        self._port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ----------------------------------------------------------------- properties

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("fake LLM server not started")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def script(self) -> Script:
        with self._lock:
            return self._script

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log (copies; safe to read from any thread)."""
        with self._lock:
            return [r.copy() for r in self._log]

    def model_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the model requests, in order (side requests such as titles left out)."""
        return [r.body for r in self.requests if r.turn != "side"]

    @property
    def remaining_turns(self) -> int:
        """How many script turns have not been (completely) served yet."""
        with self._lock:
            return len({s.turn_index for s in self._steps[self._next_step :]})

    def log_json(self) -> list[dict[str, Any]]:
        with self._lock:
            return [r.to_json() for r in self._log]

    def set_script(self, script: ScriptLike) -> None:
        """Replace the script; serving restarts at its first turn. The log is kept."""
        parsed = parse_script(script)
        steps = [step for i, turn in enumerate(parsed.turns) for step in _expand(turn, i)]
        with self._lock:
            self._script = parsed
            self._steps = steps
            self._next_step = 0

    def release(self) -> None:
        """Let one ``hold_after`` stream go on: the earliest held (or the next to hold).

        Any thread may call it, before or after the stream reaches its hold.
        """
        with self._lock:
            self._releases += 1

    async def _hold(self) -> None:
        with self._lock:
            self._holds_begun += 1
            ticket = self._holds_begun
        while True:
            with self._lock:
                if self._releases >= ticket:
                    return
            await asyncio.sleep(0.005)

    def clear_log(self) -> None:
        """Forget logged requests (``seq`` numbers keep increasing)."""
        with self._lock:
            self._log.clear()

    def wait_for_requests(
        self, count: int, timeout: float = 10.0, *, finished: bool = True
    ) -> list[RequestRecord]:
        """Block until ``count`` requests are logged (and finished); other threads only.

        Raises ``TimeoutError``. Do not call it on the server's own event loop; use
        ``wait_for_requests_async`` there.
        """
        deadline = time.monotonic() + timeout
        with self._changed:
            while not self._enough(count, finished):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise TimeoutError(
                        f"fake LLM: {len(self._log)} requests logged, expected {count}"
                    )
                self._changed.wait(remaining)
            return [r.copy() for r in self._log]

    async def wait_for_requests_async(
        self,
        count: int,
        timeout: float = 10.0,
        *,
        finished: bool = True,
    ) -> list[RequestRecord]:
        """Like ``wait_for_requests`` but polls without blocking the event loop."""
        async with asyncio.timeout(timeout):
            while True:
                with self._lock:
                    if self._enough(count, finished):
                        return [r.copy() for r in self._log]
                await asyncio.sleep(0.005)

    def _enough(self, count: int, finished: bool) -> bool:
        if len(self._log) < count:
            return False
        return not finished or all(r.ended_monotonic is not None for r in self._log[:count])

    # ----------------------------------------------------------------- log helpers

    def _new_record(
        self, req: _Request, provider: Provider | None, body: Any, stream: bool
    ) -> RequestRecord:
        with self._changed:
            record = RequestRecord(
                seq=self._next_seq,
                method=req.method,
                path=req.path,
                query=req.query,
                headers=dict(req.headers),
                body=body,
                body_bytes=len(req.body),
                provider=provider,
                stream=stream,
                connection=req.connection,
                arrived_monotonic=req.arrived_monotonic,
                arrived_wall=req.arrived_wall,
            )
            self._next_seq += 1
            self._log.append(record)
            self._changed.notify_all()
            return record

    def _update(self, record: RequestRecord, **changes: Any) -> None:
        with self._changed:
            for key, value in changes.items():
                setattr(record, key, value)
            self._changed.notify_all()

    def _finish(self, record: RequestRecord, **changes: Any) -> None:
        self._update(record, ended_monotonic=time.monotonic(), ended_wall=time.time(), **changes)

    # ----------------------------------------------------------------- connections

    def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback that owns the connection task: asyncio's own wrapper task would
        # log a spurious error when ``stop()`` cancels it.
        task = asyncio.get_running_loop().create_task(self._serve_connection(reader, writer))
        self._connections.add(task)
        task.add_done_callback(self._connection_done)

    def _connection_done(self, task: asyncio.Task[None]) -> None:
        self._connections.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            task.get_loop().call_exception_handler(
                {"message": "fake LLM connection handler failed", "exception": error}
            )

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        connection = self._connection_count
        self._connection_count += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # With a zero high-water mark, drain() waits until the kernel has every byte:
        # each SSE event is flushed as written and end times are accurate.
        writer.transport.set_write_buffer_limits(high=0)
        self._readers[connection] = reader
        try:
            while True:
                try:
                    async with asyncio.timeout(self._request_timeout):
                        req = await _read_request(reader, self._max_body, connection)
                except TimeoutError:
                    break
                except _HttpError as err:
                    info = _simple_error(err.status, err.message)
                    await self._send_json(
                        writer, err.status, _error_body(None, info, "req_fake"), close=True
                    )
                    break
                if req is None:
                    break
                if not await self._dispatch(req, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._readers.pop(connection, None)
            if writer.transport.is_closing():
                writer.transport.abort()
            else:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    async def _stall(self, connection: int) -> None:
        """Send nothing until the client gives up (closes its end) or the server stops."""
        reader = self._readers.get(connection)
        if reader is None:
            await asyncio.Event().wait()
            return
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass

    async def _send_json(
        self,
        writer: asyncio.StreamWriter,
        status: int,
        payload: Any,
        *,
        close: bool = False,
        extra_headers: Sequence[tuple[str, str]] = (),
    ) -> None:
        data = json.dumps(payload, ensure_ascii=False).encode()
        headers = [
            ("content-type", "application/json"),
            ("content-length", str(len(data))),
            ("connection", "close" if close else "keep-alive"),
            *extra_headers,
        ]
        writer.write(_head(status, headers) + data)
        await writer.drain()

    async def _dispatch(self, req: _Request, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; return whether the connection may be reused."""
        keep = not req.wants_close
        if req.path.startswith("/_"):
            return await self._control(req, writer, keep)
        provider: Provider | None
        if req.path.endswith("/chat/completions"):
            provider = "openai"
        elif req.path.endswith("/messages") or req.path.endswith("/messages/count_tokens"):
            provider = "anthropic"
        else:
            provider = None
        body: Any = None
        parse_error: str | None = None
        if req.body:
            try:
                body = json.loads(req.body)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                parse_error = f"request body is not valid JSON: {err}"
        stream = isinstance(body, dict) and body.get("stream") is True
        record = self._new_record(req, provider, body, stream)
        try:
            return await self._serve_logged(req, writer, record, provider, body, parse_error, keep)
        except BaseException as err:
            with self._lock:
                finished = record.ended_monotonic is not None
            if not finished:
                if isinstance(err, ConnectionError):
                    reason = "client disconnected"
                elif isinstance(err, asyncio.CancelledError):
                    reason = "server stopped"
                else:
                    reason = f"fake LLM internal error: {err!r}"
                self._finish(record, error=reason)
            raise

    async def _serve_logged(
        self,
        req: _Request,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider | None,
        body: Any,
        parse_error: str | None,
        keep: bool,
    ) -> bool:
        request_id = _fake_id("req_fake", "req", record.seq)
        if provider is None or req.method != "POST":
            status = 404 if provider is None else 405
            info = _simple_error(status, f"fake LLM: no route for {req.method} {req.path}")
            await self._send_json(
                writer, status, _error_body(provider, info, request_id), close=not keep
            )
            self._finish(record, kind="not_found", status=status)
            return keep
        if parse_error is not None or not isinstance(body, dict):
            info = _simple_error(400, parse_error or "request body must be a JSON object")
            await self._send_json(
                writer, 400, _error_body(provider, info, request_id), close=not keep
            )
            self._finish(record, kind="bad_request", status=400)
            return keep
        if req.path.endswith("/count_tokens"):
            payload = {"input_tokens": max(1, len(req.body) // 4)}
            await self._send_json(writer, 200, payload, close=not keep)
            self._finish(record, turn="side", kind="count_tokens", status=200)
            return keep
        return await self._serve_model(req, writer, record, provider, body, keep, request_id)

    async def _control(self, req: _Request, writer: asyncio.StreamWriter, keep: bool) -> bool:
        if req.method == "GET" and req.path == "/_health":
            await self._send_json(writer, 200, {"status": "ok"}, close=not keep)
        elif req.method == "GET" and req.path == "/_log":
            await self._send_json(writer, 200, self.log_json(), close=not keep)
        elif req.method == "POST" and req.path == "/_script":
            try:
                self.set_script(
                    parse_script(json.loads(req.body or b"null"), source="POST /_script")
                )
            except (ScriptError, json.JSONDecodeError, UnicodeDecodeError) as err:
                await self._send_json(writer, 400, {"error": str(err)}, close=not keep)
            else:
                turns = len(self.script.turns)
                await self._send_json(writer, 200, {"ok": True, "turns": turns}, close=not keep)
        else:
            await self._send_json(
                writer, 404, {"error": f"no control route {req.method} {req.path}"}, close=not keep
            )
        return keep

    def _take_step(self, record: RequestRecord, is_side: bool) -> _Step | Literal["side"] | None:
        with self._changed:
            if is_side and not self._script.side_requests_use_script:
                record.turn = "side"
                record.kind = "side"
                self._changed.notify_all()
                return "side"
            if self._script.by_history:
                index = _assistant_messages(record.body)
                if index >= len(self._steps):
                    record.kind = "exhausted"
                    self._changed.notify_all()
                    return None
                step = self._steps[index]
                self._next_step = max(self._next_step, index + 1)
            elif self._next_step >= len(self._steps):
                record.kind = "exhausted"
                self._changed.notify_all()
                return None
            else:
                step = self._steps[self._next_step]
                self._next_step += 1
            record.turn = step.turn_index
            record.attempt = step.attempt
            record.kind = "error" if step.turn.is_error else "success"
            self._changed.notify_all()
            return step

    async def _serve_model(
        self,
        req: _Request,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        body: dict[str, Any],
        keep: bool,
        request_id: str,
    ) -> bool:
        is_side = not body.get("tools")
        taken = self._take_step(record, is_side)
        id_header = ("x-request-id" if provider == "openai" else "request-id", request_id)
        if taken is None:
            with self._lock:
                served = len(self._script.turns)
            info = _simple_error(
                500,
                f"fake LLM script exhausted: all {served} turns were served; "
                f"unexpected request #{record.seq} to {req.path}",
            )
            await self._send_json(
                writer,
                500,
                _error_body(provider, info, request_id),
                close=not keep,
                extra_headers=[("x-should-retry", "false"), id_header],
            )
            self._finish(record, status=500)
            return keep
        if taken == "side":
            with self._lock:
                side_text, side_turn = self._script.side_text, self._script.side_turn
            turn = side_turn if side_turn is not None else Turn(text=side_text)
            completion = _completion(turn, body, len(req.body), record.seq)
        else:
            turn = taken.turn
            if turn.delay:
                await asyncio.sleep(turn.delay)
            if turn.is_error:
                return await self._serve_error(writer, record, provider, turn, keep, request_id)
            completion = _completion(turn, body, len(req.body), record.seq)
        created = int(time.time())
        if not record.stream:
            if turn.drop_after is not None:
                writer.transport.abort()
                self._finish(record, dropped=True)
                return False
            payload = (
                _openai_completion(completion, created)
                if provider == "openai"
                else _anthropic_message(completion)
            )
            await self._send_json(writer, 200, payload, close=not keep, extra_headers=[id_header])
            self._finish(record, status=200)
            return keep
        # HTTP/1.1 gets a chunked body (the connection stays reusable); an HTTP/1.0
        # client gets a close-delimited body.
        chunked = req.version != "HTTP/1.0"
        return await self._serve_stream(
            writer, record, provider, body, turn, completion, keep and chunked, chunked, id_header
        )

    async def _serve_error(
        self,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        turn: Turn,
        keep: bool,
        request_id: str,
    ) -> bool:
        info = _resolve_error(turn)
        headers: list[tuple[str, str]] = [
            ("x-request-id" if provider == "openai" else "request-id", request_id)
        ]
        if turn.retry_after is not None:
            headers.append(("retry-after", f"{turn.retry_after:g}"))
        if turn.retry_after_ms is not None:
            headers.append(("retry-after-ms", f"{turn.retry_after_ms:g}"))
        if turn.should_retry is not None:
            headers.append(("x-should-retry", "true" if turn.should_retry else "false"))
        await self._send_json(
            writer,
            info.status,
            _error_body(provider, info, request_id),
            close=not keep,
            extra_headers=headers,
        )
        self._finish(record, status=info.status)
        return keep

    async def _serve_stream(
        self,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        body: dict[str, Any],
        turn: Turn,
        completion: _Completion,
        keep: bool,
        chunked: bool,
        id_header: tuple[str, str],
    ) -> bool:
        events: list[bytes]
        is_text: list[bool]  # which events carry an answer-text delta
        if provider == "openai":
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and options.get("include_usage") is True
            chunks = _openai_chunks(completion, int(time.time()), include_usage)
            events = [_sse_openai(c) for c in chunks] + [_sse_openai("[DONE]")]
            is_text = [_is_openai_text(c) for c in chunks] + [False]
        else:
            named = _anthropic_events(completion)
            events = [_sse_anthropic(name, data) for name, data in named]
            is_text = [_is_anthropic_text(data) for _, data in named]
        try:
            events, is_text = _rearrange(turn, events, is_text)
        except ValueError as err:
            info = _simple_error(500, f"fake LLM: {err}")
            await self._send_json(writer, 500, _error_body(provider, info, "req_fake"), close=True)
            self._finish(record, status=500, error=str(err))
            return False
        record_times = self._record_delta_times
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("connection", "keep-alive" if keep else "close"),
            id_header,
        ]
        if chunked:
            headers.append(("transfer-encoding", "chunked"))
        writer.write(_head(200, headers))
        await writer.drain()
        self._update(record, status=200)
        sent = 0
        error = turn.stream_error
        started = time.monotonic()  # for `paced`: event k is due at started + k * chunk_delay
        held = False
        for position in range(len(events) + 1):
            if turn.drop_after is not None and sent >= turn.drop_after:
                writer.transport.abort()
                self._finish(record, dropped=True, events_sent=sent)
                return False
            if turn.hold_after is not None and sent == turn.hold_after and not held:
                held = True
                await self._hold()
            if turn.stall_after is not None and sent >= turn.stall_after:
                self._update(record, stalled=True)
                await self._stall(record.connection)
                writer.transport.abort()
                self._finish(record, events_sent=sent, error="client disconnected")
                return False
            if error is not None and (position == error.after or position == len(events)):
                if provider == "openai":
                    payload: dict[str, Any] = {
                        "error": {
                            "message": error.message,
                            "type": error.type,
                            "param": None,
                            "code": None,
                        }
                    }
                    data = _sse_openai(payload)
                else:
                    payload = {
                        "type": "error",
                        "error": {"type": error.type, "message": error.message},
                    }
                    data = _sse_anthropic("error", payload)
                writer.write(_chunk(data) if chunked else data)
                await writer.drain()
                sent += 1
                break
            if position == len(events):
                break
            if position > 0 and turn.chunk_delay:
                if not turn.paced:
                    await asyncio.sleep(turn.chunk_delay)
                elif (wait := started + position * turn.chunk_delay - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
            writer.write(_chunk(events[position]) if chunked else events[position])
            await writer.drain()
            if record_times and is_text[position]:
                written = time.monotonic()
                with self._lock:
                    record.delta_times.append(written)
            sent += 1
            self._update(record, events_sent=sent)
        if chunked:
            writer.write(_LAST_CHUNK)
            await writer.drain()
        self._finish(record, events_sent=sent)
        return keep


def _assistant_messages(body: Any) -> int:
    """How many assistant messages a request's conversation holds (both wire formats)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list):
        return 0
    return sum(1 for m in messages if isinstance(m, dict) and m.get("role") == "assistant")


def _rearrange(
    turn: Turn, events: list[bytes], is_text: list[bool]
) -> tuple[list[bytes], list[bool]]:
    """Apply ``event_order`` (pick, reorder, repeat) and then ``inject`` (raw bytes)."""
    if turn.event_order is not None:
        wrong = [i for i in turn.event_order if not 0 <= i < len(events)]
        if wrong:
            raise ValueError(
                f"event_order indexes {wrong} are out of range: the stream has {len(events)} events"
            )
        events = [events[i] for i in turn.event_order]
        is_text = [is_text[i] for i in turn.event_order]
    # Last first, so each index refers to the stream before any injection (ties keep order).
    for item in reversed(sorted(turn.inject, key=lambda i: i.before)):
        if item.before > len(events):
            raise ValueError(
                f"inject before {item.before} is out of range: the stream has {len(events)} events"
            )
        events.insert(item.before, item.raw.encode())
        is_text.insert(item.before, False)
    return events, is_text


def _is_anthropic_text(data: Mapping[str, Any]) -> bool:
    delta = data.get("delta")
    return (
        data.get("type") == "content_block_delta"
        and isinstance(delta, dict)
        and delta.get("type") == "text_delta"
    )


def _is_openai_text(chunk: Mapping[str, Any]) -> bool:
    choices = chunk.get("choices") or []
    if not choices:
        return False
    delta = choices[0].get("delta", {})
    # The first chunk carries the role and an empty content; it is not a text delta.
    return "content" in delta and "role" not in delta


# --------------------------------------------------------------------------- thread runner


@contextlib.contextmanager
def running_fake_llm(
    script: ScriptLike | None = None,
    *,
    host: str = "127.0.0.1",
    port: int = 0,
    startup_timeout: float = 10.0,
    request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
    max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
    record_delta_times: bool = False,
) -> Iterator[FakeLLMServer]:
    """Run a ``FakeLLMServer`` on its own event loop in a background thread.

    For synchronous tests, e.g. ones that run ``lsp-agent`` as a subprocess with
    ``ANTHROPIC_BASE_URL=server.anthropic_base_url`` and then inspect
    ``server.requests``.
    """
    server = FakeLLMServer(
        script,
        host=host,
        port=port,
        request_timeout=request_timeout,
        max_body_bytes=max_body_bytes,
        record_delta_times=record_delta_times,
    )
    loop = asyncio.new_event_loop()
    ready = threading.Event()
    failure: list[BaseException] = []

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            try:
                loop.run_until_complete(server.start())
            except BaseException as err:
                failure.append(err)
                return
            finally:
                ready.set()
            loop.run_forever()
            loop.run_until_complete(loop.shutdown_asyncgens())
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="fake-llm-server", daemon=True)
    thread.start()
    if not ready.wait(startup_timeout):
        raise RuntimeError("fake LLM server did not start in time")
    if failure:
        thread.join(startup_timeout)
        raise failure[0]
    try:
        yield server
    finally:
        future = asyncio.run_coroutine_threadsafe(server.stop(), loop)
        try:
            future.result(startup_timeout)
        finally:
            loop.call_soon_threadsafe(loop.stop)
            thread.join(startup_timeout)


# --------------------------------------------------------------------------- CLI


async def _serve_cli(server: FakeLLMServer) -> None:
    await server.start()
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    try:
        line = {
            "port": server.port,
            "anthropic_base_url": server.anthropic_base_url,
            "openai_base_url": server.openai_base_url,
        }
        sys.stdout.write(json.dumps(line) + "\n")
        sys.stdout.flush()
        await stop.wait()
    finally:
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
        await server.stop()


def main(argv: Sequence[str] | None = None) -> int:
    """CLI entry point: serve a script until SIGTERM/SIGINT, then write the log."""
    parser = argparse.ArgumentParser(
        prog="python -m lsp_agent.testing.fake_llm",
        description="Scripted fake Anthropic/OpenAI streaming server (see docs/fake-llm.md).",
    )
    parser.add_argument("--script", type=Path, help="JSON script file (default: empty script)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--port", type=int, default=0, help="0 picks a free port (default)")
    parser.add_argument("--log", type=Path, help="write the request log as JSON here on exit")
    args = parser.parse_args(argv)
    try:
        script = load_script(args.script) if args.script is not None else Script()
    except ScriptError as err:
        print(err, file=sys.stderr)
        return 2
    server = FakeLLMServer(script, host=args.host, port=args.port)
    try:
        asyncio.run(_serve_cli(server))
    finally:
        if args.log is not None:
            text = json.dumps(server.log_json(), indent=2, ensure_ascii=False)
            args.log.write_text(text + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
