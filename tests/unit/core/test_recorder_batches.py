"""A step's bookkeeping events are queued and committed together: one transaction, in the
order they happened, by the next ``emit`` (with its own event), a ``flush``, or the batch
window. And the gate reads saved approvals only when the rules alone would ask."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.events import NewEvent, StoredEvent
from lsp_agent.core.permission.rules import PermissionReply, PermissionRequest, Rule
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.turn.permission_gate import PermissionGate
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.testing.clock import FakeClock
from lsp_agent.testing.editor import RecordingEditor

SESSION = "ses_1"
STARTED_AND_DELTA = ("assistant_message_started", "text_delta")
WAIT = 10.0


class CountingStore:
    """The real store, with each append's events (one list per transaction) and each
    approvals read counted."""

    def __init__(self, store: SqliteEventStore) -> None:
        self.store = store
        self.transactions: list[list[str]] = []
        self.approval_reads = 0

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
        self.transactions.append([e.type for e in events])
        return await self.store.append(session_id, events)

    async def approvals(self, session_id: str) -> list[Rule]:
        self.approval_reads += 1
        return await self.store.approvals(session_id)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.store, name)


async def _opened(
    tmp_path: Path, *, window: float = WAIT, replies: Sequence[PermissionReply] = ()
) -> tuple[CountingStore, RecordingEditor, Recorder]:
    """``window``: long by default, so that only what a test does commits."""
    store = CountingStore(await open_store(tmp_path))
    await store.store.append(
        SESSION,
        [
            NewEvent(
                type="session_created",
                data={
                    "sessionId": SESSION,
                    "workspaceFolder": "file:///w",
                    "title": "",
                    "model": "m",
                    "mode": "build",
                },
                time="2026-01-01T00:00:00Z",
            )
        ],
    )
    editor = RecordingEditor(replies)
    recorder = Recorder(
        session_id=SESSION,
        store=store,  # type: ignore[arg-type]
        editor=editor,
        clock=FakeClock(),
        batch_window=window,
    )
    return store, editor, recorder


def _call_announced() -> ev.ToolCallUpdated:
    return ev.ToolCallUpdated(
        tool_call_id="call_1",
        message_id="msg_2",
        tool_name="read",
        kind="read",
        status="pending",
        input={},
    )


def _started(n: int) -> ev.AssistantMessageStarted:
    return ev.AssistantMessageStarted(message_id=f"msg_{n}", model="m", step=n)


def _ended(message_id: str) -> ev.AssistantMessageEnded:
    return ev.AssistantMessageEnded(message_id=message_id, status="completed")


def test_queued_records_commit_with_the_next_emit_in_one_transaction(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, editor, recorder = await _opened(tmp_path)
        await recorder.record(_started(1))
        await recorder.record(_ended("msg_1"))
        await recorder.record(_started(2))
        await recorder.delta("text_delta", "msg_2", "prt_1", "a")  # quiet: committed at once
        await recorder.delta("text_delta", "msg_2", "prt_1", "b")
        await recorder.record(_call_announced())
        await recorder.delta("text_delta", "msg_2", "prt_2", "c")
        await recorder.delta("text_delta", "msg_2", "prt_2", "d")
        assert store.transactions == [  # the leading-edge delta, with what was queued before it
            [*("assistant_message_started", "assistant_message_ended"), *STARTED_AND_DELTA]
        ]
        stored = await recorder.emit(ev.StateChanged(state="requires_action"))
        assert store.transactions[-1] == [
            "text_delta",
            "tool_call_updated",
            "text_delta",
            "state_changed",
        ]
        assert stored.type == "state_changed"
        assert [e.seq for e in editor.events] == list(range(2, stored.seq + 1))
        texts = [e.data["text"] for e in editor.events if e.type == "text_delta"]
        assert texts == ["a", "b", "cd"]
        await recorder.close()
        await store.store.close()

    asyncio.run(scenario())


def test_a_queued_record_alone_is_committed_within_the_window(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, editor, recorder = await _opened(tmp_path, window=0.01)
        await recorder.record(_started(1))
        assert store.transactions == []
        await asyncio.sleep(0.2)  # the window is 10 ms
        assert [e.type for e in editor.events] == ["assistant_message_started"]
        assert store.transactions == [["assistant_message_started"]]
        await recorder.close()
        await store.store.close()

    asyncio.run(scenario())


def test_flush_and_close_commit_what_is_queued(tmp_path: Path) -> None:
    async def scenario() -> None:
        store, _, recorder = await _opened(tmp_path)
        await recorder.record(_started(1))
        await recorder.flush()
        assert store.transactions == [["assistant_message_started"]]
        await recorder.record(_ended("msg_1"))
        await recorder.close()
        assert store.transactions[-1] == ["assistant_message_ended"]
        assert [e.type for e in await store.store.events(SESSION)][-2:] == [
            "assistant_message_started",
            "assistant_message_ended",
        ]
        await store.store.close()

    asyncio.run(scenario())


def _gate(store: CountingStore, editor: RecordingEditor, recorder: Recorder) -> PermissionGate:
    return PermissionGate(
        session_id=SESSION,
        mode="build",
        store=store,  # type: ignore[arg-type]
        editor=editor,
        recorder=recorder,
    )


def test_the_gate_reads_saved_approvals_only_when_the_rules_would_ask(tmp_path: Path) -> None:
    read = PermissionRequest(permission="read", patterns=("a.py",), title="Read a.py")
    edit = PermissionRequest(
        permission="edit", patterns=("a.py",), always=("a.py",), title="Edit a.py"
    )
    rules = [
        Rule(permission="read", pattern="*", action="allow"),
        Rule(permission="bash", pattern="*", action="deny"),
        Rule(permission="edit", pattern="*", action="ask"),
    ]

    async def scenario() -> None:
        allow = PermissionReply(kind="allow_session")
        store, editor, recorder = await _opened(tmp_path, replies=[allow])
        gate = _gate(store, editor, recorder)
        ids = {"tool_call_id": "call_1", "message_id": "msg_1"}
        assert (await gate.ask(read, rules=rules, **ids)).allowed
        bash = PermissionRequest(permission="bash", patterns=("ls",), title="ls")
        assert not (await gate.ask(bash, rules=rules, **ids)).allowed
        assert store.approval_reads == 0  # decided by the rules alone
        assert (await gate.ask(edit, rules=rules, **ids)).allowed  # asked, allowed for the session
        assert store.approval_reads == 1
        asks = len([e for e in editor.events if e.type == "permission_asked"])
        assert (await gate.ask(edit, rules=rules, **ids)).allowed  # the saved approval
        assert store.approval_reads == 2
        assert len([e for e in editor.events if e.type == "permission_asked"]) == asks == 1
        await recorder.close()
        await store.store.close()

    asyncio.run(scenario())
