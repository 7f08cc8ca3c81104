"""The one normalized stream every provider produces.

A provider turns a :class:`ModelRequest` into an async iterator of these events. Tool calls
are identified by their provider id; arguments arrive as JSON text fragments and are parsed
once, at :class:`ToolCallEnded`.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

from lsp_agent.core.messages import Usage

FinishReason = Literal["end_turn", "tool_use", "max_tokens", "refusal", "other"]


@attrs.frozen(kw_only=True)
class TextDelta:
    text: str


@attrs.frozen(kw_only=True)
class ReasoningDelta:
    text: str


@attrs.frozen(kw_only=True)
class ReasoningEnded:
    """A thinking block closed; carries Anthropic's signature or redacted payload."""

    signature: str | None = None
    redacted_data: str | None = None


@attrs.frozen(kw_only=True)
class ToolCallStarted:
    tool_call_id: str
    name: str


@attrs.frozen(kw_only=True)
class ToolCallArgsDelta:
    tool_call_id: str
    json_fragment: str


@attrs.frozen(kw_only=True)
class ToolCallEnded:
    """``input`` is the parsed arguments; ``parse_error`` is set when they were not valid JSON."""

    tool_call_id: str
    name: str
    input: dict[str, Any]
    parse_error: str | None = None


@attrs.frozen(kw_only=True)
class UsageReported:
    """Cumulative usage of this response so far (later reports replace earlier ones)."""

    usage: Usage


@attrs.frozen(kw_only=True)
class Finished:
    reason: FinishReason
    raw_reason: str | None = None


StreamEvent = (
    TextDelta
    | ReasoningDelta
    | ReasoningEnded
    | ToolCallStarted
    | ToolCallArgsDelta
    | ToolCallEnded
    | UsageReported
    | Finished
)
