"""The fake LLM's fault scripts themselves (``stall_after``, ``event_order``, ``inject``,
``by_history``, ``side_turn``): what goes on the wire, and the scripts it refuses."""

from __future__ import annotations

from typing import Any

import httpx2
import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer, ScriptError, parse_script

TOOLS = [{"name": "read", "description": "r", "input_schema": {"type": "object"}}]


def body(messages: list[dict[str, Any]] | None = None, *, tools: bool = True) -> dict[str, Any]:
    out: dict[str, Any] = {
        "model": "m",
        "max_tokens": 10,
        "stream": True,
        "messages": messages or [{"role": "user", "content": "hi"}],
    }
    if tools:
        out["tools"] = TOOLS
    return out


async def stream_text(server: FakeLLMServer, payload: dict[str, Any]) -> tuple[int, str]:
    async with httpx2.AsyncClient(base_url=server.anthropic_base_url, timeout=10) as client:
        response = await client.post("/v1/messages", json=payload)
        return response.status_code, response.text


async def test_event_order_and_inject_shape_the_stream() -> None:
    # message_start, ping, block_start, "a ", "b", block_stop, message_delta, message_stop
    script = {
        "turns": [
            {
                "text": ["a ", "b"],
                "event_order": [0, 1, 2, 4, 3, 5, 6, 7],
                "inject": [{"before": 1, "raw": "garbage\n\n"}, {"before": 1, "raw": ": c\n\n"}],
            },
            {"text": "x", "event_order": [0, 9]},
        ]
    }
    async with FakeLLMServer(script) as server:
        status, text = await stream_text(server, body())
        assert status == 200
        chunks = text.split("\n\n")
        assert chunks[1:3] == ["garbage", ": c"]  # injected in order, before event 1
        deltas = [c for c in chunks if "text_delta" in c]
        assert '"b"' in deltas[0]
        assert '"a "' in deltas[1]  # swapped
        status, text = await stream_text(server, body())
        assert status == 500
        assert "event_order indexes [9] are out of range" in text
    assert [r.events_sent for r in server.requests] == [10, 0]


async def read_until_idle(server: FakeLLMServer) -> None:
    """Read a stream until it is silent for 0.3 s (then httpx2 gives up and closes)."""
    async with httpx2.AsyncClient(base_url=server.anthropic_base_url) as client:
        timeout = httpx2.Timeout(10, read=0.3)
        async with client.stream("POST", "/v1/messages", json=body(), timeout=timeout) as got:
            async for _ in got.aiter_bytes():
                pass


async def test_a_stall_holds_the_stream_until_the_client_leaves() -> None:
    async with FakeLLMServer([{"text": "a b c", "stall_after": 2}]) as server:
        with pytest.raises(httpx2.ReadTimeout):
            await read_until_idle(server)
        (record,) = await server.wait_for_requests_async(1)
    assert record.stalled
    assert record.events_sent == 2
    assert record.error == "client disconnected"


async def test_by_history_serves_each_conversation_its_own_position() -> None:
    script = {"turns": [{"text": "first"}, {"text": "second"}], "by_history": True}
    later = [
        {"role": "user", "content": "hi"},
        {"role": "assistant", "content": "first"},
        {"role": "user", "content": "more"},
    ]
    async with FakeLLMServer(script) as server:
        for messages in (later, None, later, None):
            status, _ = await stream_text(server, body(messages))
            assert status == 200
        status, _ = await stream_text(server, body([*later, {"role": "assistant", "content": "x"}]))
    assert [r.turn for r in server.requests] == [1, 0, 1, 0, None]
    assert status == 500  # past the last turn: exhausted


async def test_side_turn_answers_side_requests() -> None:
    script = {"turns": [], "side_turn": {"text": "summary text"}}
    async with FakeLLMServer(script) as server:
        status, text = await stream_text(server, body(tools=False))
    assert status == 200
    assert "summary" in text


@pytest.mark.parametrize(
    ("script", "said"),
    [
        ({"turns": [{"status": 429}], "by_history": True}, "success turns only"),
        ({"turns": [], "side_turn": {"status": 500}}, "side_turn"),
        ({"turns": [{"status": 429, "stall_after": 1}]}, "apply to success turns"),
        ({"turns": [{"inject": [{"raw": "x"}]}]}, "before"),
    ],
)
def test_inconsistent_fault_scripts_are_refused(script: dict[str, Any], said: str) -> None:
    with pytest.raises(ScriptError, match=said):
        parse_script(script)
