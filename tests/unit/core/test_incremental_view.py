"""The model's view kept up to date incrementally equals the view rebuilt from scratch.

After every kind of event a session records — user prompts, notes, reasoning, text, tool
calls pending → running → done or failed, a late update of an older message, usage, a
compaction, a staged revert, its commit — the transcript caught up by seq
(``LiveTranscript``), the messages folded once each (``FoldCache``) and the request bytes
built from kept encodings (``WireCache``, both providers) are exactly what reading and
folding and encoding the whole session again gives. Then the same through real turns: every
request the loop sends equals the one rebuilt from the store at that moment.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from lsp_agent.core.checkpoints import hidden_messages
from lsp_agent.core.compaction.policy import CompactionPolicy, latest_compaction_point
from lsp_agent.core.compaction.policy import model_messages as rebuilt_messages
from lsp_agent.core.events import NewEvent
from lsp_agent.core.history import FoldCache
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart, Usage
from lsp_agent.core.stream_events import StreamEvent, UsageReported
from lsp_agent.core.transcript import TranscriptMessage
from lsp_agent.core.turn.live_transcript import LiveTranscript
from lsp_agent.providers import anthropic, openai
from lsp_agent.providers.wire_cache import WireCache
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.testing.tools import tool_spec
from tests.unit.core.test_loop import Harness, text, tool_call

SID = "ses_01J0000000000000000000VIEW"
TIME = "2026-12-03T12:00:00+00:00"


def ev(kind: str, **data: Any) -> NewEvent:
    return NewEvent(type=kind, data=data, time=TIME)


def tool(call: str, message: str, status: str, **extra: Any) -> NewEvent:
    return ev("tool_call_updated", toolCallId=call, messageId=message, toolName="read",
              status=status, **extra)  # fmt: skip


EVERY_KIND = [
    ev("session_created", sessionId=SID, workspaceFolder="/ws", model="m/m", mode="build"),
    ev("user_message_admitted", messageId="msg_u1", content=[{"type": "text", "text": "hi"}]),
    ev("state_changed", state="running"),
    ev("user_message_promoted", messageId="msg_u1", content=[{"type": "text", "text": "hi"}]),
    ev("context_built", epoch=0, baseline="b", date="2026-12-03", instructions={}, skills=""),
    ev("assistant_message_started", messageId="msg_a1", step=1, model="m/m"),
    ev("reasoning_delta", messageId="msg_a1", partId="prt_r1", text="let me "),
    ev("reasoning_delta", messageId="msg_a1", partId="prt_r1", text="think"),
    ev("reasoning_ended", messageId="msg_a1", partId="prt_r1", signature="sig"),
    ev("text_delta", messageId="msg_a1", partId="prt_t1", text="Rea"),
    ev("text_delta", messageId="msg_a1", partId="prt_t1", text="ding."),
    tool("call_1", "msg_a1", "pending", input={"file_path": "a.py"}),
    tool("call_2", "msg_a1", "pending", input={"file_path": "b.py"}),
    tool("call_1", "msg_a1", "in_progress", title="Read a.py"),
    tool("call_1", "msg_a1", "completed", output="1\tx = 1"),
    tool("call_2", "msg_a1", "failed", error="no such file"),
    ev("assistant_message_ended", messageId="msg_a1", status="completed", finishReason="tool_use"),
    ev("usage_updated", inputTokens=10, outputTokens=5, contextUsed=15, contextSize=1000),
    ev("context_noted", messageId="msg_n1", text="a.py changed on disk"),
    ev("assistant_message_started", messageId="msg_a2", step=2, model="m/m"),
    tool("call_3", "msg_a2", "pending", input={"file_path": "c.py"}),
    ev("assistant_message_ended", messageId="msg_a2", status="interrupted"),
    ev("state_changed", state="idle", stopReason="cancelled"),
    ev("user_message_admitted", messageId="msg_u2", content=[{"type": "text", "text": "again"}]),
    ev("user_message_promoted", messageId="msg_u2", content=[{"type": "text", "text": "again"}]),
    # A message older than the newest one changes (recovery closing the open call).
    tool("call_3", "msg_a2", "interrupted", error="the agent stopped"),
    ev("assistant_message_started", messageId="msg_a3", step=1, model="m/m"),
    ev("text_delta", messageId="msg_a3", partId="prt_t3", text="Done."),
    ev("assistant_message_ended", messageId="msg_a3", status="completed", finishReason="end_turn"),
    ev("compaction_started", auto=True, reason="threshold"),
    ev("compaction_ended", auto=True, summary="## Objective\nread", firstKeptMessageId="msg_n1"),
    ev(
        "revert_staged",
        messageId="msg_u2",
        restoreTree="t1",
        undoTree="t2",
        files=[],
        hidden=["msg_u2", "msg_a3"],
        scope="conversation",
    ),
    ev("revert_cleared", messageId="msg_u2"),
    ev(
        "revert_staged",
        messageId="msg_u2",
        restoreTree="t1",
        undoTree="t2",
        files=[],
        hidden=["msg_u2", "msg_a3"],
        scope="conversation",
    ),
    ev("revert_committed", messageId="msg_u2", dropped=["msg_u2", "msg_a3"], scope="conversation"),
    ev("user_message_admitted", messageId="msg_u3", content=[{"type": "text", "text": "new"}]),
    ev("user_message_promoted", messageId="msg_u3", content=[{"type": "text", "text": "new"}]),
]

SYSTEM = (SystemBlock(text="mode"), SystemBlock(text="baseline", cache=True))
SIDE = ModelRequest(
    model="m", system=(), messages=(Message(role="user", parts=(TextPart(text="title?"),)),)
)


def request(messages: list[Message]) -> ModelRequest:
    return ModelRequest(model="m", system=SYSTEM, messages=tuple(messages),
                        tools=(tool_spec("read", kind="read"),))  # fmt: skip


def visible(transcript: list[TranscriptMessage], hidden: frozenset[str]) -> list[TranscriptMessage]:
    return [m for m in transcript if m.message_id not in hidden]


async def test_after_every_kind_of_event_the_kept_view_equals_the_rebuilt_one(
    store: SqliteEventStore,
) -> None:
    live = LiveTranscript(store, SID)
    folds = FoldCache()
    wire_anthropic, wire_openai = WireCache(), WireCache()
    seen_changes = 0
    for event in EVERY_KIND:
        await store.append(SID, [event])
        kept = await live.current()
        rebuilt = await store.transcript(SID)
        assert kept == rebuilt, event.type
        assert live.through_seq == await store.last_seq(SID)
        events = await store.events(SID)
        point, hidden = latest_compaction_point(events), hidden_messages(events)
        mine = rebuilt_messages(visible(kept, hidden), point, folds.fold)
        theirs = rebuilt_messages(visible(rebuilt, hidden), point)
        assert mine == theirs, event.type
        if not mine:
            continue
        seen_changes += 1
        assert anthropic.request_body(request(mine), wire_anthropic) == anthropic.request_body(
            request(theirs)
        ), event.type
        assert openai.request_body(
            request(mine), compatible=False, cache=wire_openai
        ) == openai.request_body(request(theirs), compatible=False), event.type
        # A side request (a title) on the same provider between two steps.
        anthropic.request_body(SIDE, wire_anthropic)
        openai.request_body(SIDE, compatible=False, cache=wire_openai)
    assert seen_changes > 20
    assert [m.message_id for m in await live.current()][-1] == "msg_u3"


async def test_the_changes_after_a_seq_are_only_the_messages_touched_since(
    store: SqliteEventStore,
) -> None:
    await store.append(SID, EVERY_KIND[:17])
    through = await store.last_seq(SID)
    await store.append(SID, EVERY_KIND[17:27])
    changed, now = await store.transcript_changes(SID, through)
    assert now == await store.last_seq(SID)
    # usage and state events touch no message; msg_a2 was started, its call closed later.
    assert [m.message_id for m in changed] == ["msg_n1", "msg_a2", "msg_u2", "msg_a3"]
    assert await store.transcript_changes(SID, now) == ([], now)


async def test_the_cached_wire_form_never_carries_an_old_cache_mark() -> None:
    """The last message is marked for caching in a copy: the next request, where it is no
    longer last, sends it unmarked (as encoding the whole body does)."""
    cache = WireCache()
    first = [Message(role="user", parts=(TextPart(text="one"),))]
    second = [*first, Message(role="user", parts=(TextPart(text="two"),))]
    assert b"cache_control" in anthropic.request_body(request(first), cache).split(b"one")[1]
    body = anthropic.request_body(request(second), cache)
    assert body == anthropic.request_body(request(second))
    assert b"cache_control" not in body.split(b'"one"')[1].split(b'"two"')[0]


class CheckingProvider(ScriptedProvider):
    """Before answering each step, rebuilds the request's messages from the store."""

    def __init__(self, store: SqliteEventStore, steps: Any) -> None:
        super().__init__(steps, side_answer="## Objective\nkeep reading")
        self.store = store
        self.checked: list[tuple[tuple[Message, ...], list[Message]]] = []

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if request.tools:
            [session] = await self.store.list_sessions()
            events = await self.store.events(session.session_id)
            transcript = visible(await self.store.transcript(session.session_id),
                                 hidden_messages(events))  # fmt: skip
            expected = rebuilt_messages(transcript, latest_compaction_point(events))
            self.checked.append((request.messages, expected))
        async for event in super().stream(request):
            yield event


def near_limit(call_id: str) -> list[StreamEvent]:
    """A tool call whose reported usage puts the next request over the compaction limit."""
    started, ended, _usage, finished = tool_call(call_id, file_path="big.py")
    return [started, ended, UsageReported(usage=Usage(input_tokens=950, output_tokens=5)), finished]


async def test_every_request_of_real_turns_equals_the_view_rebuilt_from_the_store(
    store: SqliteEventStore,
) -> None:
    steps = [
        tool_call("c1", file_path="a.py"),
        tool_call("c2", file_path="b.py", fail=True),
        text("read both"),
        near_limit("c3"),  # the next request compacts first, in the middle of the turn
        tool_call("c4", file_path="c.py"),
        text("done"),
        text("after the revert"),
    ]
    provider = CheckingProvider(store, steps)
    h = Harness(
        store, [], provider=provider,
        compaction=CompactionPolicy(reserve_tokens=100, keep_recent_tokens=40),
    )  # fmt: skip
    sid, _ = await h.turn("read a.py and b.py")
    await h.turn("now c.py", session_id=sid)
    events = await store.events(sid)
    assert any(e.type == "compaction_ended" and e.data.get("summary") for e in events)
    second_prompt = [e for e in events if e.type == "user_message_promoted"][-1]
    await h.service.revert_stage(sid, second_prompt.data["messageId"], scope="conversation")
    await h.turn("something else", session_id=sid)
    assert len(provider.checked) == len(steps)
    for sent, expected in provider.checked:
        assert list(sent) == expected
