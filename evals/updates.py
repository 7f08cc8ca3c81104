"""A run's ``agent/session/update`` stream read back: the answer, the tool calls, the steps
and the usage (docs/events.md, ``lsp-agent run --json``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from evals.task import ToolCall


@attrs.frozen(kw_only=True)
class Usage:
    input_tokens: int = 0
    output_tokens: int = 0
    cached_tokens: int = 0
    """Input tokens read from the provider's prompt cache."""
    cost: float | None = None
    """USD, when the model has prices (the catalog's, or the config's)."""


@attrs.frozen(kw_only=True)
class Transcript:
    answer: str
    tool_calls: tuple[ToolCall, ...]
    steps: int
    """Model calls of the session's turn (assistant messages ended)."""
    usage: Usage
    stop_reason: str | None


def read_updates(lines: Iterable[Mapping[str, Any]]) -> Transcript:
    """The first session's updates (a subagent's session is its own, and left out)."""
    session: str | None = None
    texts: dict[str, list[str]] = {}
    last_text: str | None = None
    calls: dict[str, dict[str, Any]] = {}
    steps = 0
    usage = Usage()
    stop: str | None = None
    for line in lines:
        session = session or str(line.get("sessionId", ""))
        if line.get("sessionId") != session:
            continue
        update = line.get("update") or {}
        kind = update.get("sessionUpdate")
        if kind == "agent_message_chunk":
            message = str(update.get("messageId", ""))
            texts.setdefault(message, []).append(str(update.get("text", "")))
            last_text = message
        elif kind == "agent_message_end":
            steps += 1
        elif kind == "tool_call_update":
            call = calls.setdefault(str(update.get("toolCallId")), {"input": {}})
            call["name"] = update.get("toolName", call.get("name", ""))
            call["status"] = update.get("status", call.get("status", ""))
            if isinstance(update.get("rawInput"), dict):
                call["input"] = update["rawInput"]
        elif kind == "usage_update":
            usage = Usage(
                input_tokens=int(update.get("inputTokens") or 0),
                output_tokens=int(update.get("outputTokens") or 0),
                cached_tokens=int(update.get("cacheReadTokens") or 0),
                cost=update.get("cost"),
            )
        elif kind == "state_update" and update.get("state") == "idle":
            stop = update.get("stopReason")
    tool_calls = tuple(
        ToolCall(name=str(c.get("name", "")), input=c["input"], status=str(c.get("status", "")))
        for c in calls.values()
    )
    answer = "".join(texts.get(last_text, [])) if last_text is not None else ""
    return Transcript(
        answer=answer, tool_calls=tool_calls, steps=steps, usage=usage, stop_reason=stop
    )
