"""A model per agent: titles and summaries on the cheapest model of the session's provider
(or ``agents.title`` / ``agents.summary``), subagents on ``agents.task``, build and plan on
their mode's model; the session's model switch moves build/plan only."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lsp_agent.core.compaction.policy import CompactionPolicy
from lsp_agent.core.messages import ThinkingConfig, ToolCallPart, ToolSpec, Usage
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions, AgentSettings
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
from lsp_agent.testing.models import FakeModels
from lsp_agent.testing.provider import ScriptedProvider, Step
from lsp_agent.testing.tools import tool_spec

MAIN = ModelInfo(provider="alpha", model="big", input_price=3.0, output_price=15.0)
CHEAP = ModelInfo(provider="alpha", model="small", input_price=0.5, output_price=2.0)
TINY = ModelInfo(
    provider="alpha", model="tiny", input_price=0.1, output_price=0.1, context_window=8_000
)
"""The cheapest of all, but too small to summarize a session on ``MAIN``."""
OTHER = ModelInfo(provider="beta", model="other", input_price=1.0, output_price=1.0)
BETA_CHEAP = ModelInfo(provider="beta", model="mini", input_price=0.2, output_price=0.2)


def text(answer: str) -> list[StreamEvent]:
    return [TextDelta(text=answer), Finished(reason="end_turn")]


def task_call() -> list[StreamEvent]:
    call = ToolCallEnded(
        tool_call_id="t",
        name="task",
        input={"description": "look", "prompt": "look around", "agent": "general"},
    )
    return [call, Finished(reason="tool_use")]


class Tools:
    """``read``, and ``task`` starting a subagent."""

    def specs(self) -> tuple[ToolSpec, ...]:
        return (tool_spec("read", kind="read"), tool_spec("task", mutates=True))

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        if call.name == "task":
            result = await ctx.events.run_subtask("look", "look around", call.input["agent"])
            return ToolOutcome(output=result.text or str(result.error))
        return ToolOutcome(output="ok")


class Setup:
    """One scripted provider per model, all in one catalog; ``steps`` per model name."""

    def __init__(
        self,
        store: SqliteEventStore,
        steps: dict[str, Sequence[Step]],
        *,
        agents: dict[str, AgentSettings] | None = None,
        **options: Any,
    ) -> None:
        self.store = store
        self.providers = {
            info.model: ScriptedProvider(steps.get(info.model, []), side_answer=f"By {info.model}")
            for info in (MAIN, CHEAP, TINY, OTHER, BETA_CHEAP)
        }
        models = [(info, self.providers[info.model]) for info in (MAIN, CHEAP, TINY, OTHER)]
        self.models = FakeModels(models, extra=[(BETA_CHEAP, self.providers["mini"])])
        self.editor = RecordingEditor()
        self.service = SessionService(
            store=store,
            provider=self.providers["big"],
            tools=Tools(),
            editor=self.editor,
            clock=FakeClock(),
            ids=SequentialIds(),
            options=AgentOptions(model=MAIN, agents=agents or {}, **options),
            models=self.models,
        )

    def main(self, model: str) -> list[str]:
        return [r.model for r in self.providers[model].requests]

    def side(self, model: str) -> list[str]:
        return [r.model for r in self.providers[model].side_requests]

    async def start(self, **create: Any) -> str:
        sid = await self.service.create(workspace_folder="/ws", **create)
        await self.service.admit(sid, [{"type": "text", "text": "go"}])
        return sid

    async def title(self, sid: str) -> str:
        await self.service.drain(timeout=5)
        info = await self.store.session(sid)
        assert info is not None
        return info.title


# -- title -------------------------------------------------------------------------------------


async def test_the_title_goes_to_the_cheapest_model_of_the_sessions_provider(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, {"big": [text("answer")]})
    sid = await s.start()
    await s.service.run_turn(sid)
    assert await s.title(sid) == "By tiny"  # a title needs no large context
    (request,) = s.providers["tiny"].side_requests
    assert request.max_output_tokens == 64
    assert request.thinking is None
    assert s.main("big") == ["big"]
    assert s.side("big") == []


async def test_a_configured_title_model_gets_the_title_and_nothing_else(
    store: SqliteEventStore,
) -> None:
    title = AgentSettings(model="beta/other", max_tokens=32, thinking=ThinkingConfig())
    s = Setup(store, {"big": [text("answer")]}, agents={"title": title})
    sid = await s.start()
    await s.service.run_turn(sid)
    assert await s.title(sid) == "By other"
    (request,) = s.providers["other"].side_requests
    assert (request.model, request.max_output_tokens) == ("other", 32)
    assert request.thinking == ThinkingConfig()
    assert s.providers["other"].requests == []
    assert s.main("big") == ["big"]


async def test_the_model_switch_moves_the_main_loop_and_leaves_the_title_model(
    store: SqliteEventStore,
) -> None:
    title = AgentSettings(model="alpha/small")
    s = Setup(store, {"other": [text("answer")]}, agents={"title": title})
    sid = await s.start()
    await s.service.set_config(sid, "model", "beta/other")
    await s.service.run_turn(sid)
    assert s.main("other") == ["other"]
    assert await s.title(sid) == "By small"
    assert s.main("big") == []
    assert s.side("other") == []


async def test_without_a_configured_title_model_the_title_follows_the_provider(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, {"other": [text("answer")]})
    sid = await s.start(model="beta/other")
    await s.service.run_turn(sid)
    assert await s.title(sid) == "By mini"


async def test_an_unusable_title_model_falls_back_to_the_sessions_model(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, {"big": [text("answer")]}, agents={"title": AgentSettings(model="x/y")})
    sid = await s.start()
    await s.service.run_turn(sid)
    assert await s.title(sid) == "By big"


# -- summary -----------------------------------------------------------------------------------


async def test_a_summary_goes_to_the_cheapest_model_with_room_for_the_session(
    store: SqliteEventStore,
) -> None:
    policy = CompactionPolicy(auto=False, keep_recent_tokens=1)
    s = Setup(store, {"big": [text("first answer " * 50)]}, titles=False, compaction=policy)
    sid = await s.start()
    await s.service.run_turn(sid)
    assert await s.service.compact(sid)
    assert s.side("tiny") == []  # cheaper, but its 8k context is smaller than the session's
    (summary,) = s.providers["small"].side_requests
    assert summary.max_output_tokens == 4096
    assert s.side("big") == []


async def test_an_automatic_compaction_mid_turn_asks_the_summary_model(
    store: SqliteEventStore,
) -> None:
    policy = CompactionPolicy(keep_recent_tokens=1)
    full: list[StreamEvent] = [
        TextDelta(text="looked " * 50),
        ToolCallEnded(tool_call_id="r", name="read", input={"file_path": "a.py"}),
        UsageReported(usage=Usage(input_tokens=120_000)),  # past 128k - 20k reserved
        Finished(reason="tool_use"),
    ]
    s = Setup(store, {"big": [full, text("done")]}, titles=False, compaction=policy)
    sid = await s.start()
    assert (await s.service.run_turn(sid)).stop_reason == "end_turn"
    assert s.main("big") == ["big", "big"]
    assert s.side("small") == ["small"]
    assert s.side("big") == []


async def test_a_configured_summary_model_and_its_cap_are_used(store: SqliteEventStore) -> None:
    policy = CompactionPolicy(auto=False, keep_recent_tokens=1)
    summary = AgentSettings(model="beta/other", max_tokens=500)
    s = Setup(
        store,
        {"big": [text("first answer " * 50)]},
        titles=False,
        compaction=policy,
        agents={"summary": summary},
    )
    sid = await s.start()
    await s.service.run_turn(sid)
    assert await s.service.compact(sid)
    (request,) = s.providers["other"].side_requests
    assert request.max_output_tokens == 500


# -- build, plan, task ---------------------------------------------------------------------------


async def test_a_subagent_runs_on_the_task_model(store: SqliteEventStore) -> None:
    task = AgentSettings(model="beta/other", max_tokens=700)
    s = Setup(
        store,
        {"big": [task_call(), text("parent done")], "other": [text("child answer")]},
        titles=False,
        agents={"task": task},
    )
    sid = await s.start()
    outcome = await s.service.run_turn(sid)
    assert outcome.stop_reason == "end_turn"
    assert s.main("big") == ["big", "big"]
    (child_request,) = s.providers["other"].requests
    assert (child_request.model, child_request.max_output_tokens) == ("other", 700)
    (child,) = [x for x in await store.list_sessions() if x.session_id != sid]
    assert child.model == "beta/other"


async def test_an_unusable_task_model_leaves_the_subagent_on_its_parents(
    store: SqliteEventStore,
) -> None:
    s = Setup(
        store,
        {"big": [task_call(), text("child answer"), text("parent done")]},
        titles=False,
        agents={"task": AgentSettings(model="x/y")},
    )
    sid = await s.start()
    assert (await s.service.run_turn(sid)).stop_reason == "end_turn"
    assert s.main("big") == ["big", "big", "big"]


async def test_a_modes_model_is_where_its_sessions_start_and_what_a_switch_follows(
    store: SqliteEventStore,
) -> None:
    s = Setup(store, {}, agents={"plan": AgentSettings(model="beta/other")})
    build = await s.service.create(workspace_folder="/ws")
    plan = await s.service.create(workspace_folder="/ws", mode="plan")
    assert [(await s.service.config_options(x)).model for x in (build, plan)] == [
        "alpha/big",
        "beta/other",
    ]
    # on its mode's default model, a session follows the mode
    choices = await s.service.set_config(build, "mode", "plan")
    assert (choices.mode, choices.model) == ("plan", "beta/other")
    events = s.editor.of_type("config_changed")
    assert [(e.data["configId"], e.data["value"]) for e in events] == [
        ("mode", "plan"),
        ("model", "beta/other"),
    ]
    assert (await s.service.set_config(build, "mode", "build")).model == "alpha/big"
    # a model picked by hand stays across modes
    await s.service.set_config(build, "model", "alpha/small")
    assert (await s.service.set_config(build, "mode", "plan")).model == "alpha/small"


async def test_a_modes_cap_and_reasoning_shape_its_requests(store: SqliteEventStore) -> None:
    build = AgentSettings(max_tokens=1000, thinking=ThinkingConfig(budget_tokens=16_000))
    s = Setup(store, {"big": [text("answer")]}, titles=False, agents={"build": build})
    sid = await s.start()
    await s.service.run_turn(sid)
    (request,) = s.providers["big"].requests
    assert request.max_output_tokens == 1000
    assert request.thinking == ThinkingConfig(budget_tokens=16_000)


async def test_without_agents_nothing_changes(store: SqliteEventStore) -> None:
    s = Setup(store, {"big": [text("answer")]}, thinking=ThinkingConfig(budget_tokens=2000))
    sid = await s.start()
    await s.service.run_turn(sid)
    (request,) = s.providers["big"].requests
    assert request.max_output_tokens == MAIN.max_output
    assert request.thinking == ThinkingConfig(budget_tokens=2000)
    (title,) = s.providers["tiny"].side_requests
    assert title.thinking is None  # the configured thinking is the main loop's only
