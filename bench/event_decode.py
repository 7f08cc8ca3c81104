"""Decode cost of a long session's event log: load 10,000 events, then decode each.

A session of ``--steps`` model steps, each the dozen events a real step records (started,
text, a tool call's three updates, usage, ended), is appended to a fresh SQLite store; then
``events()`` reads it back ``--repeat`` times, once as stored JSON only and once decoding
every event to its typed form (``StoredEvent.event``). The medians are printed in ms.

Measured when typed events came in (2 shared cores, a quiet moment): load 52–69 ms, decode
21–29 ms (about 2 µs an event, the frozen dataclass's ``__init__`` half of it); before, the
readers indexed the loaded dicts and paid nothing here. Readers that fold the log (review
ledger, checkpoints, context epochs) decode only the types they read.

    python bench/event_decode.py [--events 10000] [--repeat 7]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.core.events import EventType, NewEvent
from lsp_agent.storage.event_log import open_store

T = "2026-12-03T10:00:00.000Z"


def step_events(step: int) -> list[tuple[EventType, dict[str, Any]]]:
    """What one step of a turn records (the common shapes, in order)."""
    msg, call, part = f"msg_{step}", f"call_{step}", f"prt_{step}"
    base = {"toolCallId": call, "messageId": msg, "toolName": "read", "kind": "read"}
    return [
        ("assistant_message_started", {"messageId": msg, "model": "anthropic/x", "step": step}),
        ("text_delta", {"messageId": msg, "partId": part, "text": f"step {step} reads a file"}),
        ("tool_call_updated", {**base, "status": "pending", "input": {}}),
        ("tool_call_updated", {**base, "status": "pending", "input": {"file_path": "a.py"}}),
        (
            "assistant_message_ended",
            {"messageId": msg, "status": "completed", "finishReason": "tool_use"},
        ),
        (
            "usage_updated",
            {
                "inputTokens": step,
                "outputTokens": 9,
                "cacheReadTokens": 0,
                "cacheWriteTokens": 0,
                "contextUsed": step,
                "contextSize": 200000,
            },
        ),
        ("tool_call_updated", {**base, "status": "in_progress"}),
        (
            "tool_call_updated",
            {**base, "status": "completed", "title": "a.py", "output": "x" * 200},
        ),
    ]


async def measure(count: int, repeat: int) -> dict[str, float]:
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(Path(tmp))
        session = "ses_bench"
        created: dict[str, Any] = {
            "sessionId": session,
            "workspaceFolder": "file:///w",
            "title": "t",
            "model": "anthropic/x",
            "mode": "build",
        }
        await store.append(session, [NewEvent(type="session_created", data=created, time=T)])
        await store.append(
            session,
            [
                NewEvent(
                    type="user_message_admitted", time=T, data={"messageId": "msg_u", "content": []}
                )
            ],
        )
        await store.append(
            session,
            [
                NewEvent(
                    type="user_message_promoted", time=T, data={"messageId": "msg_u", "content": []}
                )
            ],
        )
        await store.append(
            session, [NewEvent(type="state_changed", time=T, data={"state": "running"})]
        )
        step, total = 0, 4
        while total < count:
            step += 1
            batch = [NewEvent(type=t, data=d, time=T) for t, d in step_events(step)]
            batch = batch[: count - total]
            await store.append(session, batch)
            total += len(batch)
        load, decode = [], []
        for _ in range(repeat):
            start = time.perf_counter()
            events = await store.events(session)
            load.append(time.perf_counter() - start)
            start = time.perf_counter()
            for event in events:
                getattr(event, "event", None)
            decode.append(time.perf_counter() - start)
        await store.close()
    assert len(events) == count, len(events)
    return {
        "events": count,
        "load_ms": statistics.median(load) * 1000,
        "decode_ms": statistics.median(decode) * 1000,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=7)
    args = parser.parse_args(argv)
    figures = asyncio.run(measure(args.events, args.repeat))
    print(
        f"{figures['events']} events: load {figures['load_ms']:.1f} ms,"
        f" decode {figures['decode_ms']:.1f} ms (median of {args.repeat})"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
