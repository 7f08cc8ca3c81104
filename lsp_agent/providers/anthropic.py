"""Anthropic Messages API: a :class:`ModelRequest` in, the normalized stream out.

The request keeps its prefix byte-stable and marks it for prompt caching (system blocks flagged
``cache``, the last tool, the last block of the final message; at most four breakpoints, the
API's limit). Thinking blocks go back with their signatures so tool turns keep their reasoning.
The key is read from the environment on every call; the SDK client is rebuilt when it changes.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import anthropic
import attrs
import httpx2
from anthropic import types as wire

from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import (
    ImagePart,
    Message,
    ModelRequest,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
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
from lsp_agent.providers.errors import (
    anthropic_error,
    describe_endpoint,
    missing_key,
    parse_tool_input,
    truncated,
)
from lsp_agent.providers.wire_cache import WireCache, WireItems, compact_json, encode_with_list
from lsp_agent.providers.wire_json import count, obj, text

DEFAULT_BASE_URL = "https://api.anthropic.com"
DEFAULT_KEY_ENV = "ANTHROPIC_API_KEY"

_MAX_BREAKPOINTS = 4  # the API rejects requests with more cache_control markers
_MIN_THINKING_BUDGET = 1024  # the API's minimum budget_tokens
_EPHEMERAL = {"type": "ephemeral"}
_STOP_REASONS: dict[str, FinishReason] = {
    "end_turn": "end_turn",
    "stop_sequence": "end_turn",
    "tool_use": "tool_use",
    "max_tokens": "max_tokens",
    "refusal": "refusal",
}


class AnthropicProvider:
    """Streams Claude responses. Raises ``ProviderError`` (see ``providers/errors.py``)."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str | None,
        api_key_env: str,
        env: Mapping[str, str],
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._name = name
        # Always explicit: otherwise the SDK would consult os.environ, not the env we were given.
        self._base_url = base_url or DEFAULT_BASE_URL
        self._endpoint = describe_endpoint(
            base_url, default=DEFAULT_BASE_URL, env=env, env_var="ANTHROPIC_BASE_URL", provider=name
        )
        self._key_env = api_key_env
        self._env = env
        self._http_client = http_client
        self._cached: tuple[str, anthropic.AsyncAnthropic] | None = None
        self._wire = WireCache()

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        key = self._env.get(self._key_env)
        if not key:
            raise missing_key(self._key_env, provider=self._name)
        client = self._client(key)
        translator = _Translator()
        started = False
        try:
            response = await client.post(
                "/v1/messages",
                content=request_body(request, self._wire),
                options={"headers": {"content-type": "application/json"}},
                cast_to=object,
                stream=True,
                stream_cls=anthropic.AsyncStream[object],  # decoded JSON: see wire_json
            )
            async with response:
                async for raw_event in response:
                    for event in translator.feed(raw_event):
                        started = True
                        yield event
        except ValueError as exc:
            # A malformed event (bad JSON, events out of order): the response is broken,
            # whether or not anything had arrived yet, so it is sent once more.
            raise ProviderError(
                f"the response stream broke off: a malformed event ({exc})",
                kind="stream_dropped",
                provider=self._name,
            ) from exc
        except (anthropic.AnthropicError, httpx2.HTTPError) as exc:
            raise anthropic_error(
                exc,
                provider=self._name,
                key_env=self._key_env,
                secret=key,
                started=started,
                endpoint=self._endpoint,
            ) from exc
        if not translator.finished:
            raise truncated(provider=self._name, started=started)

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """The Messages API's own counter; any failure means "unknown", never an error."""
        key = self._env.get(self._key_env)
        if not key:
            return None
        body = request_params(request)
        body.pop("max_tokens", None)
        try:
            counted = await self._client(key).post(
                "/v1/messages/count_tokens",
                content=json.dumps(body, ensure_ascii=False, separators=(",", ":")).encode(),
                options={"headers": {"content-type": "application/json"}},
                cast_to=wire.MessageTokensCount,
            )
        except (anthropic.AnthropicError, httpx2.HTTPError, ValueError):
            return None
        return counted.input_tokens

    def _client(self, key: str) -> anthropic.AsyncAnthropic:
        if self._cached is None or self._cached[0] != key:
            client = anthropic.AsyncAnthropic(
                api_key=key,
                base_url=self._base_url,
                max_retries=0,  # retries are the core's decision, made once for every provider
                http_client=self._http_client,
            )
            self._cached = (key, client)
        return self._cached[1]


def request_body(request: ModelRequest, cache: WireCache | None = None) -> bytes:
    """The serialized streaming request.

    Sent as bytes through the SDK's own ``post`` (its auth, headers, errors and SSE parsing):
    ``messages.create`` would first walk and copy the whole body in Python on every step,
    a cost that grows with the conversation. The body is plain JSON data already, its
    messages converted and encoded once each (``cache``, see ``wire_cache``).
    """
    body, texts = _params(request, cache or WireCache())
    body["stream"] = True
    return encode_with_list(body, "messages", texts)


def request_params(request: ModelRequest) -> dict[str, Any]:
    """The JSON body of ``POST /v1/messages`` (minus ``stream``), as plain data."""
    return _params(request, WireCache())[0]


def _params(request: ModelRequest, cache: WireCache) -> tuple[dict[str, Any], list[str]]:
    """The body, and the JSON of each of its messages (the marked last one's included)."""
    system = [{"type": "text", "text": block.text} for block in request.system]
    tools = [
        {"name": t.name, "description": t.description, "input_schema": t.input_schema}
        for t in request.tools
    ]
    wired = cache.wire(request.messages, _message_items)
    messages = [item for w in wired for item in w.items]
    texts = [text for w in wired for text in w.texts]
    if messages:  # the last message gets a cache mark: a copy, the kept one stays unmarked
        last = messages[-1]
        messages[-1] = {**last, "content": [dict(block) for block in last["content"]]}
    _mark_cache(request, system, tools, messages)
    if messages:
        texts[-1] = compact_json(messages[-1])
    params: dict[str, Any] = {
        "model": request.model,
        "max_tokens": request.max_output_tokens,
        "messages": messages,
    }
    if system:
        params["system"] = system
    if tools:
        # tool_choice "none" keeps the tools in the request so the cached prefix still matches.
        params["tools"] = tools
        params["tool_choice"] = {"type": request.tool_choice}
    if request.thinking is not None:
        budget = max(request.thinking.budget_tokens, _MIN_THINKING_BUDGET)
        params["thinking"] = {"type": "enabled", "budget_tokens": budget}
        if request.max_output_tokens <= budget:
            # Thinking counts toward max_tokens, which must exceed the budget.
            params["max_tokens"] = budget + request.max_output_tokens
    return params, texts


def _message_items(message: Message) -> WireItems:
    """The message's wire form, or nothing for a message with no block the API takes."""
    wire = _message(message)
    return [wire] if wire["content"] else []


def _message(message: Message) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart):
            if part.text:  # the API rejects empty text blocks
                blocks.append({"type": "text", "text": part.text})
        elif isinstance(part, ReasoningPart):
            if part.redacted_data is not None:
                blocks.append({"type": "redacted_thinking", "data": part.redacted_data})
            elif part.signature is not None:
                blocks.append(
                    {"type": "thinking", "thinking": part.text, "signature": part.signature}
                )
            # Unsigned reasoning (e.g. from another provider) cannot be sent back; drop it.
        elif isinstance(part, ImagePart):
            source = {"type": "base64", "media_type": part.media_type, "data": part.data}
            blocks.append({"type": "image", "source": source})
        elif isinstance(part, ToolCallPart):
            blocks.append(
                {
                    "type": "tool_use",
                    "id": part.tool_call_id,
                    "name": part.name,
                    "input": part.input,
                }
            )
        else:
            blocks.append(_tool_result(part))
    # The API wants tool results first in a user message.
    blocks.sort(key=lambda b: b["type"] != "tool_result")
    return {"role": message.role, "content": blocks}


def _tool_result(part: ToolResultPart) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "tool_result", "tool_use_id": part.tool_call_id}
    if part.output:
        block["content"] = part.output
    if part.is_error:
        block["is_error"] = True
    return block


def _mark_cache(
    request: ModelRequest,
    system: list[dict[str, Any]],
    tools: list[dict[str, Any]],
    messages: list[dict[str, Any]],
) -> None:
    """Breakpoints: the last tool, the end of the conversation, then flagged system blocks."""
    marks: list[dict[str, Any]] = []
    if tools:
        marks.append(tools[-1])
    if messages and request.cache_conversation:
        cacheable = [
            b for b in messages[-1]["content"] if b["type"] not in ("thinking", "redacted_thinking")
        ]
        if cacheable:
            marks.append(cacheable[-1])
    flagged = [block for block, spec in zip(system, request.system, strict=True) if spec.cache]
    room = _MAX_BREAKPOINTS - len(marks)
    # The later a flagged block, the more of the prefix its breakpoint covers.
    marks.extend(flagged[-room:] if room else [])
    for block in marks:
        block["cache_control"] = dict(_EPHEMERAL)


@attrs.define
class _Block:
    kind: str
    tool_call_id: str = ""
    name: str = ""
    data: str = ""  # tool-call JSON, thinking signature, or redacted payload, by kind


class _Translator:
    """Turns the stream's events (decoded JSON, :mod:`wire_json`) into normalized ones, one
    event at a time. An event that is not an object is malformed (``ValueError``)."""

    def __init__(self) -> None:
        self.finished = False
        self._blocks: dict[int, _Block] = {}
        self._usage = Usage()
        self._stop_reason: str | None = None

    def feed(self, event: object) -> list[StreamEvent]:
        if not isinstance(event, dict):
            raise ValueError(f"an event that is not a JSON object: {event!r:.200}")
        kind = event.get("type")
        index = count(event.get("index"))
        if kind == "message_start":
            u = obj(obj(event.get("message")).get("usage"))
            self._usage = Usage(
                input_tokens=count(u.get("input_tokens")),
                output_tokens=count(u.get("output_tokens")),
                cache_read_tokens=count(u.get("cache_read_input_tokens")),
                cache_write_tokens=count(u.get("cache_creation_input_tokens")),
            )
            return [UsageReported(usage=self._usage)]
        if kind == "content_block_start":
            return self._start(index, obj(event.get("content_block")))
        if kind == "content_block_delta":
            return self._delta(index, obj(event.get("delta")))
        if kind == "content_block_stop":
            return self._stop(index)
        if kind == "message_delta":
            self._stop_reason = text(obj(event.get("delta")).get("stop_reason")) or (
                self._stop_reason
            )
            return [UsageReported(usage=self._delta_usage(obj(event.get("usage"))))]
        if kind == "message_stop":
            self.finished = True
            reason = _STOP_REASONS.get(self._stop_reason or "", "other")
            return [Finished(reason=reason, raw_reason=self._stop_reason)]
        return []

    def _start(self, index: int, block: dict[str, Any]) -> list[StreamEvent]:
        kind = block.get("type")
        if kind == "text":
            self._blocks[index] = _Block("text")
            started = text(block.get("text"))
            return [TextDelta(text=started)] if started else []
        if kind == "thinking":
            self._blocks[index] = _Block("thinking", data=text(block.get("signature")))
            thinking = text(block.get("thinking"))
            return [ReasoningDelta(text=thinking)] if thinking else []
        if kind == "redacted_thinking":
            self._blocks[index] = _Block("redacted", data=text(block.get("data")))
            return []
        if kind == "tool_use":
            call_id, name = text(block.get("id")), text(block.get("name"))
            self._blocks[index] = _Block("tool_use", tool_call_id=call_id, name=name)
            return [ToolCallStarted(tool_call_id=call_id, name=name)]
        self._blocks[index] = _Block("other")  # server tools etc.: not ours to run
        return []

    def _delta(self, index: int, delta: dict[str, Any]) -> list[StreamEvent]:
        block = self._blocks.get(index)
        if block is None:
            # Out of order: dropping it would cut the answer short without a word.
            raise ValueError(f"malformed stream: a delta for block {index}, which never started")
        kind = delta.get("type")
        if kind == "text_delta":
            fragment = text(delta.get("text"))
            return [TextDelta(text=fragment)] if fragment else []
        if kind == "thinking_delta":
            fragment = text(delta.get("thinking"))
            return [ReasoningDelta(text=fragment)] if fragment else []
        if kind == "signature_delta":
            block.data += text(delta.get("signature"))
        elif kind == "input_json_delta":
            fragment = text(delta.get("partial_json"))
            if fragment:
                block.data += fragment
                return [ToolCallArgsDelta(tool_call_id=block.tool_call_id, json_fragment=fragment)]
        return []

    def _stop(self, index: int) -> list[StreamEvent]:
        block = self._blocks.pop(index, None)
        if block is None:
            return []
        if block.kind == "thinking":
            return [ReasoningEnded(signature=block.data or None)]
        if block.kind == "redacted":
            return [ReasoningEnded(redacted_data=block.data)]
        if block.kind == "tool_use":
            args, error = parse_tool_input(block.data)
            return [
                ToolCallEnded(
                    tool_call_id=block.tool_call_id, name=block.name, input=args, parse_error=error
                )
            ]
        return []

    def _delta_usage(self, u: dict[str, Any]) -> Usage:
        # message_delta counts are cumulative; input counts appear only when they changed.
        details = obj(u.get("output_tokens_details"))
        previous = self._usage
        self._usage = attrs.evolve(
            previous,
            output_tokens=count(u.get("output_tokens"), previous.output_tokens),
            input_tokens=count(u.get("input_tokens"), previous.input_tokens),
            cache_read_tokens=count(u.get("cache_read_input_tokens"), previous.cache_read_tokens),
            cache_write_tokens=count(
                u.get("cache_creation_input_tokens"), previous.cache_write_tokens
            ),
            reasoning_tokens=count(details.get("thinking_tokens"), previous.reasoning_tokens),
        )
        return self._usage
