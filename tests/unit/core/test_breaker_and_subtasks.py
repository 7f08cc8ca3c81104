"""The circuit breaker for repeated failures, and subagents in child sessions."""

from __future__ import annotations

from collections.abc import Sequence

import pytest

from lsp_agent.core.messages import ToolCallPart, ToolSpec
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import Finished, StreamEvent, TextDelta, ToolCallEnded
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider, Step
from lsp_agent.testing.tools import tool_spec

MODEL = ModelInfo(provider="scripted", model="m")


class Tools:
    """``flaky`` always fails the same way; ``task`` starts a subagent; ``write`` writes."""

    def __init__(self) -> None:
        self.runs: list[str] = []

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("flaky", permission=PermissionKind.WEBFETCH),
            tool_spec("read", kind="read"),
            tool_spec("write", kind="edit", mutates=True, permission=PermissionKind.EDIT),
            tool_spec("task", mutates=True),
        )

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        self.runs.append(call.name)
        if call.name == "flaky":
            port = call.input.get("port", "9")
            return ToolOutcome(output=f"ECONNREFUSED 127.0.0.1:{port}", is_error=True)
        if call.name == "task":
            result = await ctx.events.run_subtask("find it", "where is x?", call.input["agent"])
            return ToolOutcome(output=f"{result.session_id}: {result.text} {result.error or ''}")
        return ToolOutcome(output="ok")


def call(name: str, **args: str) -> list[StreamEvent]:
    return [
        ToolCallEnded(tool_call_id=f"c-{name}", name=name, input=dict(args)),
        Finished(reason="tool_use"),
    ]


def text(answer: str) -> list[StreamEvent]:
    return [TextDelta(text=answer), Finished(reason="end_turn")]


def service(
    store: SqliteEventStore, steps: Sequence[Step]
) -> tuple[SessionService, ScriptedProvider, Tools, RecordingEditor]:
    provider, tools, editor = ScriptedProvider(steps), Tools(), RecordingEditor()
    svc = SessionService(
        store=store,
        provider=provider,
        tools=tools,
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(model=MODEL, titles=False),
    )
    return svc, provider, tools, editor


async def test_a_tool_failing_the_same_way_three_times_is_withheld(store: SqliteEventStore) -> None:
    steps = [call("flaky")] * 5 + [text("I could not reach it.")]
    svc, provider, tools, editor = service(store, steps)
    sid = await svc.create(workspace_folder="/ws")
    await svc.admit(sid, [{"type": "text", "text": "go"}])
    outcome = await svc.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    assert tools.runs == ["flaky"] * 3
    third = provider.requests[3].messages[-1].parts[0]
    assert "withheld for the rest of this turn" in repr(third)
    assert "flaky" not in [t.name for t in provider.requests[3].tools]
    assert "flaky" in [t.name for t in provider.requests[2].tools]
    refused = [e.data for e in editor.of_type("tool_call_updated") if e.data["status"] == "failed"]
    assert "is withheld" in refused[-1]["error"]
    (withheld,) = editor.of_type("tool_withheld")
    assert withheld.data["toolName"] == "flaky"


async def test_only_the_same_error_in_a_row_counts(store: SqliteEventStore) -> None:
    ports = ["1", "1", "2", "2", "1", "1"]
    steps = [call("flaky", port=p) for p in ports] + [text("ok")]
    svc, _, tools, editor = service(store, steps)
    sid = await svc.create(workspace_folder="/ws")
    await svc.admit(sid, [{"type": "text", "text": "go"}])
    await svc.run_turn(sid)
    assert tools.runs.count("flaky") == 6
    assert editor.of_type("tool_withheld") == []


@pytest.mark.parametrize("agent", ["explore", "general"])
async def test_a_subagent_runs_in_a_child_session_with_restricted_tools(
    store: SqliteEventStore, agent: str
) -> None:
    steps = [call("task", agent=agent), text("x is in a.py"), text("done")]
    svc, provider, _, _ = service(store, steps)
    sid = await svc.create(workspace_folder="/ws")
    await svc.admit(sid, [{"type": "text", "text": "find x"}])
    outcome = await svc.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    parent_first, child_request, parent_last = provider.requests
    child_tools = {t.name for t in child_request.tools}
    if agent == "explore":
        # an allow-list of reading permissions: flaky (webfetch) is not on it
        assert child_tools == {"read"}  # nothing that writes, runs, fetches or delegates
    else:
        assert child_tools == {"flaky", "read", "write"}
    assert "task" in {t.name for t in parent_first.tools}
    result = repr(parent_last.messages[-1].parts[0])
    assert "x is in a.py" in result
    children = [s for s in await store.list_sessions() if s.session_id != sid]
    assert len(children) == 1
    child = children[0]
    assert child.session_id in result
    assert child.title == f"find it (@{agent} subagent)"
    assert [m.role for m in await store.transcript(child.session_id)] == ["user", "assistant"]
    created = (await store.events(child.session_id))[0]
    assert created.data["parentSessionId"] == sid
    assert created.data["mode"] == agent


async def test_an_unknown_subagent_is_an_error_result(store: SqliteEventStore) -> None:
    svc, provider, _, _ = service(store, [call("task", agent="wizard"), text("ok")])
    sid = await svc.create(workspace_folder="/ws")
    await svc.admit(sid, [{"type": "text", "text": "go"}])
    await svc.run_turn(sid)
    assert "Unknown agent type" in repr(provider.requests[1].messages[-1].parts[0])
