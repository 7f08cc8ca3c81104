"""The model view's own work per step, kept up to date vs rebuilt, at 100 and 1,000 steps.

In one process, on the real SQLite store: a session of N ``read`` steps (the events a step
records), then per further step the work between the step's last event and the request
bytes — catching the transcript up (``LiveTranscript``), folding (``FoldCache``) and the
Anthropic body (``WireCache``) — against reading the whole transcript, folding it and encoding
it all (what every step did before). The minimum of 15 steps each: unlike the end-to-end
figures of ``--long``, other jobs on a shared machine barely move it.

    python -m bench.view_cost [--steps 100,1000]
"""

from __future__ import annotations

import argparse
import asyncio
import tempfile
import time
from pathlib import Path

from lsp_agent.core.compaction.policy import model_messages
from lsp_agent.core.events import NewEvent
from lsp_agent.core.history import FoldCache
from lsp_agent.core.messages import ModelRequest, SystemBlock
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.turn.live_transcript import LiveTranscript
from lsp_agent.providers import anthropic
from lsp_agent.providers.wire_cache import WireCache
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.testing.tools import tool_spec

SID = "ses_01J00000000000000000VIEWCOST"
TIME = "2026-12-03T12:00:00+00:00"
OUTPUT = "".join(f"{i + 1}\tline_{i} = {i}\n" for i in range(4))
TOOLS = tuple(
    tool_spec(f"tool_{i}", kind="read", permission=PermissionKind.READ) for i in range(15)
)
REPS = 15


def ev(kind: str, **data: object) -> NewEvent:
    return NewEvent(type=kind, data=dict(data), time=TIME)


def step(n: int) -> list[NewEvent]:
    message, call = f"msg_a{n:06d}", f"call_{n:06d}"
    return [
        ev("assistant_message_started", messageId=message, step=n, model="m/m"),
        ev(
            "tool_call_updated",
            toolCallId=call,
            messageId=message,
            toolName="read",
            status="pending",
            input={"file_path": "a.py"},
        ),
        ev(
            "tool_call_updated",
            toolCallId=call,
            messageId=message,
            toolName="read",
            status="completed",
            output=OUTPUT,
        ),
        ev(
            "assistant_message_ended",
            messageId=message,
            status="completed",
            finishReason="tool_use",
        ),
    ]


def request(messages: list[object]) -> ModelRequest:
    return ModelRequest(model="m", system=(SystemBlock(text="mode", cache=True),),
                        messages=tuple(messages), tools=TOOLS)  # type: ignore[arg-type]  # fmt: skip


async def kept_step(live: LiveTranscript, folds: FoldCache, wire: WireCache) -> float:
    begun = time.perf_counter()
    messages = model_messages(await live.current(), None, folds.fold)
    anthropic.request_body(request(list(messages)), wire)
    return (time.perf_counter() - begun) * 1000


async def rebuilt_step(store: SqliteEventStore) -> float:
    begun = time.perf_counter()
    messages = model_messages(await store.transcript(SID), None)
    anthropic.request_body(request(list(messages)))
    return (time.perf_counter() - begun) * 1000


async def measure(sizes: list[int]) -> list[tuple[int, float, float]]:
    out = []
    with tempfile.TemporaryDirectory() as tmp:
        store = await open_store(Path(tmp))
        prompt = [{"type": "text", "text": "read a.py repeatedly"}]
        await store.append(SID, [
            ev("session_created", sessionId=SID, workspaceFolder="/ws", model="m/m", mode="build"),
            ev("user_message_admitted", messageId="msg_u", content=prompt),
            ev("user_message_promoted", messageId="msg_u", content=prompt),
        ])  # fmt: skip
        live, folds, wire = LiveTranscript(store, SID), FoldCache(), WireCache()
        done = 0
        for size in sizes:
            while done < size:
                done += 1
                await store.append(SID, step(done))
            await kept_step(live, folds, wire)  # caught up to here, as the turn would be
            kept, rebuilt = [], []
            for _ in range(REPS):
                done += 1
                await store.append(SID, step(done))
                kept.append(await kept_step(live, folds, wire))
                rebuilt.append(await rebuilt_step(store))
            out.append((size, min(kept), min(rebuilt)))
        await store.close()
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--steps", default="100,1000")
    args = parser.parse_args()
    sizes = sorted(int(n) for n in args.steps.split(","))
    for size, kept, rebuilt in asyncio.run(measure(sizes)):
        print(f"at {size:,} steps: kept up to date {kept:.2f} ms, rebuilt {rebuilt:.2f} ms "
              f"(min of {REPS} steps)")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
