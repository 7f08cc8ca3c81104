"""The OpenAI Chat Completions wire format: a completion as SSE chunks or as one completion."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from lsp_agent.testing.fake_llm.completion import Completion
from lsp_agent.testing.fake_llm.script import StreamError


def _openai_usage(c: Completion) -> dict[str, Any]:
    prompt = c.input_tokens + c.cache_read + c.cache_creation
    return {
        "prompt_tokens": prompt,
        "completion_tokens": c.output_tokens,
        "total_tokens": prompt + c.output_tokens,
        "prompt_tokens_details": {"cached_tokens": c.cache_read},
        "completion_tokens_details": {"reasoning_tokens": c.reasoning_tokens},
    }


def openai_chunks(c: Completion, created: int, include_usage: bool) -> list[dict[str, Any]]:
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


def openai_completion(c: Completion, created: int) -> dict[str, Any]:
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


def sse_openai(payload: Mapping[str, Any] | str) -> bytes:
    data = payload if isinstance(payload, str) else json.dumps(payload, ensure_ascii=False)
    return f"data: {data}\n\n".encode()


def is_openai_text(chunk: Mapping[str, Any]) -> bool:
    choices = chunk.get("choices") or []
    if not choices:
        return False
    delta = choices[0].get("delta", {})
    # The first chunk carries the role and an empty content; it is not a text delta.
    return "content" in delta and "role" not in delta


def stream_events(
    c: Completion, body: Mapping[str, Any], created: int
) -> tuple[list[bytes], list[bool]]:
    """The SSE events of a streamed completion (usage last when the request asked for it),
    and which of them carry answer text."""
    options = body.get("stream_options")
    include_usage = isinstance(options, dict) and options.get("include_usage") is True
    chunks = openai_chunks(c, created, include_usage)
    events = [sse_openai(chunk) for chunk in chunks] + [sse_openai("[DONE]")]
    return events, [is_openai_text(chunk) for chunk in chunks] + [False]


def error_event(error: StreamError) -> bytes:
    """An error in the middle of a stream, as OpenAI-compatible servers send it."""
    payload = {"error": {"message": error.message, "type": error.type, "param": None, "code": None}}
    return sse_openai(payload)
