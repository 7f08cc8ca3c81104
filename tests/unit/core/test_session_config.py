"""Per-session configuration options: mode and model, listed, changed, and taken up by a turn
at its next step (never during a tool call)."""

from __future__ import annotations

import gc
import weakref
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import pytest

from lsp_agent.core import prompts
from lsp_agent.core.compaction.policy import CompactionPolicy
from lsp_agent.core.errors import InvalidConfigValue, SessionNotFound
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.messages import ThinkingConfig, ToolCallPart, ToolSpec, Usage
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import CLIENT_MODES, MODES, SUBAGENTS
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission.rules import PermissionReply, PermissionRequest, Rule
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
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.models import FakeModels
from lsp_agent.testing.provider import ScriptedProvider, Step
from lsp_agent.testing.tools import tool_spec
from lsp_agent.wire.updates import to_update

MODEL_A = ModelInfo(provider="alpha", model="a1", input_price=1.0, output_price=1.0)
MODEL_B = ModelInfo(provider="beta", model="b1", context_window=50_000, max_output=1000)
MODEL_C = ModelInfo(provider="beta", model="c1")

ALLOW_EDIT = (Rule(permission="edit", pattern="*", action="allow", source="config"),)


class HookTools:
    """``read`` and ``write``; each asks the gate, and ``during`` runs inside the call (a
    client changing the session's options while a tool runs)."""

    def __init__(self) -> None:
        self.ran: list[str] = []
        self.during: Callable[[], Awaitable[None]] | None = None

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("read", kind="read"),
            tool_spec("write", kind="edit", mutates=True, permission=PermissionKind.EDIT),
        )

    def _spec(self, name: str) -> ToolSpec:
        return next(spec for spec in self.specs() if spec.name == name)

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        if self.during is not None:
            during, self.during = self.during, None
            await during()
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
    return [*events, UsageReported(usage=Usage(input_tokens=100)), Finished(reason="tool_use")]


def text(answer: str) -> list[StreamEvent]:
    return [TextDelta(text=answer), Finished(reason="end_turn")]


class Setup:
    """A service over the real store; with ``b_steps`` a catalog of two providers."""

    def __init__(
        self,
        store: SqliteEventStore,
        steps: Sequence[Step],
        *,
        b_steps: Sequence[Step] | None = None,
        replies: Sequence[PermissionReply] = (),
        rules: tuple[Rule, ...] = (),
        tools: HookTools | None = None,
        **options: Any,
    ) -> None:
        self.store = store
        self.a = ScriptedProvider(steps, name="alpha", side_answer="Title by A")
        self.b = ScriptedProvider(b_steps or [], name="beta", side_answer="Title by B")
        self.models = None
        if b_steps is not None:
            self.models = FakeModels(
                [(MODEL_A, self.a), (MODEL_B, self.b)], extra=[(MODEL_C, self.b)]
            )
        self.editor = RecordingEditor(replies)
        self.tools = tools or HookTools()
        self.service = SessionService(
            store=store,
            provider=self.a,
            tools=self.tools,
            editor=self.editor,
            clock=FakeClock(),
            ids=SequentialIds(),
            options=AgentOptions(model=MODEL_A, rules=rules, **options),
            models=self.models,
        )

    async def start(self, **create: Any) -> str:
        sid = await self.service.create(workspace_folder="/ws", **create)
        await self.service.admit(sid, [{"type": "text", "text": "go"}])
        return sid

    def config_events(self) -> list[StoredEvent]:
        return self.editor.of_type("config_changed")


def by_id(options: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {o["configId"]: o for o in options}


# -- listing -----------------------------------------------------------------------------------


async def test_config_options_have_the_protocol_shape(store: SqliteEventStore) -> None:
    s = Setup(store, [])
    sid = await s.service.create(workspace_folder="/ws")
    options = (await s.service.config_options(sid)).to_json()
    assert [o["configId"] for o in options] == ["mode", "model", "thought_level"]
    mode, model, thought = options
    assert {k: v for k, v in mode.items() if k != "options"} == {
        "configId": "mode",
        "name": "Mode",
        "category": "mode",
        "type": "select",
        "currentValue": "build",
    }
    assert [o["value"] for o in mode["options"]] == ["build", "plan"]
    assert [o["name"] for o in mode["options"]] == ["Build", "Plan"]
    assert all(o["description"] and "\n" not in o["description"] for o in mode["options"])
    assert {k: v for k, v in model.items() if k != "options"} == {
        "configId": "model",
        "name": "Model",
        "category": "model",
        "type": "select",
        "currentValue": "alpha/a1",
    }
    # without a catalog the configured model is the only one
    assert model["options"] == [{"value": "alpha/a1", "name": "alpha/a1"}]
    assert {k: v for k, v in thought.items() if k != "options"} == {
        "configId": "thought_level",
        "name": "Thought level",
        "category": "thought_level",
        "type": "select",
        "currentValue": "default",
    }
    assert [o["value"] for o in thought["options"]] == ["default", "off", "low", "medium", "high"]


async def test_the_model_list_is_the_catalog_plus_the_current_model(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, [], b_steps=[])
    sid = await s.service.create(workspace_folder="/ws", model="beta/c1")
    model = by_id((await s.service.config_options(sid)).to_json())["model"]
    assert model["currentValue"] == "beta/c1"
    assert [o["value"] for o in model["options"]] == ["alpha/a1", "beta/b1", "beta/c1"]
    assert model["options"][0] == {
        "value": "alpha/a1",
        "name": "a1",
        "description": "alpha model",
    }


async def test_an_unknown_session_is_not_found(store: SqliteEventStore) -> None:
    s = Setup(store, [])
    with pytest.raises(SessionNotFound):
        (await s.service.config_options("ses_nope")).to_json()
    with pytest.raises(SessionNotFound):
        await s.service.set_config("ses_nope", "mode", "plan")


# -- validation ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("config_id", "value", "message"),
    [
        ("temperature", "1", "configId must be 'mode', 'model' or 'thought_level'"),
        ("thought_level", "max", "thought_level must be one of default, off, low, medium, high"),
        ("mode", "yolo", "unknown mode 'yolo': expected build or plan"),
        ("mode", "explore", "unknown mode 'explore': expected build or plan"),
        ("model", "gamma/g1", "unknown model 'gamma/g1'"),
        ("model", "no-slash", "invalid model 'no-slash': expected 'provider/model'"),
    ],
)
async def test_invalid_values_are_refused_and_change_nothing(
    store: SqliteEventStore, config_id: str, value: str, message: str
) -> None:
    s = Setup(store, [], b_steps=[])
    sid = await s.service.create(workspace_folder="/ws")
    before = (await s.service.config_options(sid)).to_json()
    with pytest.raises(InvalidConfigValue, match=message):
        await s.service.set_config(sid, config_id, value)
    assert (await s.service.config_options(sid)).to_json() == before
    assert s.config_events() == []


async def test_without_a_catalog_only_the_configured_model_is_accepted(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, [])
    sid = await s.service.create(workspace_folder="/ws")
    with pytest.raises(InvalidConfigValue, match="unknown model 'beta/b1': expected alpha/a1"):
        await s.service.set_config(sid, "model", "beta/b1")
    with pytest.raises(InvalidConfigValue, match="unknown model"):
        await s.service.create(workspace_folder="/ws", model="beta/b1")


@pytest.mark.parametrize("name", [*MODES, "yolo"])
async def test_create_accepts_exactly_the_client_modes(store: SqliteEventStore, name: str) -> None:
    """The one check of a mode a client asks for (``agent/session/new``, issue 34): a
    subagent's mode only for a child session."""
    s = Setup(store, [])
    if name in CLIENT_MODES:
        sid = await s.service.create(workspace_folder="/ws", mode=name)
        info = await store.session(sid)
        assert info is not None
        assert info.mode == name
    else:
        with pytest.raises(InvalidConfigValue, match=f"unknown mode {name!r}"):
            await s.service.create(workspace_folder="/ws", mode=name)
    if name in SUBAGENTS:
        parent = await s.service.create(workspace_folder="/ws")
        child = await s.service.create(workspace_folder="/ws", mode=name, parent_session_id=parent)
        info = await store.session(child)
        assert info is not None
        assert info.mode == name


async def test_create_validates_mode_and_model(store: SqliteEventStore) -> None:
    s = Setup(store, [], b_steps=[])
    with pytest.raises(InvalidConfigValue, match="unknown mode 'yolo'"):
        await s.service.create(workspace_folder="/ws", mode="yolo")
    with pytest.raises(InvalidConfigValue, match="unknown model 'gamma/g1'"):
        await s.service.create(workspace_folder="/ws", model="gamma/g1")
    sid = await s.service.create(workspace_folder="/ws", mode="plan", model="beta/b1")
    info = await store.session(sid)
    assert info is not None
    assert (info.mode, info.model) == ("plan", "beta/b1")


# -- changing ------------------------------------------------------------------------------------


async def test_a_change_is_an_event_the_projection_and_the_update_follow(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, [], b_steps=[])
    sid = await s.service.create(workspace_folder="/ws")
    options = (await s.service.set_config(sid, "mode", "plan")).to_json()
    assert by_id(options)["mode"]["currentValue"] == "plan"
    assert options == (await s.service.config_options(sid)).to_json()
    (event,) = s.config_events()
    assert event.data == {"configId": "mode", "value": "plan", "configOptions": options}
    assert to_update(event) == {
        "sessionId": sid,
        "seq": event.seq,
        "update": {"sessionUpdate": "config_option_update", "configOptions": options},
    }
    options = (await s.service.set_config(sid, "model", "beta/b1")).to_json()
    assert by_id(options)["model"]["currentValue"] == "beta/b1"
    assert by_id(options)["mode"]["currentValue"] == "plan"
    info = await store.session(sid)
    assert info is not None
    assert (info.mode, info.model) == ("plan", "beta/b1")


async def test_setting_the_current_value_again_records_nothing(store: SqliteEventStore) -> None:
    s = Setup(store, [], b_steps=[])
    sid = await s.service.create(workspace_folder="/ws")
    options = (await s.service.set_config(sid, "mode", "build")).to_json()
    assert options == (await s.service.config_options(sid)).to_json()
    await s.service.set_config(sid, "model", "alpha/a1")
    assert s.config_events() == []


async def test_a_projection_rebuild_keeps_the_changes(store: SqliteEventStore) -> None:
    s = Setup(store, [], b_steps=[])
    sid = await s.service.create(workspace_folder="/ws")
    await s.service.set_config(sid, "model", "beta/b1")
    await s.service.set_config(sid, "mode", "plan")
    await s.service.set_config(sid, "mode", "build")
    await store.rebuild_projections()
    info = await store.session(sid)
    assert info is not None
    assert (info.mode, info.model) == ("build", "beta/b1")


async def test_an_ill_typed_change_is_refused_by_the_projection(store: SqliteEventStore) -> None:
    from lsp_agent.core.events import NewEvent
    from lsp_agent.storage.projections import ProjectionError

    s = Setup(store, [])
    sid = await s.service.create(workspace_folder="/ws")
    bad = NewEvent(type="config_changed", data={"configId": "title", "value": "x"}, time="t")
    with pytest.raises(ProjectionError, match="configId"):
        await store.append(sid, [bad])


# -- taking effect -------------------------------------------------------------------------------


async def test_a_mode_change_during_a_tool_applies_from_the_next_step(
    store: SqliteEventStore,
) -> None:
    s = Setup(
        store,
        [calls(("write", "a.py")), calls(("write", "b.py"), ("read", "c.py")), text("done")],
        replies=[PermissionReply(kind="allow_once")],
        rules=ALLOW_EDIT,
    )
    sid = await s.start()

    async def switch() -> None:
        await s.service.set_config(sid, "mode", "plan")

    s.tools.during = switch
    outcome = await s.service.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    first, second, third = s.a.requests
    # the call in flight kept the rules it started with: build mode allows the edit
    assert s.tools.ran == ["write a.py", "read c.py"]
    assert first.system[0].text == prompts.system("build")
    assert [t.name for t in first.tools] == ["read", "write"]
    # from the next step on: plan's prompt, plan's rules (edits hidden and refused)
    assert second.system[0].text == prompts.system("plan")
    assert third.system[0].text == prompts.system("plan")
    assert [t.name for t in second.tools] == ["read"]
    refused = [
        e.data for e in s.editor.of_type("tool_call_updated") if e.data["status"] == "failed"
    ]
    assert [d["toolName"] for d in refused] == ["write"]
    assert "not available in plan mode" in refused[0]["error"]
    # the permission ask of the next step is made in the new mode
    (ask,) = s.editor.asks
    assert ask.mode == "plan"
    assert ask.request.permission == "read"


async def test_a_turn_mode_override_wins_over_a_change(store: SqliteEventStore) -> None:
    s = Setup(store, [calls(("write", "a.py")), text("done")], rules=ALLOW_EDIT)
    sid = await s.start()

    async def switch() -> None:
        await s.service.set_config(sid, "mode", "plan")

    s.tools.during = switch
    await s.service.run_turn(sid, mode="build")
    assert [r.system[0].text for r in s.a.requests] == [prompts.system("build")] * 2
    info = await store.session(sid)
    assert info is not None
    assert info.mode == "plan"  # the session's own mode did change, for later turns


async def test_the_thought_level_sets_the_thinking_of_the_next_steps_and_persists(
    store: SqliteEventStore,
) -> None:
    configured = ThinkingConfig(budget_tokens=2048)
    s = Setup(
        store,
        [calls(("write", "a.py")), text("done"), text("again")],
        rules=ALLOW_EDIT,
        titles=False,
        thinking=configured,
    )
    sid = await s.start()

    async def switch() -> None:
        await s.service.set_config(sid, "thought_level", "high")

    s.tools.during = switch
    await s.service.run_turn(sid)
    # the step before the change thinks as configured; the one after, with the high budget
    assert [r.thinking for r in s.a.requests] == [configured, ThinkingConfig(budget_tokens=16_000)]
    [event] = s.config_events()
    assert (event.data["configId"], event.data["value"]) == ("thought_level", "high")
    await store.rebuild_projections()
    info = await store.session(sid)
    assert info is not None
    assert info.thought_level == "high"

    await s.service.set_config(sid, "thought_level", "off")
    await s.service.admit(sid, [{"type": "text", "text": "more"}])
    s.tools.during = None
    await s.service.run_turn(sid)
    assert s.a.requests[-1].thinking is None


async def test_a_model_change_sends_the_next_step_to_the_other_provider(
    store: SqliteEventStore,
) -> None:
    s = Setup(
        store,
        [calls(("write", "a.py"))],
        b_steps=[text("answered by beta")],
        rules=ALLOW_EDIT,
        titles=False,
    )
    sid = await s.start()

    async def switch() -> None:
        await s.service.set_config(sid, "model", "beta/b1")

    s.tools.during = switch
    outcome = await s.service.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    assert [r.model for r in s.a.requests] == ["a1"]
    (request,) = s.b.requests
    assert request.model == "b1"
    assert request.max_output_tokens == MODEL_B.max_output
    started = [e.data["model"] for e in s.editor.of_type("assistant_message_started")]
    assert started == ["alpha/a1", "beta/b1"]
    transcript = await store.transcript(sid)
    assert transcript[-1].to_json()["parts"] == [{"type": "text", "text": "answered by beta"}]
    usage = s.editor.of_type("usage_updated")[-1].data
    assert usage["contextSize"] == MODEL_B.context_window


async def test_a_session_created_on_another_model_uses_it_for_steps_and_title(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, [], b_steps=[text("hello from beta")])
    sid = await s.start(model="beta/b1")
    outcome = await s.service.run_turn(sid)
    await s.service.drain(timeout=5)
    assert outcome.stop_reason == "end_turn"
    assert s.a.requests == []
    assert s.a.side_requests == []
    assert [r.model for r in s.b.side_requests] == ["b1"]
    info = await store.session(sid)
    assert info is not None
    assert info.title == "Title by B"


async def test_manual_compaction_uses_the_sessions_model(store: SqliteEventStore) -> None:
    policy = CompactionPolicy(auto=False, keep_recent_tokens=1)
    s = Setup(
        store,
        [text("first answer " * 50)],
        b_steps=[text("second answer " * 50)],
        titles=False,
        compaction=policy,
        compaction_for=lambda info: policy,
    )
    sid = await s.start()
    await s.service.run_turn(sid)
    await s.service.set_config(sid, "model", "beta/b1")
    await s.service.admit(sid, [{"type": "text", "text": "more"}])
    await s.service.run_turn(sid)
    assert await s.service.compact(sid)
    assert s.a.side_requests == []
    (summary,) = s.b.side_requests
    assert summary.model == "b1"
    assert summary.system[0].text == prompts.load("compaction")


async def test_a_sessions_unresolvable_model_falls_back_to_the_configured_one(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, [], b_steps=[text("from beta")])
    sid = await s.start(model="beta/b1")
    # the same log opened by a service that only knows the configured model (alpha)
    other = Setup(store, [text("from alpha")], titles=False)
    outcome = await other.service.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    assert [r.model for r in other.a.requests] == ["a1"]
    assert s.b.requests == []


async def test_a_subtask_runs_on_the_parents_current_model(store: SqliteEventStore) -> None:
    task: list[StreamEvent] = [
        ToolCallEnded(
            tool_call_id="t",
            name="task",
            input={"description": "look", "prompt": "look around", "subagent_type": "explore"},
        ),
        Finished(reason="tool_use"),
    ]

    class SubtaskTools(HookTools):
        def specs(self) -> tuple[ToolSpec, ...]:
            return (tool_spec("task", mutates=True),)

        async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
            result = await ctx.events.run_subtask(
                str(call.input["description"]),
                str(call.input["prompt"]),
                str(call.input["subagent_type"]),
            )
            return ToolOutcome(output=result.text)

    s = Setup(store, [], b_steps=[task, text("parent done")], titles=False, tools=SubtaskTools())
    sid = await s.start(model="beta/b1")
    outcome = await s.service.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    assert s.a.requests == []
    assert [r.model for r in s.b.requests] == ["b1", "b1"]
    # the explore child is offered no tools here: the scripted provider counts it as a side call
    assert [r.model for r in s.b.side_requests] == ["b1"]
    children = [x for x in await store.list_sessions() if x.session_id != sid]
    assert [(c.model, c.mode) for c in children] == [("beta/b1", "explore")]
    mode = by_id((await s.service.config_options(children[0].session_id)).to_json())["mode"]
    assert mode["currentValue"] == "explore"
    assert [o["value"] for o in mode["options"]] == ["build", "plan", "explore"]


async def test_the_service_is_freed_without_the_cycle_collector(store: SqliteEventStore) -> None:
    """Its parts hold no reference back to it: dropped, it goes at once, and with it the
    providers' connections (a cycle would leave them to the collector, after the loop)."""
    s = Setup(store, [])
    service = weakref.ref(s.service)
    gc.disable()
    try:
        del s
        assert service() is None
    finally:
        gc.enable()


async def test_a_prompt_reads_the_session_row_once_at_admission_and_once_per_turn(
    store: SqliteEventStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 34: the door's read is passed down to ``admit``; the turn reads the row once at
    its start and hands it to the loop and to its first step (was 5 reads in all)."""
    s = Setup(store, [text("one"), text("two")], titles=False)
    sid = await s.service.create(workspace_folder="/ws")
    reads: list[str] = []
    read = store.session

    async def counted(session_id: str) -> SessionInfo | None:
        reads.append(session_id)
        return await read(session_id)

    monkeypatch.setattr(store, "session", counted)
    info = await store.session(sid)  # the door's one read
    await s.service.admit(sid, [{"type": "text", "text": "go"}], info=info)
    assert len(reads) == 1
    await s.service.run_turn(sid)
    assert len(reads) == 2
