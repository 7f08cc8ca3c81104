"""docs/tools.md "Adding a tool": a tool is one module. Here that module lives in a package
of its own (a temporary folder on ``sys.path``) and joins the registry through its one
documented hook, ``default_registry(extra_tools=…)``: the model is offered it, its calls are
gated by the permission it declares and titled in its own words, and the read-only
``explore`` subagent is denied it. No table of the core, the configuration or a front-end
was told about it."""

from __future__ import annotations

import importlib
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from lsp_agent.config.settings import DEFAULT_PERMISSION_RULES
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.permission.rules import PermissionReply, Rule, decide, hidden
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.stream_events import Finished, StreamEvent, TextDelta, ToolCallEnded
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.tools.registry import default_registry
from lsp_agent.workspace.truncation import OutputLimits

MODEL = ModelInfo(provider="scripted", model="m")

MODULE = '''
"""A tool that stamps a file: the whole tool, in one module."""

from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, refusal, shown_path


class StampParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(description="The file to stamp.")


class StampTool:
    name = "stamp"
    description = "Writes a stamp into a file."
    kind = "edit"
    permission = PermissionKind.EDIT
    mutates = True
    Params = StampParams

    def describe(self, params: StampParams, roots: Sequence[str]) -> str:
        return f"Stamp {shown_path(params.file_path, roots)}"

    async def run(self, params: StampParams, ctx: ToolRunContext) -> ToolOutcome:
        where = await ctx.resolve(params.file_path, kind="file")
        if isinstance(where, ToolOutcome):
            return where
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission,
                patterns=(where.display,),
                title=f"Stamp {where.display}",
            )
        )
        if not verdict.allowed:
            return refusal(verdict)
        with open(where.path, "a", encoding="utf-8") as file:
            file.write("stamped\\n")
        return ToolOutcome(output="stamped")
'''


@pytest.fixture
def stamp_module(tmp_path: Path) -> Iterator[ModuleType]:
    package = tmp_path / "site" / "stamp_plugin"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "stamp.py").write_text(textwrap.dedent(MODULE))
    sys.path.insert(0, str(tmp_path / "site"))
    try:
        yield importlib.import_module("stamp_plugin.stamp")
    finally:
        sys.path.remove(str(tmp_path / "site"))
        for name in [n for n in sys.modules if n.startswith("stamp_plugin")]:
            del sys.modules[name]


def builtin_rules() -> tuple[Rule, ...]:
    return tuple(
        Rule(permission=r.permission, pattern=r.pattern, action=r.action, source=r.source)
        for r in DEFAULT_PERMISSION_RULES
    )


def stamp_call(path: str) -> list[StreamEvent]:
    return [
        ToolCallEnded(tool_call_id="s1", name="stamp", input={"file_path": path}),
        Finished(reason="tool_use"),
    ]


def answer(text: str) -> list[StreamEvent]:
    return [TextDelta(text=text), Finished(reason="end_turn")]


async def run_turn(
    module: ModuleType,
    store: SqliteEventStore,
    workspace: Path,
    tmp_path: Path,
    replies: list[PermissionReply],
) -> tuple[ScriptedProvider, RecordingEditor]:
    editor = RecordingEditor(replies)
    provider = ScriptedProvider([stamp_call("notes.txt"), answer("done")])
    tools = default_registry(
        editor,
        limits=OutputLimits(),
        spill_root=tmp_path / "spill",
        extra_tools=[module.StampTool()],
    )
    svc = SessionService(
        store=store,
        provider=provider,
        tools=tools,
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(model=MODEL, titles=False, rules=builtin_rules()),
    )
    sid = await svc.create(workspace_folder=str(workspace))
    await svc.admit(sid, [{"type": "text", "text": "stamp notes.txt"}])
    await svc.run_turn(sid)
    return provider, editor


async def test_the_tool_is_offered_asked_for_by_its_permission_and_titled(
    stamp_module: ModuleType, store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("")
    provider, editor = await run_turn(
        stamp_module, store, workspace, tmp_path, [PermissionReply(kind="allow_once")]
    )

    offered = {tool.name: tool for tool in provider.requests[0].tools}
    assert "stamp" in offered
    assert offered["stamp"].input_schema["required"] == ["file_path"]
    (ask,) = editor.asks  # edit is "ask" by default: the declared permission decided
    assert ask.request.permission == "edit"
    assert (workspace / "notes.txt").read_text() == "stamped\n"
    updates = [e.data for e in editor.of_type("tool_call_updated") if e.data["toolName"] == "stamp"]
    assert [u["status"] for u in updates] == ["pending", "in_progress", "completed"]
    assert {u["title"] for u in updates} == {"Stamp notes.txt"}
    assert {u["kind"] for u in updates} == {"edit"}


async def test_refused_by_a_person_it_fails_as_refused_and_changes_nothing(
    stamp_module: ModuleType, store: SqliteEventStore, workspace: Path, tmp_path: Path
) -> None:
    (workspace / "notes.txt").write_text("")
    _, editor = await run_turn(
        stamp_module,
        store,
        workspace,
        tmp_path,
        [PermissionReply(kind="reject_once", reason="not now")],
    )

    assert (workspace / "notes.txt").read_text() == ""
    last = [e.data for e in editor.of_type("tool_call_updated") if e.data["toolName"] == "stamp"][
        -1
    ]
    assert (last["status"], last.get("refused")) == ("failed", True)


def test_the_read_only_explore_subagent_is_denied_it(
    stamp_module: ModuleType, tmp_path: Path
) -> None:
    registry = default_registry(
        RecordingEditor(),
        limits=OutputLimits(),
        spill_root=tmp_path / "spill",
        extra_tools=[stamp_module.StampTool()],
    )
    (spec,) = [spec for spec in registry.specs() if spec.name == "stamp"]
    everything: list[Any] = [Rule(permission="*", pattern="*", action="allow")]
    explore = [*everything, *mode_rules("explore")]

    assert hidden(spec.permission, explore)
    assert decide(spec.permission, ["notes.txt"], explore).action == "deny"
    assert not hidden(spec.permission, [*everything, *mode_rules("build")])
