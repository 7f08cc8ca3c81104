"""OpenAI's legacy completions (``POST /v1/completions``), as llama.cpp, Ollama and vLLM serve
them to fill-in-the-middle models: ``prompt`` + ``suffix`` in, ``choices[0].text`` out, whole
(JSON) or streamed (SSE ``text_completion`` chunks, then ``data: [DONE]``)."""

from __future__ import annotations

import json
from typing import Any

from lsp_agent.testing.fake_llm.script import FimAnswer


def pieces(answer: FimAnswer) -> list[str]:
    """The streamed pieces: a string is split after each word, whitespace kept."""
    if isinstance(answer.text, list):
        return list(answer.text)
    words: list[str] = []
    current = ""
    for char in answer.text:
        if current and char.isspace() and not current[-1].isspace():
            words.append(current)
            current = ""
        current += char
    if current:
        words.append(current)
    return words


def usage(answer: FimAnswer, body: dict[str, Any], body_bytes: int) -> dict[str, int]:
    """Deterministic usage: prompt = the body's bytes / 4, completion = the pieces."""
    prompt = answer.prompt_tokens if answer.prompt_tokens is not None else max(1, body_bytes // 4)
    done = answer.completion_tokens
    completion = done if done is not None else len(pieces(answer))
    return {
        "prompt_tokens": prompt,
        "completion_tokens": completion,
        "total_tokens": prompt + completion,
    }


def whole(
    answer: FimAnswer, body: dict[str, Any], body_bytes: int, seq: int, created: int
) -> dict[str, Any]:
    text = "".join(pieces(answer))
    return {
        "id": f"cmpl-fake{seq:04d}",
        "object": "text_completion",
        "created": created,
        "model": str(body.get("model", "fake")),
        "choices": [{"text": text, "index": 0, "logprobs": None, "finish_reason": "stop"}],
        "usage": usage(answer, body, body_bytes),
    }


def stream_events(
    answer: FimAnswer, body: dict[str, Any], body_bytes: int, seq: int, created: int
) -> list[bytes]:
    """One chunk per piece, then the finish chunk (with usage when ``stream_options``
    asked for it), then ``[DONE]``."""
    base = {
        "id": f"cmpl-fake{seq:04d}",
        "object": "text_completion",
        "created": created,
        "model": str(body.get("model", "fake")),
    }
    chunks: list[dict[str, Any]] = [
        {**base, "choices": [{"text": piece, "index": 0, "logprobs": None, "finish_reason": None}]}
        for piece in pieces(answer)
    ]
    last: dict[str, Any] = {
        **base,
        "choices": [{"text": "", "index": 0, "logprobs": None, "finish_reason": "stop"}],
    }
    options = body.get("stream_options")
    if isinstance(options, dict) and options.get("include_usage") is True:
        last["usage"] = usage(answer, body, body_bytes)
    chunks.append(last)
    events = [f"data: {json.dumps(chunk)}\n\n".encode() for chunk in chunks]
    return [*events, b"data: [DONE]\n\n"]
