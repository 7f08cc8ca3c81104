"""The Anthropic Messages wire format: a completion as SSE events or as one message."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lsp_agent.testing.fake_llm.completion import Completion
from lsp_agent.testing.fake_llm.script import StreamError


def _anthropic_usage(c: Completion, output_tokens: int) -> dict[str, Any]:
    return {
        "input_tokens": c.input_tokens,
        "cache_creation_input_tokens": c.cache_creation,
        "cache_read_input_tokens": c.cache_read,
        "output_tokens": output_tokens,
    }


def anthropic_events(c: Completion) -> list[tuple[str, dict[str, Any]]]:
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


def anthropic_message(c: Completion) -> dict[str, Any]:
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


def sse_anthropic(name: str, payload: Mapping[str, Any]) -> bytes:
    return f"event: {name}\ndata: {json.dumps(payload, ensure_ascii=False)}\n\n".encode()


def is_anthropic_text(data: Mapping[str, Any]) -> bool:
    delta = data.get("delta")
    return (
        data.get("type") == "content_block_delta"
        and isinstance(delta, dict)
        and delta.get("type") == "text_delta"
    )


def stream_events(c: Completion) -> tuple[list[bytes], list[bool]]:
    """The SSE events of a streamed message, and which of them carry answer text."""
    named = anthropic_events(c)
    events = [sse_anthropic(name, data) for name, data in named]
    return events, [is_anthropic_text(data) for _, data in named]


def error_event(error: StreamError) -> bytes:
    """An ``error`` event in the middle of a stream."""
    payload = {"type": "error", "error": {"type": error.type, "message": error.message}}
    return sse_anthropic("error", payload)
