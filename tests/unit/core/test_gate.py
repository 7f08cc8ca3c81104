"""The permission gate inside the loop: rules, asks, answers, saved approvals, modes."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.messages import ToolCallPart, ToolSpec, Usage
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission.rules import PermissionReply, PermissionRequest, Rule
from lsp_agent.core.permission.subjects import EditedFileStat, EditSubject
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import (
    Finished,
    StreamEvent,
    TextDelta,
    ToolCallEnded,
    UsageReported,
)
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider, Step
from lsp_agent.testing.tools import tool_spec

MODEL = ModelInfo(provider="scripted", model="m")


class AskingTools:
    """``read`` and ``write``; each asks the gate for its permission on ``file_path``."""

    def __init__(self) -> None:
        self.ran: list[str] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("read", kind="read"),
            tool_spec("write", kind="edit", mutates=True, permission=PermissionKind.EDIT),
        )

    def _spec(self, name: str) -> ToolSpec:
        return next(spec for spec in self.specs() if spec.name == name)

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        path = str(call.input.get("file_path", "x"))
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self._spec(call.name).permission,
                patterns=(path,),
                title=f"{call.name} {path}",
            )
        )
        if not verdict.allowed:
            return ToolOutcome(output=verdict.message, is_error=True, stop_turn=verdict.stop_turn)
        self.ran.append(f"{call.name} {path}")
        return ToolOutcome(output="ok")


def calls(*items: tuple[str, str]) -> list[StreamEvent]:
    events: list[StreamEvent] = [
        ToolCallEnded(tool_call_id=f"p{i}", name=name, input={"file_path": path})
        for i, (name, path) in enumerate(items)
    ]
    return [*events, UsageReported(usage=Usage(input_tokens=1)), Finished(reason="tool_use")]


def text(answer: str) -> list[StreamEvent]:
    return [TextDelta(text=answer), Finished(reason="end_turn")]


def once() -> PermissionReply:
    return PermissionReply(kind="allow_once")


class Gate:
    def __init__(
        self,
        store: SqliteEventStore,
        steps: Sequence[Step],
        replies: Sequence[PermissionReply] = (),
        *,
        rules: Sequence[Rule] = (),
        mode: str = "build",
        ids: SequentialIds | None = None,
        tools: AskingTools | None = None,
    ) -> None:
        self.store = store
        self.provider = ScriptedProvider(steps)
        self.editor = RecordingEditor(replies)
        self.tools = tools or AskingTools()
        self.service = SessionService(
            store=store,
            provider=self.provider,
            tools=self.tools,
            editor=self.editor,
            clock=FakeClock(),
            ids=ids or SequentialIds(),
            options=AgentOptions(model=MODEL, mode=mode, rules=tuple(rules), titles=False),
        )

    async def turn(self, session_id: str | None = None, folder: str = "/ws") -> tuple[str, Any]:
        sid = session_id or await self.service.create(workspace_folder=folder)
        await self.service.admit(sid, [{"type": "text", "text": "go"}])
        return sid, await self.service.run_turn(sid)


ALLOW_READ = [Rule(permission="read", pattern="*", action="allow")]


async def test_an_allowed_call_runs_without_asking(store: SqliteEventStore) -> None:
    g = Gate(store, [calls(("read", "a.py")), text("done")], rules=ALLOW_READ)
    _, outcome = await g.turn()
    assert outcome.stop_reason == "end_turn"
    assert g.tools.ran == ["read a.py"]
    assert g.editor.asks == []


async def test_an_ask_is_recorded_and_answered(store: SqliteEventStore) -> None:
    g = Gate(store, [calls(("write", "a.py")), text("done")], [once()])
    _, outcome = await g.turn()
    assert outcome.stop_reason == "end_turn"
    assert g.tools.ran == ["write a.py"]
    (ask,) = g.editor.asks
    assert ask.request.permission == "edit"
    assert ask.mode == "build"
    types = g.editor.types()
    asked = types.index("permission_asked")
    assert types[asked : asked + 4] == [
        "permission_asked",
        "state_changed",
        "permission_resolved",
        "state_changed",
    ]
    assert g.editor.events[asked + 1].data == {"state": "requires_action"}
    resolved = g.editor.of_type("permission_resolved")[0].data
    assert resolved["state"] == "allowed"
    assert resolved["optionKind"] == "allow_once"


async def test_a_reject_with_a_reason_reaches_the_model_and_the_turn_goes_on(
    store: SqliteEventStore,
) -> None:
    reply = PermissionReply(kind="reject_once", reason="use b.py instead")
    g = Gate(store, [calls(("write", "a.py")), text("ok, b.py")], [reply])
    _, outcome = await g.turn()
    assert outcome.stop_reason == "end_turn"
    assert g.tools.ran == []
    result = g.provider.requests[1].messages[-1].parts[0]
    assert "use b.py instead" in repr(result)


async def test_a_plain_reject_ends_the_turn_and_skips_the_rest(store: SqliteEventStore) -> None:
    reply = PermissionReply(kind="reject_once")
    g = Gate(store, [calls(("write", "a.py"), ("write", "b.py"))], [reply])
    _, outcome = await g.turn()
    assert outcome.stop_reason == "cancelled"
    assert g.tools.ran == []
    assert len(g.provider.requests) == 1
    statuses = [e.data["status"] for e in g.editor.of_type("tool_call_updated")]
    assert statuses[-2:] == ["failed", "cancelled"]
    assert len(g.editor.asks) == 1


async def test_an_ask_nobody_answered_ends_the_turn_and_the_model_reads_why(
    store: SqliteEventStore,
) -> None:
    """The host dismissed the ask with a reason (the editor's answer did not come in time)."""
    why = "Nobody answered the permission request within 30 min, so the call was not run."
    reply = PermissionReply(kind=None, reason=why)
    g = Gate(store, [calls(("write", "a.py"), ("write", "b.py"))], [reply])
    _, outcome = await g.turn()
    assert outcome.stop_reason == "cancelled"
    assert g.tools.ran == []
    assert len(g.provider.requests) == 1
    failed = [e.data for e in g.editor.of_type("tool_call_updated") if e.data["status"] == "failed"]
    assert why in repr(failed[0])
    resolved = g.editor.of_type("permission_resolved")[0].data
    assert (resolved["state"], resolved["reason"]) == ("cancelled", why)


async def test_allow_for_session_is_remembered_for_that_session_only(
    store: SqliteEventStore,
) -> None:
    ids = SequentialIds()
    reply = PermissionReply(kind="allow_session")
    g = Gate(
        store, [calls(("write", "a.py")), calls(("write", "b.py")), text("done")], [reply], ids=ids
    )
    await g.turn()
    assert g.tools.ran == ["write a.py", "write b.py"]
    assert len(g.editor.asks) == 1
    other = Gate(store, [calls(("write", "c.py")), text("done")], [once()], ids=ids)
    await other.turn()
    assert len(other.editor.asks) == 1  # a new session asks again


async def test_always_is_saved_for_the_project(store: SqliteEventStore) -> None:
    ids = SequentialIds()
    reply = PermissionReply(kind="allow_always")
    g = Gate(store, [calls(("write", "a.py")), text("done")], [reply], ids=ids)
    await g.turn(folder="/ws")
    same_project = Gate(store, [calls(("write", "b.py")), text("done")], ids=ids)
    await same_project.turn(folder="/ws")
    assert same_project.tools.ran == ["write b.py"]
    other_project = Gate(store, [calls(("write", "b.py")), text("done")], [once()], ids=ids)
    await other_project.turn(folder="/elsewhere")
    assert len(other_project.editor.asks) == 1


async def test_a_configured_deny_beats_a_saved_approval(store: SqliteEventStore) -> None:
    ids = SequentialIds()
    always = [PermissionReply(kind="allow_always")]
    g = Gate(store, [calls(("write", "a.py")), text("done")], always, ids=ids)
    await g.turn()
    deny = [Rule(permission="edit", pattern="secret/*", action="deny", source="config")]
    later = Gate(store, [calls(("write", "secret/k.txt")), text("done")], rules=deny, ids=ids)
    await later.turn()
    assert later.tools.ran == []
    assert later.editor.asks == []
    result = repr(later.provider.requests[1].messages[-1].parts[0])
    assert "prevents you from using this specific tool call" in result


async def test_an_unknown_mode_denies_everything_and_offers_nothing(
    store: SqliteEventStore,
) -> None:
    g = Gate(store, [calls(("read", "a.py")), text("done")], rules=ALLOW_READ, mode="yolo")
    await g.turn()
    assert g.tools.ran == []
    # no tools offered at all (the scripted provider counts that as a side request)
    assert [r.tools for r in g.provider.side_requests] == [()]


async def test_plan_mode_hides_edit_tools_and_refuses_calls_to_them(
    store: SqliteEventStore,
) -> None:
    rules = [*ALLOW_READ, Rule(permission="edit", pattern="*", action="allow", source="config")]
    g = Gate(store, [calls(("write", "a.py")), text("done")], rules=rules, mode="plan")
    await g.turn()
    assert [t.name for t in g.provider.requests[0].tools] == ["read"]
    assert g.tools.ran == []
    assert g.editor.asks == []
    failed = g.editor.of_type("tool_call_updated")[-1].data
    assert failed["status"] == "failed"
    assert "not available in plan mode" in failed["error"]


class PreviewingTools(AskingTools):
    """``write`` asks with a diff preview of ``file_path``, as the edit tools do."""

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        path = str(call.input["file_path"])
        verdict = await ctx.ask(
            PermissionRequest(
                permission="edit",
                patterns=(path,),
                title=f"Write {path}",
                subject=EditSubject(files=(EditedFileStat(path=path),), patch="-old\n+new\n"),
                previews=(
                    FilePreview(
                        path=f"/ws/{path}",
                        base_text="BASE-TEXT-IN-MEMORY\n",
                        proposed_text="PROPOSED-TEXT-IN-MEMORY\n",
                    ),
                ),
            )
        )
        self.ran.append(f"{call.name} {path}")
        return ToolOutcome(output="ok" if verdict.allowed else verdict.message)


async def test_previews_reach_the_editor_but_never_the_log(store: SqliteEventStore) -> None:
    g = Gate(store, [calls(("write", "a.py")), text("done")], [once()], tools=PreviewingTools())
    sid, _ = await g.turn()

    (ask,) = g.editor.asks
    assert ask.request.previews == (
        FilePreview(
            path="/ws/a.py",
            base_text="BASE-TEXT-IN-MEMORY\n",
            proposed_text="PROPOSED-TEXT-IN-MEMORY\n",
        ),
    )
    (asked,) = g.editor.of_type("permission_asked")
    assert asked.data["subject"]["patch"] == "-old\n+new\n"
    stored = await store.events(sid)
    assert "permission_asked" in [e.type for e in stored]
    logged = repr([e.data for e in stored]) + repr([e.data for e in g.editor.events])
    assert "IN-MEMORY" not in logged
    assert "previews" not in logged


class NeverAnswers(RecordingEditor):
    def __init__(self) -> None:
        super().__init__()
        self.waiting = asyncio.Event()

    async def request_permission(self, ask: Any) -> PermissionReply:
        self.waiting.set()
        await asyncio.sleep(3600)
        raise AssertionError("unreachable")


async def test_cancelling_while_asking_records_the_ask_as_cancelled(
    store: SqliteEventStore,
) -> None:
    g = Gate(store, [calls(("write", "a.py"))])
    editor = NeverAnswers()
    g.service._editor = editor
    sid = await g.service.create(workspace_folder="/ws")
    await g.service.admit(sid, [{"type": "text", "text": "go"}])
    task = asyncio.create_task(g.service.run_turn(sid))
    await asyncio.wait_for(editor.waiting.wait(), 10)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    resolved = editor.of_type("permission_resolved")[0].data
    assert resolved["state"] == "cancelled"
    assert editor.events[-1].data == {"state": "idle", "stopReason": "cancelled"}
