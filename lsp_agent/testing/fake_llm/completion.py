"""One scripted turn rendered into a response neither wire format owns yet: ids, pieces of
text and thinking, tool calls and their argument fragments, usage."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import math
import re
from collections.abc import Mapping
from typing import Any

from lsp_agent.testing.fake_llm.script import Turn, TurnUsage

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


@dataclasses.dataclass(frozen=True)
class ScriptStep:
    turn_index: int
    attempt: int
    turn: Turn


def expand_turn(turn: Turn, index: int) -> list[ScriptStep]:
    steps: list[ScriptStep] = []
    current: Turn | None = turn
    while current is not None:
        if current.is_error:
            for _ in range(current.times):
                steps.append(ScriptStep(index, len(steps), current))
            current = current.then
        else:
            steps.append(ScriptStep(index, len(steps), current))
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


def fake_id(prefix: str, *parts: object, length: int = 24) -> str:
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
class Completion:
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


def render_turn(turn: Turn, body: Mapping[str, Any], body_bytes: int, seq: int) -> Completion:
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
                id_anthropic=call.id or fake_id("toolu_fake", seq, i),
                id_openai=call.id or fake_id("call_fake", seq, i),
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
    return Completion(
        message_id=fake_id("msg_fake", "msg", seq),
        model=model if isinstance(model, str) else "fake-model",
        thinking=thinking,
        signature=turn.signature or fake_id("sig_fake", "sig", seq, length=40),
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
