"""The loop with a scripted provider, fake clock and tools, over the real SQLite store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Sequence
from typing import Any

import pytest

from lsp_agent.core import events as ev
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import (
    ModelRequest,
    TextPart,
    ToolCallPart,
    ToolResultPart,
    ToolSpec,
    Usage,
)
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import (
    Finished,
    StreamEvent,
    TextDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider, Step
from lsp_agent.testing.tools import tool_spec

MODEL = ModelInfo(
    provider="scripted", model="m", context_window=1000, input_price=1.0, output_price=2.0
)


class EchoTools:
    def __init__(self) -> None:
        self.calls: list[ToolCallPart] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (tool_spec("read", kind="read"),)

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        self.calls.append(call)
        if call.input.get("fail"):
            return ToolOutcome(output="no such file", is_error=True)
        if "exit" in call.input:  # a command's status
            return ToolOutcome(output="ran", exit_code=call.input["exit"])
        return ToolOutcome(output=f"contents of {call.input.get('file_path')}", title="a.py")


def text(answer: str, usage: Usage | None = None) -> list[StreamEvent]:
    return [
        TextDelta(text=answer[: len(answer) // 2]),
        TextDelta(text=answer[len(answer) // 2 :]),
        UsageReported(usage=usage or Usage(input_tokens=10, output_tokens=5)),
        Finished(reason="end_turn"),
    ]


def tool_call(call_id: str, **args: Any) -> list[StreamEvent]:
    return [
        ToolCallStarted(tool_call_id=call_id, name="read"),
        ToolCallEnded(tool_call_id=call_id, name="read", input=args),
        UsageReported(usage=Usage(input_tokens=10, output_tokens=5)),
        Finished(reason="tool_use"),
    ]


class Harness:
    def __init__(
        self, store: SqliteEventStore, steps: Sequence[Step], provider: Any = None, **options: Any
    ) -> None:
        """``provider`` replaces the one that plays ``steps``."""
        self.store = store
        self.provider = ScriptedProvider(steps)
        self.editor = RecordingEditor()
        self.tools = EchoTools()
        self.clock = FakeClock()
        self.service = SessionService(
            store=store,
            provider=provider or self.provider,
            tools=self.tools,
            editor=self.editor,
            clock=self.clock,
            ids=SequentialIds(),
            options=AgentOptions(model=MODEL, **options),
        )

    async def turn(self, prompt: str = "hi", session_id: str | None = None, **kw: Any) -> Any:
        sid = session_id or await self.service.create(workspace_folder="/ws")
        await self.service.admit(sid, [{"type": "text", "text": prompt}])
        outcome = await self.service.run_turn(sid, **kw)
        await self.service.drain(timeout=5)
        return sid, outcome


async def test_a_text_turn_is_recorded_and_ends_idle(store: SqliteEventStore) -> None:
    h = Harness(store, [text("Hello there")])
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    transcript = await store.transcript(sid)
    assert [m.role for m in transcript] == ["user", "assistant"]
    assert transcript[1].to_json()["parts"] == [{"type": "text", "text": "Hello there"}]
    seqs = [e.seq for e in h.editor.events]
    assert seqs == list(range(1, len(seqs) + 1))
    assert [t for t in h.editor.types() if t != "title_set"][:5] == [
        "session_created",
        "user_message_admitted",
        "state_changed",
        "context_built",
        "user_message_promoted",
    ]
    info = await store.session(sid)
    assert info is not None
    assert info.state == "idle"
    assert info.title == "Test title"
    assert info.usage.input_tokens == 10
    assert info.usage.cost == pytest.approx((10 * 1.0 + 5 * 2.0) / 1_000_000)


async def test_tool_results_are_fed_back_to_the_model(store: SqliteEventStore) -> None:
    h = Harness(store, [tool_call("t1", file_path="a.py"), text("It prints.")])
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    second = h.provider.requests[1]
    (result,) = second.messages[-1].parts
    assert isinstance(result, ToolResultPart)
    assert result.output == "contents of a.py"
    assert not result.is_error
    statuses = [e.data["status"] for e in h.editor.events if e.type == "tool_call_updated"]
    assert statuses == ["pending", "pending", "in_progress", "completed"]
    transcript = await store.transcript(sid)
    call = transcript[1].to_json()["parts"][0]
    assert call["status"] == "completed"
    assert call["output"] == "contents of a.py"


async def test_a_commands_exit_status_reaches_the_tool_call_event(
    store: SqliteEventStore,
) -> None:
    h = Harness(store, [tool_call("t1", exit=3), text("Done.")])
    await h.turn()
    calls = [e.event for e in h.editor.events if e.type == "tool_call_updated"]
    assert [(c.status, c.exit_code) for c in calls if isinstance(c, ev.ToolCallUpdated)] == [
        ("pending", None),
        ("pending", None),
        ("in_progress", None),
        ("completed", 3),
    ]
    assert [e.data.get("exitCode") for e in h.editor.events].count(3) == 1


async def test_a_failed_tool_is_an_error_result_and_the_turn_goes_on(
    store: SqliteEventStore,
) -> None:
    h = Harness(store, [tool_call("t1", fail=True), text("Sorry.")])
    _, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    (result,) = h.provider.requests[1].messages[-1].parts
    assert isinstance(result, ToolResultPart)
    assert (result.output, result.is_error) == ("no such file", True)


async def test_retryable_errors_are_retried_with_backoff_then_succeed(
    store: SqliteEventStore,
) -> None:
    rate_limited = ProviderError("Too Many Requests", kind="rate_limit", status=429, retry_after=7)
    h = Harness(store, [rate_limited, rate_limited, text("ok")])
    _, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    assert len(h.provider.requests) == 3
    assert h.clock.sleeps == [7, 7]
    waits = [e.data for e in h.editor.events if e.type == "state_changed" and "error" in e.data]
    assert len(waits) == 2
    assert all(w["error"]["retryAt"] and w["error"]["retryable"] for w in waits)


async def test_retries_are_bounded_by_the_policy(store: SqliteEventStore) -> None:
    down = ProviderError("bad gateway", kind="server", status=502)
    h = Harness(store, [down, down], retry=RetryPolicy(max_retries=1))
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "error"
    assert len(h.provider.requests) == 2
    transcript = await store.transcript(sid)
    assert transcript[-1].status == "failed"


async def test_auth_errors_fail_at_once(store: SqliteEventStore) -> None:
    h = Harness(store, [ProviderError("check ANTHROPIC_API_KEY", kind="auth", status=401)])
    _, outcome = await h.turn()
    assert outcome.stop_reason == "error"
    assert "ANTHROPIC_API_KEY" in str(outcome.error)
    assert len(h.provider.requests) == 1
    assert h.clock.sleeps == []
    last = h.editor.events[-1]
    assert last.type == "state_changed"
    assert last.data["stopReason"] == "error"


async def test_the_last_step_keeps_tools_but_forbids_them(store: SqliteEventStore) -> None:
    h = Harness(store, [tool_call("t1", file_path="a"), tool_call("t2", file_path="b")])
    _, outcome = await h.turn(max_steps=2)
    assert outcome.stop_reason == "max_steps"
    first, last = h.provider.requests
    assert first.tool_choice == "auto"
    assert last.tool_choice == "none"
    assert last.tools == first.tools
    wrap_up = last.messages[-1].parts[-1]
    assert isinstance(wrap_up, TextPart)
    assert "MAXIMUM STEPS" in wrap_up.text
    assert len(h.tools.calls) == 1
    updates = [e.data for e in h.editor.events if e.type == "tool_call_updated"]
    refused = updates[-1]
    assert refused["toolCallId"] != h.tools.calls[0].tool_call_id
    assert refused["status"] == "failed"
    assert "maximum number of steps" in refused["error"]


async def test_continuing_a_session_sends_the_earlier_conversation(
    store: SqliteEventStore,
) -> None:
    h = Harness(store, [text("first answer"), text("second answer")])
    sid, _ = await h.turn("one")
    await h.turn("two", session_id=sid)
    request: ModelRequest = h.provider.requests[1]
    assert [m.role for m in request.messages] == ["user", "assistant", "user"]
    assert request.messages[1].parts == (TextPart(text="first answer"),)
    assert len(h.provider.side_requests) == 1  # the title is made once


class SlowProvider:
    """Streams one delta, then waits until cancelled."""

    name = "slow"

    def __init__(self) -> None:
        self.streaming = asyncio.Event()

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if not request.tools:
            return
        yield TextDelta(text="partial ")
        self.streaming.set()
        await asyncio.sleep(3600)


async def test_cancelling_a_turn_leaves_a_consistent_log(store: SqliteEventStore) -> None:
    slow = SlowProvider()
    h = Harness(store, [], provider=slow)
    sid = await h.service.create(workspace_folder="/ws")
    await h.service.admit(sid, [{"type": "text", "text": "hi"}])
    task = asyncio.create_task(h.service.run_turn(sid))
    await asyncio.wait_for(slow.streaming.wait(), 10)
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    transcript = await store.transcript(sid)
    assert transcript[-1].status == "interrupted"
    assert transcript[-1].to_json()["parts"] == [{"type": "text", "text": "partial "}]
    assert h.editor.events[-1].data == {"state": "idle", "stopReason": "cancelled"}


async def test_text_deltas_are_batched(store: SqliteEventStore) -> None:
    many: list[StreamEvent] = [TextDelta(text="x") for _ in range(200)]
    h = Harness(store, [[*many, Finished(reason="end_turn")]])
    await h.turn()
    deltas = [e for e in h.editor.events if e.type == "text_delta"]
    assert len(deltas) < 200
    assert "".join(e.data["text"] for e in deltas) == "x" * 200


async def test_provider_tool_call_ids_reused_across_steps_are_kept_apart(
    store: SqliteEventStore,
) -> None:
    h = Harness(
        store, [tool_call("call_0", file_path="a"), tool_call("call_0", file_path="b"), text("ok")]
    )
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    transcript = await store.transcript(sid)
    calls = [p for m in transcript for p in m.to_json()["parts"] if p["type"] == "tool_call"]
    assert [c["input"] for c in calls] == [{"file_path": "a"}, {"file_path": "b"}]
    assert len({c["toolCallId"] for c in calls}) == 2
    assert all(c["status"] == "completed" for c in calls)


def dropped() -> ProviderError:
    return ProviderError("connection reset mid-stream", kind="stream_dropped")


async def test_a_dropped_stream_is_retried_once_with_the_same_request(
    store: SqliteEventStore,
) -> None:
    broken: list[StreamEvent | ProviderError] = [
        TextDelta(text="half an ans"),
        ToolCallStarted(tool_call_id="t9", name="read"),
        dropped(),
    ]
    h = Harness(store, [broken, text("whole answer")])
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "end_turn"
    first, second = h.provider.requests
    assert first == second
    assert h.tools.calls == []
    transcript = await store.transcript(sid)
    statuses = [(m.role, m.status) for m in transcript]
    assert statuses == [
        ("user", "completed"),
        ("assistant", "interrupted"),
        ("assistant", "completed"),
    ]
    interrupted = transcript[1].to_json()["parts"]
    assert interrupted[0] == {"type": "text", "text": "half an ans"}
    assert interrupted[1]["status"] == "cancelled"
    # the interrupted attempt is never sent to the model later
    await h.service.admit(sid, [{"type": "text", "text": "more"}])
    h.provider._steps.append(text("fine"))
    await h.service.run_turn(sid)
    later = h.provider.requests[-1]
    assert "half an ans" not in repr(later.messages)
    assert [m.role for m in later.messages] == ["user", "assistant", "user"]


async def test_a_stream_dropped_twice_fails_the_turn_with_a_clear_error(
    store: SqliteEventStore,
) -> None:
    broken: list[StreamEvent | ProviderError] = [TextDelta(text="x"), dropped()]
    h = Harness(store, [broken, broken])
    sid, outcome = await h.turn()
    assert outcome.stop_reason == "error"
    assert "broke off twice" in str(outcome.error)
    assert len(h.provider.requests) == 2
    transcript = await store.transcript(sid)
    assert [m.status for m in transcript[1:]] == ["interrupted", "failed"]


async def test_crossing_midnight_adds_a_date_note_and_keeps_the_system(
    store: SqliteEventStore,
) -> None:
    h = Harness(store, [text("first"), text("second")])
    sid, _ = await h.turn("one")
    h.clock.advance(24 * 3600)
    await h.turn("two", session_id=sid)
    first, second = h.provider.requests
    assert second.system == first.system
    assert second.messages[: len(first.messages)] == first.messages
    notes = [
        part.text
        for message in second.messages[len(first.messages) :]
        for part in message.parts
        if isinstance(part, TextPart) and "context-update" in part.text
    ]
    assert len(notes) == 1
    assert "The date is now" in notes[0]
