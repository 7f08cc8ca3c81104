"""OpenAI Chat Completions (and OpenAI-compatible servers): a :class:`ModelRequest` in, the
normalized stream out.

The neutral conversation carries tool results inside user messages; here they become ``tool``
role messages, placed right after the assistant message that asked for them. Reasoning is not
sent back (Chat Completions has no field for it). Tools stay in every request, even with
``tool_choice="none"``, so the prefix a server caches keeps matching.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import attrs
import httpx2
import openai

from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import (
    ImagePart,
    Message,
    ModelRequest,
    TextPart,
    ThinkingConfig,
    ToolCallPart,
    ToolResultPart,
    Usage,
)
from lsp_agent.core.stream_events import (
    Finished,
    FinishReason,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCallArgsDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.providers.errors import (
    describe_endpoint,
    missing_key,
    openai_error,
    parse_tool_input,
    truncated,
)
from lsp_agent.providers.wire_cache import WireCache, compact_json, encode_with_list
from lsp_agent.providers.wire_json import count, items, obj, text

DEFAULT_BASE_URL = "https://api.openai.com/v1"
DEFAULT_KEY_ENV = "OPENAI_API_KEY"
# Local servers ignore the key, but the SDK insists on one.
DUMMY_KEY = "not-needed"

_FINISH_REASONS: dict[str, FinishReason] = {
    "stop": "end_turn",
    "tool_calls": "tool_use",
    "function_call": "tool_use",
    "length": "max_tokens",
    "content_filter": "refusal",
}


class OpenAIProvider:
    """Streams chat completions. ``compatible`` selects the broadly supported parameter set."""

    def __init__(
        self,
        *,
        name: str,
        base_url: str | None,
        api_key_env: str | None,
        env: Mapping[str, str],
        compatible: bool = False,
        http_client: httpx2.AsyncClient | None = None,
    ) -> None:
        self._name = name
        # Always explicit: otherwise the SDK would consult os.environ, not the env we were given.
        self._base_url = base_url or DEFAULT_BASE_URL
        self._endpoint = describe_endpoint(
            base_url, default=DEFAULT_BASE_URL, env=env, env_var="OPENAI_BASE_URL", provider=name
        )
        self._key_env = api_key_env
        self._env = env
        self._compatible = compatible
        self._http_client = http_client
        self._cached: tuple[str, openai.AsyncOpenAI] | None = None
        self._wire = WireCache()

    @property
    def name(self) -> str:
        return self._name

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        key = self._key()
        client = self._client(key)
        translator = _Translator()
        started = False
        try:
            response = await client.post(
                "/chat/completions",
                content=request_body(request, compatible=self._compatible, cache=self._wire),
                options={
                    "headers": {"content-type": "application/json"},
                    "security": {"bearer_auth": True},
                },
                cast_to=object,
                stream=True,
                # Each chunk as the decoded JSON: building the SDK's models for every chunk
                # (and their schemas on first use) cost ~2 ms per step, ~10 ms on the first.
                stream_cls=openai.AsyncStream[object],
            )
            async with response:
                async for chunk in response:
                    for event in translator.feed(chunk):
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
        except (openai.OpenAIError, httpx2.HTTPError) as exc:
            secret = key if self._key_env else None  # the placeholder is no secret
            raise openai_error(
                exc,
                provider=self._name,
                key_env=self._key_env,
                secret=secret,
                started=started,
                endpoint=self._endpoint,
            ) from exc
        final = translator.finish()
        if final is None:
            raise truncated(provider=self._name, started=started)
        for event in final:
            yield event

    async def count_tokens(self, request: ModelRequest) -> int | None:
        return None  # Chat Completions has no token-counting endpoint

    def _key(self) -> str:
        if self._key_env is None:
            return DUMMY_KEY
        key = self._env.get(self._key_env)
        if not key:
            raise missing_key(self._key_env, provider=self._name)
        return key

    def _client(self, key: str) -> openai.AsyncOpenAI:
        if self._cached is None or self._cached[0] != key:
            client = openai.AsyncOpenAI(
                api_key=key,
                base_url=self._base_url,
                max_retries=0,  # retries are the core's decision, made once for every provider
                http_client=self._http_client,
            )
            self._cached = (key, client)
        return self._cached[1]


def request_body(
    request: ModelRequest, *, compatible: bool, cache: WireCache | None = None
) -> bytes:
    """The serialized streaming request, sent through the SDK's own ``post``.

    ``chat.completions.create`` would validate and copy the whole body in Python on every
    step, a cost that grows with the conversation; the body is plain JSON data already, its
    messages converted and encoded once each (``cache``, see ``wire_cache``).
    """
    body, texts = _params(request, compatible, cache or WireCache())
    body["stream"] = True
    return encode_with_list(body, "messages", texts)


def request_params(request: ModelRequest, *, compatible: bool) -> dict[str, Any]:
    """The JSON body of ``POST /chat/completions`` (minus ``stream``), as plain data."""
    return _params(request, compatible, WireCache())[0]


def _params(
    request: ModelRequest, compatible: bool, cache: WireCache
) -> tuple[dict[str, Any], list[str]]:
    """The body, and the JSON of each item of its ``messages``."""
    messages: list[dict[str, Any]] = []
    if request.system:
        messages.append(
            {"role": "system", "content": "\n\n".join(block.text for block in request.system)}
        )
    texts = [compact_json(m) for m in messages]
    for wired in cache.wire(request.messages, _messages):
        messages.extend(wired.items)
        texts.extend(wired.texts)
    params: dict[str, Any] = {
        "model": request.model,
        "messages": messages,
        "stream_options": {"include_usage": True},
    }
    if request.tools:
        params["tools"] = [
            {
                "type": "function",
                "function": {
                    "name": t.name,
                    "description": t.description,
                    "parameters": t.input_schema,
                },
            }
            for t in request.tools
        ]
        params["tool_choice"] = request.tool_choice
    if compatible:
        params["max_tokens"] = request.max_output_tokens  # understood by every server
    else:
        # OpenAI's reasoning models reject max_tokens.
        params["max_completion_tokens"] = request.max_output_tokens
        if request.thinking is not None:
            params["reasoning_effort"] = _effort(request.thinking)
    return params, texts


def _messages(message: Message) -> list[dict[str, Any]]:
    texts = [p.text for p in message.parts if isinstance(p, TextPart) and p.text]
    if message.role == "assistant":
        calls = [
            {
                "id": p.tool_call_id,
                "type": "function",
                "function": {"name": p.name, "arguments": json.dumps(p.input)},
            }
            for p in message.parts
            if isinstance(p, ToolCallPart)
        ]
        if not texts and not calls:
            return []  # reasoning only: nothing Chat Completions can carry
        out: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) or None}
        if calls:
            out["tool_calls"] = calls
        return [out]
    # Tool results must directly follow the assistant's tool calls, before any new user text.
    result: list[dict[str, Any]] = [
        {
            "role": "tool",
            "tool_call_id": p.tool_call_id,
            "content": f"Error: {p.output}" if p.is_error else p.output,
        }
        for p in message.parts
        if isinstance(p, ToolResultPart)
    ]
    if any(isinstance(p, ImagePart) for p in message.parts):
        result.append({"role": "user", "content": _user_content(message)})
    elif texts:
        result.append({"role": "user", "content": "\n\n".join(texts)})
    return result


def _user_content(message: Message) -> list[dict[str, Any]]:
    """A user message with images: its text and images as content parts, in order."""
    content: list[dict[str, Any]] = []
    for part in message.parts:
        if isinstance(part, TextPart) and part.text:
            content.append({"type": "text", "text": part.text})
        elif isinstance(part, ImagePart):
            url = f"data:{part.media_type};base64,{part.data}"
            content.append({"type": "image_url", "image_url": {"url": url}})
    return content


def _effort(thinking: ThinkingConfig) -> str:
    if thinking.budget_tokens < 2000:
        return "low"
    if thinking.budget_tokens < 8000:
        return "medium"
    return "high"


@attrs.define
class _Call:
    tool_call_id: str | None = None
    name: str | None = None
    arguments: str = ""
    started: bool = False


class _Translator:
    """Turns chunks (decoded JSON, :mod:`wire_json`) into normalized events; tool calls are
    keyed by their ``index``. A chunk that is not an object is malformed (``ValueError``)."""

    def __init__(self) -> None:
        self._calls: dict[int, _Call] = {}
        self._finish: str | None = None

    def feed(self, chunk: object) -> list[StreamEvent]:
        if not isinstance(chunk, dict):
            raise ValueError(f"a chunk that is not a JSON object: {chunk!r:.200}")
        events: list[StreamEvent] = []
        for choice in items(chunk.get("choices"))[:1]:  # we never ask for n > 1
            events.extend(self._choice(obj(choice)))
        usage = chunk.get("usage")
        if isinstance(usage, dict):
            prompt = obj(usage.get("prompt_tokens_details"))
            completion = obj(usage.get("completion_tokens_details"))
            cached = count(prompt.get("cached_tokens"))
            events.append(
                UsageReported(
                    usage=Usage(
                        input_tokens=count(usage.get("prompt_tokens")) - cached,
                        output_tokens=count(usage.get("completion_tokens")),
                        cache_read_tokens=cached,
                        reasoning_tokens=count(completion.get("reasoning_tokens")),
                    )
                )
            )
        return events

    def finish(self) -> list[StreamEvent] | None:
        """The closing events, or None if the stream never said why it stopped."""
        if self._finish is None:
            return None
        reason = _FINISH_REASONS.get(self._finish, "other")
        if reason == "end_turn" and any(call.started for call in self._calls.values()):
            reason = "tool_use"  # some compatible servers report "stop" after tool calls
        return [Finished(reason=reason, raw_reason=self._finish)]

    def _choice(self, choice: dict[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        delta = obj(choice.get("delta"))
        # Compatible servers (vLLM, llama.cpp, Ollama, DeepSeek) stream reasoning as an extra field.
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if isinstance(reasoning, str) and reasoning:
            events.append(ReasoningDelta(text=reasoning))
        content = text(delta.get("content"))
        if content:
            events.append(TextDelta(text=content))
        for call in items(delta.get("tool_calls")):
            events.extend(self._tool_call(obj(call)))
        finish = choice.get("finish_reason")
        if isinstance(finish, str) and self._finish is None:
            self._finish = finish
            events.extend(self._end_calls())
        return events

    def _tool_call(self, delta: dict[str, Any]) -> list[StreamEvent]:
        index = count(delta.get("index"))
        call = self._calls.setdefault(index, _Call())
        call.tool_call_id = call.tool_call_id or text(delta.get("id")) or None
        function = obj(delta.get("function"))
        call.name = call.name or text(function.get("name")) or None
        fragment = text(function.get("arguments"))
        call.arguments += fragment
        events: list[StreamEvent] = []
        if not call.started and call.name:
            # A server that sends no id still gets a stable one, so results can be matched.
            call.tool_call_id = call.tool_call_id or f"call_{index}"
            call.started = True
            events.append(ToolCallStarted(tool_call_id=call.tool_call_id, name=call.name))
            fragment = call.arguments  # flush anything that arrived before the name
        if call.started and fragment:
            assert call.tool_call_id is not None
            events.append(ToolCallArgsDelta(tool_call_id=call.tool_call_id, json_fragment=fragment))
        return events

    def _end_calls(self) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for _, call in sorted(self._calls.items()):
            if not call.started or call.tool_call_id is None or call.name is None:
                continue
            args, error = parse_tool_input(call.arguments)
            events.append(
                ToolCallEnded(
                    tool_call_id=call.tool_call_id, name=call.name, input=args, parse_error=error
                )
            )
        return events
