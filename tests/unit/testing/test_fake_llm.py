"""Tests for the scripted fake LLM server, driven by the real Anthropic and OpenAI SDKs."""

from __future__ import annotations

import asyncio
import itertools
import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anthropic
import httpx2
import openai
import pytest

from lsp_agent.testing.fake_llm import (
    FakeLLMServer,
    Script,
    ScriptError,
    load_script,
    parse_script,
    running_fake_llm,
)
from lsp_agent.testing.fake_llm import http_io as fake_http
from lsp_agent.testing.fake_llm import progress as fake_progress
from lsp_agent.testing.fake_llm import responses as fake_responses

A_TOOLS: list[Any] = [
    {"name": "read", "description": "Read a file", "input_schema": {"type": "object"}}
]
O_TOOLS: list[Any] = [
    {"type": "function", "function": {"name": "read", "parameters": {"type": "object"}}}
]
A_MESSAGES: list[Any] = [{"role": "user", "content": "hi"}]


def _anthropic(server: FakeLLMServer, retries: int = 0) -> anthropic.AsyncAnthropic:
    return anthropic.AsyncAnthropic(
        base_url=server.anthropic_base_url, api_key="k", max_retries=retries
    )


def _openai(server: FakeLLMServer, retries: int = 0) -> openai.AsyncOpenAI:
    return openai.AsyncOpenAI(base_url=server.openai_base_url, api_key="k", max_retries=retries)


async def _a_stream(client: anthropic.AsyncAnthropic, tools: bool = True) -> list[Any]:
    extra: dict[str, Any] = {"tools": A_TOOLS} if tools else {}
    stream = await client.messages.create(
        model="claude-test", max_tokens=100, messages=A_MESSAGES, stream=True, **extra
    )
    return [event async for event in stream]


async def _o_stream(
    client: openai.AsyncOpenAI, *, include_usage: bool = True, tools: bool = True
) -> list[Any]:
    extra: dict[str, Any] = {"tools": O_TOOLS} if tools else {}
    stream = await client.chat.completions.create(
        model="gpt-test",
        messages=[{"role": "user", "content": "hi"}],
        stream=True,
        stream_options={"include_usage": include_usage},
        **extra,
    )
    return [chunk async for chunk in stream]


# --------------------------------------------------------------------------- Anthropic


async def test_anthropic_text_and_thinking_stream() -> None:
    script = {
        "turns": [{"thinking": "let me think", "signature": "sig-1", "text": "hello big world"}]
    }
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        events = await _a_stream(client)

    types = [e.type for e in events]
    assert types[0] == "message_start"
    assert types[-2:] == ["message_delta", "message_stop"]
    thinking = "".join(
        e.delta.thinking
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "thinking_delta"
    )
    texts = [
        e.delta.text
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "text_delta"
    ]
    signatures = [
        e.delta.signature
        for e in events
        if e.type == "content_block_delta" and e.delta.type == "signature_delta"
    ]
    assert thinking == "let me think"
    assert len(texts) == 3
    assert "".join(texts) == "hello big world"
    assert signatures == ["sig-1"]
    starts = [e.content_block.type for e in events if e.type == "content_block_start"]
    assert starts == ["thinking", "text"]
    delta = events[-2]
    assert delta.delta.stop_reason == "end_turn"
    assert delta.usage.output_tokens == 6  # 3 thinking + 3 text deltas
    assert events[0].message.usage.input_tokens > 0
    assert events[0].message.model == "claude-test"

    (record,) = server.requests
    assert record.path == "/v1/messages"
    assert record.provider == "anthropic"
    assert record.turn == 0
    assert record.kind == "success"
    assert record.status == 200
    assert record.stream is True
    # anthropic 2.x sends the key as a bearer token; older versions used x-api-key
    assert "k" in (record.headers.get("x-api-key") or record.headers["authorization"])
    assert record.body["model"] == "claude-test"
    assert record.ended_monotonic is not None
    assert record.ended_monotonic >= record.arrived_monotonic
    assert record.events_sent == len(events) + 1  # + the ping the SDK skips


async def test_anthropic_tool_calls_usage_and_keepalive() -> None:
    script = {
        "turns": [
            {
                "text": "reading",
                "tool_calls": [
                    {"name": "read", "input": {"file_path": "a.py"}},
                    {"name": "grep", "input": {"pattern": "def ", "paths": ["x", "y"]}},
                ],
                "usage": {
                    "input_tokens": 11,
                    "output_tokens": 22,
                    "cache_read_input_tokens": 33,
                    "cache_creation_input_tokens": 44,
                },
            },
            {"tool_calls": [{"name": "read", "input": {"file_path": "b.py"}, "id": "toolu_x"}]},
        ]
    }
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        events = await _a_stream(client)
        async with client.messages.stream(
            model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS
        ) as stream:
            final = await stream.get_final_message()

    tool_starts = [
        e for e in events if e.type == "content_block_start" and e.content_block.type == "tool_use"
    ]
    assert [e.content_block.name for e in tool_starts] == ["read", "grep"]
    ids = [e.content_block.id for e in tool_starts]
    assert all(i.startswith("toolu_") for i in ids)
    assert len(set(ids)) == 2
    for start, expected in zip(
        tool_starts, [{"file_path": "a.py"}, {"pattern": "def ", "paths": ["x", "y"]}], strict=True
    ):
        fragments = [
            e.delta.partial_json
            for e in events
            if e.type == "content_block_delta" and e.index == start.index
        ]
        assert len([f for f in fragments if f]) >= 2
        assert json.loads("".join(fragments)) == expected
    start_usage = events[0].message.usage
    assert start_usage.input_tokens == 11
    assert start_usage.cache_read_input_tokens == 33
    assert start_usage.cache_creation_input_tokens == 44
    message_delta = next(e for e in events if e.type == "message_delta")
    assert message_delta.delta.stop_reason == "tool_use"
    assert message_delta.usage.output_tokens == 22
    assert message_delta.usage.cache_read_input_tokens == 33

    # The SDK's own accumulator sees a complete tool_use block.
    assert final.stop_reason == "tool_use"
    (block,) = final.content
    assert block.type == "tool_use"
    assert block.id == "toolu_x"
    assert block.input == {"file_path": "b.py"}

    records = server.requests
    assert [r.turn for r in records] == [0, 1]
    assert records[0].connection == records[1].connection  # keep-alive reuse


async def test_anthropic_non_streaming_and_stop_reason_override() -> None:
    script = [
        {"text": "truncated answ", "stop_reason": "max_tokens"},
        {"thinking": "t", "tool_calls": [{"name": "read", "input": {"file_path": "c"}}]},
    ]
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        first = await client.messages.create(
            model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS
        )
        second = await client.messages.create(
            model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS
        )
    assert first.stop_reason == "max_tokens"
    assert first.content[0].type == "text"
    assert first.content[0].text == "truncated answ"
    assert second.stop_reason == "tool_use"
    assert [b.type for b in second.content] == ["thinking", "tool_use"]
    assert second.content[1].type == "tool_use"
    assert second.content[1].input == {"file_path": "c"}
    assert [r.stream for r in server.requests] == [False, False]


async def test_rate_limit_then_success_with_retry_after_headers() -> None:
    script = [
        {"status": 429, "retry_after": 0.01, "retry_after_ms": 10, "then": {"text": "ok"}},
        {"error": "overloaded", "times": 2, "retry_after_ms": 5, "then": {"text": "ok again"}},
    ]
    async with FakeLLMServer(script) as server:
        async with _anthropic(server) as client:
            with pytest.raises(anthropic.RateLimitError) as caught:
                await _a_stream(client)
            assert caught.value.status_code == 429
            assert caught.value.response.headers["retry-after"] == "0.01"
            assert caught.value.response.headers["retry-after-ms"] == "10"
            assert isinstance(caught.value.body, dict)
            assert caught.value.body["error"]["type"] == "rate_limit_error"
            events = await _a_stream(client)
            assert [e.delta.text for e in events if e.type == "content_block_delta"] == ["ok"]
        # With SDK retries enabled the two 529s are retried transparently.
        async with _anthropic(server, retries=3) as client:
            events = await _a_stream(client)
            texts = [e.delta.text for e in events if e.type == "content_block_delta"]
            assert "".join(texts) == "ok again"

    records = server.requests
    assert [(r.turn, r.attempt, r.status) for r in records] == [
        (0, 0, 429),
        (0, 1, 200),
        (1, 0, 529),
        (1, 1, 529),
        (1, 2, 200),
    ]
    assert [r.headers["x-stainless-retry-count"] for r in records[2:]] == ["0", "1", "2"]
    assert server.remaining_turns == 0


async def test_context_overflow_preset_both_providers() -> None:
    script = [{"error": "context_overflow"}, {"error": "context_overflow"}]
    async with FakeLLMServer(script) as server:
        async with _anthropic(server) as client:
            with pytest.raises(anthropic.BadRequestError) as a_err:
                await _a_stream(client)
        async with _openai(server) as oclient:
            with pytest.raises(openai.BadRequestError) as o_err:
                await _o_stream(oclient)
    assert "prompt is too long: 250000 tokens > 200000 maximum" in str(a_err.value)
    assert isinstance(a_err.value.body, dict)
    assert a_err.value.body["error"]["type"] == "invalid_request_error"
    assert o_err.value.code == "context_length_exceeded"
    assert o_err.value.status_code == 400


async def test_drop_after_raises_sdk_errors() -> None:
    script = [
        {"text": "one two three four five", "drop_after": 3},
        {"text": "one two three four five", "drop_after": 2},
    ]
    async with FakeLLMServer(script) as server:
        async with _anthropic(server) as client:
            stream = await client.messages.create(
                model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS, stream=True
            )
            seen: list[str] = []

            async def consume() -> None:
                async for event in stream:
                    seen.append(event.type)

            # The Anthropic SDK lets the transport error through unwrapped.
            with pytest.raises((anthropic.APIConnectionError, httpx2.TransportError)):
                await consume()
            assert seen == ["message_start", "content_block_start"]  # ping is skipped
        async with _openai(server) as oclient:
            with pytest.raises(openai.APIConnectionError):
                await _o_stream(oclient)
    records = server.requests
    assert [r.dropped for r in records] == [True, True]
    assert [r.events_sent for r in records] == [3, 2]
    assert all(r.ended_monotonic is not None for r in records)


async def test_stream_error_event() -> None:
    script = [
        {"text": "a b c", "stream_error": {"after": 3, "type": "overloaded_error"}},
        {"text": "a b c", "stream_error": {"after": 2, "type": "server_error", "message": "boom"}},
    ]
    async with FakeLLMServer(script) as server:
        async with _anthropic(server) as client:
            with pytest.raises(anthropic.APIStatusError, match="overloaded_error"):
                await _a_stream(client)
        async with _openai(server) as oclient:
            with pytest.raises(openai.APIError, match="boom"):
                await _o_stream(oclient)


async def test_script_exhausted_fails_loudly_without_retries() -> None:
    script = {"turns": [{"text": "only"}]}
    async with FakeLLMServer(script) as server, _anthropic(server, retries=2) as client:
        await _a_stream(client)
        with pytest.raises(anthropic.InternalServerError, match="script exhausted"):
            await _a_stream(client)
    records = server.requests
    assert len(records) == 2  # x-should-retry: false stopped the SDK's retries
    assert records[1].kind == "exhausted"
    assert records[1].turn is None


# --------------------------------------------------------------------------- OpenAI


async def test_openai_stream_text_reasoning_tools_usage() -> None:
    script = [
        {
            "thinking": "pondering deeply",
            "text": "here you go",
            "tool_calls": [
                {"name": "read", "input": {"file_path": "a.py"}},
                {"name": "write", "input": {"file_path": "b.py", "content": "x = 1\n"}},
            ],
            "usage": {"input_tokens": 100, "output_tokens": 7, "cache_read_input_tokens": 40},
        }
    ]
    async with FakeLLMServer(script) as server, _openai(server) as client:
        chunks = await _o_stream(client)

    with_choices = [c for c in chunks if c.choices]
    reasoning = "".join(
        (c.choices[0].delta.model_extra or {}).get("reasoning_content") or "" for c in with_choices
    )
    content = "".join(c.choices[0].delta.content or "" for c in with_choices)
    assert reasoning == "pondering deeply"
    assert content == "here you go"
    calls: dict[int, dict[str, str]] = {}
    for chunk in with_choices:
        for tc in chunk.choices[0].delta.tool_calls or []:
            entry = calls.setdefault(tc.index, {"id": "", "name": "", "arguments": ""})
            if tc.id:
                entry["id"] = tc.id
            if tc.function and tc.function.name:
                entry["name"] = tc.function.name
            if tc.function and tc.function.arguments:
                entry["arguments"] += tc.function.arguments
    assert [calls[i]["name"] for i in sorted(calls)] == ["read", "write"]
    assert all(calls[i]["id"].startswith("call_") for i in calls)
    assert json.loads(calls[1]["arguments"]) == {"file_path": "b.py", "content": "x = 1\n"}
    assert with_choices[-1].choices[0].finish_reason == "tool_calls"
    usage_chunk = chunks[-1]
    assert usage_chunk.choices == []
    assert usage_chunk.usage is not None
    assert usage_chunk.usage.completion_tokens == 7
    assert usage_chunk.usage.prompt_tokens == 140
    assert usage_chunk.usage.prompt_tokens_details is not None
    assert usage_chunk.usage.prompt_tokens_details.cached_tokens == 40
    (record,) = server.requests
    assert record.provider == "openai"
    assert record.path == "/v1/chat/completions"
    assert record.headers["authorization"] == "Bearer k"


async def test_openai_no_usage_chunk_stop_override_and_non_streaming() -> None:
    script = [
        {"text": "cut", "stop_reason": "length"},
        {"text": "plain", "tool_calls": [{"name": "read", "arguments_raw": '{"a": 1}'}]},
    ]
    async with FakeLLMServer(script) as server, _openai(server) as client:
        chunks = await _o_stream(client, include_usage=False)
        response = await client.chat.completions.create(
            model="g", messages=[{"role": "user", "content": "x"}], tools=O_TOOLS
        )
    assert all(c.usage is None for c in chunks)
    assert chunks[-1].choices[0].finish_reason == "length"
    message = response.choices[0].message
    assert message.content == "plain"
    assert message.tool_calls is not None
    call = message.tool_calls[0]
    assert call.type == "function"
    assert call.function.arguments == '{"a": 1}'
    assert response.choices[0].finish_reason == "tool_calls"
    assert response.usage is not None
    assert response.usage.total_tokens > 0


# --------------------------------------------------------------------------- side requests


async def test_side_requests_do_not_advance_the_script() -> None:
    async with FakeLLMServer([{"text": "main answer"}]) as server:
        async with _anthropic(server) as client:
            side = await _a_stream(client, tools=False)
            main = await _a_stream(client)
        async with _openai(server) as oclient:
            oside = await oclient.chat.completions.create(
                model="g", messages=[{"role": "user", "content": "title?"}]
            )
    side_text = "".join(e.delta.text for e in side if e.type == "content_block_delta")
    main_text = "".join(e.delta.text for e in main if e.type == "content_block_delta")
    assert side_text == "Test title"
    assert main_text == "main answer"
    assert oside.choices[0].message.content == "Test title"
    assert [r.turn for r in server.requests] == ["side", 0, "side"]
    assert [r.kind for r in server.requests] == ["side", "success", "side"]


async def test_side_requests_use_script_flag() -> None:
    script = {"side_requests_use_script": True, "turns": [{"text": "scripted"}]}
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        events = await _a_stream(client, tools=False)
    assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == "scripted"
    assert server.requests[0].turn == 0


# --------------------------------------------------------------------------- timing


async def test_delay_and_chunk_delay() -> None:
    script = [{"text": "a b c d", "delay": 0.2, "chunk_delay": 0.03}]
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        started = time.monotonic()
        stream = await client.messages.create(
            model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS, stream=True
        )
        first_at: float | None = None
        async for _event in stream:
            if first_at is None:
                first_at = time.monotonic()
        done = time.monotonic()
    assert first_at is not None
    assert first_at - started >= 0.2
    (record,) = server.requests
    assert record.ended_monotonic is not None
    # 10 events (message_start, ping, block start, 4 deltas, block stop, message_delta,
    # message_stop): 9 gaps of 0.03 s
    assert record.events_sent == 10
    assert record.ended_monotonic - record.arrived_monotonic >= 0.2 + 9 * 0.03
    assert done - started >= 0.2 + 9 * 0.03


async def test_each_event_is_flushed_without_nagle_stalls(monkeypatch: pytest.MonkeyPatch) -> None:
    """Many small events arrive without Nagle stalls: every accepted socket has TCP_NODELAY
    and a zero write high-water mark (checked on the sockets, not by timing)."""
    writers: list[asyncio.StreamWriter] = []
    accept = FakeLLMServer._on_connection

    def recording(self: FakeLLMServer, r: asyncio.StreamReader, w: asyncio.StreamWriter) -> None:
        writers.append(w)
        accept(self, r, w)

    monkeypatch.setattr(FakeLLMServer, "_on_connection", recording)
    words = " ".join(f"w{i}" for i in range(40))
    async with FakeLLMServer([{"text": words}] * 5) as server, _anthropic(server) as client:
        for _ in range(5):
            assert _text(await _a_stream(client)) == words
        assert writers
        for writer in writers:
            sock = writer.get_extra_info("socket")
            assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
            assert writer.transport.get_write_buffer_limits() == (0, 0)


async def test_delta_times_record_each_answer_text_delta_as_written() -> None:
    script = [{"thinking": "hm m", "text": ["a", "b", "c"], "chunk_delay": 0.01}] * 2
    async with FakeLLMServer(script, record_delta_times=True) as server:
        async with _anthropic(server) as client:
            received: list[float] = []
            for event in await _a_stream(client):
                if event.type == "content_block_delta" and event.delta.type == "text_delta":
                    received.append(time.monotonic())
        async with _openai(server) as oclient:
            chunks = await _o_stream(oclient)
        anthropic_record, openai_record = server.requests
        log = server.log_json()
    assert len(anthropic_record.delta_times) == 3  # text only: no thinking, signature, ping
    assert anthropic_record.delta_times == sorted(anthropic_record.delta_times)
    assert anthropic_record.ended_monotonic is not None
    assert anthropic_record.arrived_monotonic < anthropic_record.delta_times[0]
    assert anthropic_record.delta_times[-1] <= anthropic_record.ended_monotonic
    # chunk_delay separates the deltas, and each was stamped once written
    gaps = [b - a for a, b in itertools.pairwise(anthropic_record.delta_times)]
    assert min(gaps) >= 0.01
    assert all(w <= r for w, r in zip(anthropic_record.delta_times, received, strict=True))
    # OpenAI: the content chunks, not the role chunk (whose content is "")
    assert sum(1 for c in chunks if c.choices and c.choices[0].delta.content) == 3
    assert len(openai_record.delta_times) == 3
    assert log[0]["delta_times"] == anthropic_record.delta_times


async def test_delta_times_are_off_by_default_and_snapshots_are_copies() -> None:
    async with FakeLLMServer([{"text": "a b"}]) as server, _anthropic(server) as client:
        await _a_stream(client)
        assert server.requests[0].delta_times == []
    async with FakeLLMServer([{"text": "a b"}], record_delta_times=True) as server:
        async with _anthropic(server) as client:
            await _a_stream(client)
        snapshot = server.requests[0]
        snapshot.delta_times.clear()
        assert len(server.requests[0].delta_times) == 2


class _VirtualTime:
    """Stands in for ``time`` and ``asyncio`` inside the fake server: its clock moves only when the
    server sleeps, and each sleep lasts at least ``floor`` (as an OS timer does), plus the
    ``stalls`` (sleep number -> extra seconds, a loaded machine). Pacing is then measured in
    this clock, independent of how fast or busy the machine running the test is."""

    def __init__(self, floor: float, stalls: dict[int, float]) -> None:
        self.now = 0.0
        self.floor = floor
        self.stalls = stalls
        self.sleeps = 0

    def monotonic(self) -> float:
        return self.now

    async def sleep(self, seconds: float) -> None:
        self.now += max(seconds, self.floor) + self.stalls.get(self.sleeps, 0.0)
        self.sleeps += 1
        await asyncio.sleep(0)

    def __getattr__(self, name: str) -> Any:
        return getattr(time, name) if hasattr(time, name) else getattr(asyncio, name)


async def test_paced_chunk_delay_keeps_the_average_rate(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sleeps last >= 1 ms and a busy machine stalls; ``paced`` catches up instead of drifting."""
    deltas, interval, floor, stall = 300, 0.0002, 0.001, 0.05
    events = deltas + 6  # message_start, ping, block start, the deltas, block stop, delta/stop
    turn = {"text": [f"t{i} " for i in range(deltas)], "chunk_delay": interval}
    spans: dict[str, tuple[float, list[float]]] = {}
    for name, paced in (("unpaced", False), ("paced", True)):
        clock = _VirtualTime(floor, {100: stall})
        for module in (fake_http, fake_responses, fake_progress):  # arrival, schedule, end
            monkeypatch.setattr(module, "time", clock)
            monkeypatch.setattr(module, "asyncio", clock)
        async with FakeLLMServer([{**turn, "paced": paced}], record_delta_times=True) as server:
            async with _anthropic(server) as client:
                await _a_stream(client)
            (record,) = server.requests
        monkeypatch.undo()
        assert record.events_sent == events
        assert record.ended_monotonic is not None
        start = record.arrived_monotonic  # no `delay`: the schedule starts there
        spans[name] = (record.ended_monotonic - start, [t - start for t in record.delta_times])
    eps = 1e-9
    # Unpaced: one sleep before each event after the first, each >= floor, plus the stall.
    unpaced_total, _ = spans["unpaced"]
    assert unpaced_total == pytest.approx((events - 1) * floor + stall)
    # Paced: event k (delta i is event i + 3) is never sent before k intervals...
    paced_total, times = spans["paced"]
    assert all(t >= (i + 3) * interval - eps for i, t in enumerate(times))
    # ...and the stall is caught up: the last event is late by less than one sleep.
    assert (events - 1) * interval - eps <= paced_total < (events - 1) * interval + floor


def _text(events: list[Any]) -> str:
    return "".join(e.delta.text for e in events if e.type == "content_block_delta")


async def test_hold_after_waits_for_release_in_order() -> None:
    """A held stream sends nothing more until ``release()``, which frees the holds in order
    and may come before a stream reaches its hold."""
    script = [{"text": "a b c", "hold_after": 4}, {"text": "d e", "hold_after": 3}]
    async with FakeLLMServer(script) as server, _anthropic(server) as client:
        first = asyncio.create_task(_a_stream(client))
        while not (server.requests and server.requests[0].events_sent == 4):
            assert not first.done()
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.2)
        assert server.requests[0].events_sent == 4  # message_start, ping, block start, "a "
        assert not first.done()
        server.release()
        assert _text(await asyncio.wait_for(first, 30)) == "a b c"
        server.release()  # before the second stream begins: it never waits
        assert _text(await asyncio.wait_for(_a_stream(client), 30)) == "d e"
    with pytest.raises(ScriptError, match=r"\['hold_after'\] apply to success turns"):
        parse_script([{"status": 500, "hold_after": 1}])


# --------------------------------------------------------------------------- script model


def test_script_validation_errors(tmp_path: Path) -> None:
    with pytest.raises(ScriptError, match=r"turns\.0\.texts: Extra inputs"):
        parse_script({"turns": [{"texts": "typo"}]})
    with pytest.raises(ScriptError, match="put the response served after the errors in `then`"):
        parse_script([{"status": 429, "text": "x"}])
    with pytest.raises(ScriptError, match="empty turn"):
        parse_script([{}])
    with pytest.raises(ScriptError, match="only apply to error turns"):
        parse_script([{"text": "x", "times": 2}])
    with pytest.raises(ScriptError, match=r"turns\.0\.status"):
        parse_script([{"status": 200}])
    bad = tmp_path / "bad.json"
    bad.write_text("{", encoding="utf-8")
    with pytest.raises(ScriptError, match="not valid JSON"):
        load_script(bad)

    good = tmp_path / "good.json"
    good.write_text(json.dumps([{"text": "a"}, {"error": "rate_limit", "then": {"text": "b"}}]))
    script = load_script(good)
    assert isinstance(script, Script)
    assert len(script.turns) == 2
    assert script.side_text == "Test title"


# --------------------------------------------------------------------------- HTTP level


async def _raw_request(port: int, data: bytes) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(data)
        await writer.drain()
        return await asyncio.wait_for(reader.read(), 5)
    finally:
        writer.close()
        await writer.wait_closed()


async def test_control_endpoints_and_http_errors() -> None:
    async with FakeLLMServer([{"text": "first"}], max_body_bytes=1000) as server:
        async with httpx2.AsyncClient(base_url=server.anthropic_base_url) as http:
            health = await http.get("/_health")
            assert health.status_code == 200
            replaced = await http.post("/_script", json={"turns": [{"text": "replaced"}]})
            assert replaced.json() == {"ok": True, "turns": 1}
            rejected = await http.post("/_script", json={"turns": [{"bogus": 1}]})
            assert rejected.status_code == 400
            assert "bogus" in rejected.json()["error"]
            missing = await http.post("/v1/nothing", json={})
            assert missing.status_code == 404
            assert missing.json()["type"] == "error"
        async with _anthropic(server) as client:
            events = await _a_stream(client)
        assert "".join(e.delta.text for e in events if e.type == "content_block_delta") == (
            "replaced"
        )
        async with httpx2.AsyncClient(base_url=server.anthropic_base_url) as http:
            log = (await http.get("/_log")).json()
        assert [entry["path"] for entry in log] == ["/v1/nothing", "/v1/messages"]
        assert log[1]["turn"] == 0
        assert log[1]["body"]["model"] == "claude-test"
        assert isinstance(log[1]["arrived_wall"], float)

        raw = await _raw_request(server.port, b"NONSENSE\r\n\r\n")
        assert raw.startswith(b"HTTP/1.1 400 ")
        big = b"POST /v1/messages HTTP/1.1\r\nContent-Length: 5000\r\n\r\n"
        raw = await _raw_request(server.port, big)
        assert raw.startswith(b"HTTP/1.1 413 ")
        body = json.dumps({"model": "m", "tools": [{"name": "t"}], "stream": True}).encode()
        await server.wait_for_requests_async(2)
        server.set_script([{"text": "x"}])
        request = (
            b"POST /v1/messages HTTP/1.1\r\nHost: x\r\nConnection: close\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        raw = await _raw_request(server.port, request)
        head, _, rest = raw.partition(b"\r\n\r\n")
        assert b"transfer-encoding: chunked" in head
        assert b"content-type: text/event-stream" in head
        assert b"event: message_start" in rest
        assert rest.endswith(b"0\r\n\r\n")


async def test_http10_close_delimited_and_client_disconnect() -> None:
    body = json.dumps({"model": "m", "tools": [{"name": "t"}], "stream": True}).encode()
    request = b"POST /v1/messages HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body)
    script = [{"text": "a b"}, {"text": "x y z", "chunk_delay": 0.1}]
    async with FakeLLMServer(script) as server:
        raw = await _raw_request(server.port, request)
        head, _, rest = raw.partition(b"\r\n\r\n")
        assert b"transfer-encoding" not in head
        assert rest.startswith(b"event: message_start\n")
        assert rest.endswith(b'event: message_stop\ndata: {"type": "message_stop"}\n\n')

        reader, writer = await asyncio.open_connection("127.0.0.1", server.port)
        writer.write(request.replace(b"HTTP/1.0", b"HTTP/1.1"))
        await writer.drain()
        await reader.readuntil(b"event: message_start")
        writer.transport.abort()
        records = await server.wait_for_requests_async(2, timeout=5)
    assert records[1].error == "client disconnected"
    assert records[1].events_sent < 10


# --------------------------------------------------------------------------- thread runner + CLI


def test_running_fake_llm_in_a_thread() -> None:
    script = [{"text": "from thread"}, {"status": 500, "should_retry": False}]
    with running_fake_llm(script) as server:
        with anthropic.Anthropic(
            base_url=server.anthropic_base_url, api_key="k", max_retries=0
        ) as client:
            message = client.messages.create(
                model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS
            )
            with pytest.raises(anthropic.InternalServerError):
                client.messages.create(model="m", max_tokens=10, messages=A_MESSAGES, tools=A_TOOLS)
        records = server.wait_for_requests(2, timeout=5)
        port = server.port
    assert message.content[0].type == "text"
    assert message.content[0].text == "from thread"
    assert [r.status for r in records] == [200, 500]
    assert records[1].headers["x-stainless-retry-count"] == "0"
    with pytest.raises(httpx2.ConnectError), httpx2.Client() as http:
        http.get(f"http://127.0.0.1:{port}/_health")


def test_cli_subprocess(tmp_path: Path) -> None:
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps({"turns": [{"text": "cli says hi"}]}), encoding="utf-8")
    log_path = tmp_path / "log.json"
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "lsp_agent.testing.fake_llm",
            "--script",
            str(script_path),
            "--log",
            str(log_path),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        info = json.loads(proc.stdout.readline())
        assert info["anthropic_base_url"] == f"http://127.0.0.1:{info['port']}"
        assert info["openai_base_url"] == f"http://127.0.0.1:{info['port']}/v1"
        with openai.OpenAI(base_url=info["openai_base_url"], api_key="k", max_retries=0) as client:
            stream = client.chat.completions.create(
                model="g",
                messages=[{"role": "user", "content": "x"}],
                tools=O_TOOLS,
                stream=True,
            )
            text = "".join(c.choices[0].delta.content or "" for c in stream if c.choices)
        assert text == "cli says hi"
        proc.send_signal(signal.SIGTERM)
        _out, err = proc.communicate(timeout=10)
        assert proc.returncode == 0, err
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    log = json.loads(log_path.read_text(encoding="utf-8"))
    assert len(log) == 1
    assert log[0]["turn"] == 0
    assert log[0]["provider"] == "openai"
    assert log[0]["status"] == 200


def test_cli_rejects_bad_script(tmp_path: Path) -> None:
    script_path = tmp_path / "script.json"
    script_path.write_text(json.dumps([{"status": 429, "text": "x"}]), encoding="utf-8")
    result = subprocess.run(
        [sys.executable, "-m", "lsp_agent.testing.fake_llm", "--script", str(script_path)],
        capture_output=True,
        text=True,
        timeout=20,
        check=False,
    )
    assert result.returncode == 2
    assert "invalid fake LLM script" in result.stderr
