"""The core reads a tool's kind and whether it changes files from its spec, never its name."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from lsp_agent.core.messages import ToolCallPart, ToolSpec, Usage
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions
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
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.testing.tools import tool_spec

MODEL = ModelInfo(provider="scripted", model="m", context_window=100_000)


class NewTools:
    """Tools no name table in the core has ever heard of."""

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("fetcher", kind="fetch", permission=PermissionKind.WEBFETCH),
            tool_spec("scribble", kind="edit", mutates=True, permission=PermissionKind.EDIT),
            tool_spec("peek", kind="read", permission=PermissionKind.READ),
        )

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        return ToolOutcome(output=f"{call.name} done")


class CountingSnapshots:
    """A snapshot store whose tree changes with every ``track``."""

    def __init__(self) -> None:
        self.tracked = 0

    async def track(self, workspace: Any, overlay: Mapping[str, str] | None = None) -> str:
        self.tracked += 1
        return f"tree{self.tracked}"

    async def read(self, workspace: Any, tree: str, path: str) -> str | None:
        return None

    async def diff(self, workspace: Any, from_tree: str, to_tree: str) -> Sequence[Any]:
        return []

    async def patch(self, workspace: Any, from_tree: str, to_tree: str) -> str:
        return ""

    async def restore(
        self, workspace: Any, tree: str, paths: Sequence[str] | None = None
    ) -> list[str]:
        return []

    async def changed_since(
        self,
        workspace: Any,
        tree: str,
        paths: Sequence[str],
        overlay: Mapping[str, str] | None = None,
    ) -> list[str]:
        return []


def calls(*names: str) -> list[StreamEvent]:
    return [
        *(ToolCallEnded(tool_call_id=f"c{i}", name=n, input={}) for i, n in enumerate(names)),
        UsageReported(usage=Usage(input_tokens=10, output_tokens=5)),
        Finished(reason="tool_use"),
    ]


DONE: list[StreamEvent] = [TextDelta(text="done"), Finished(reason="end_turn")]


async def run(
    store: SqliteEventStore, tmp_path: Path, steps: Sequence[list[StreamEvent]]
) -> tuple[RecordingEditor, CountingSnapshots]:
    editor = RecordingEditor()
    snapshots = CountingSnapshots()
    service = SessionService(
        store=store,
        provider=ScriptedProvider(steps),
        tools=NewTools(),
        editor=editor,
        clock=FakeClock(),
        ids=SequentialIds(),
        options=AgentOptions(model=MODEL),
        snapshots=snapshots,
    )
    sid = await service.create(workspace_folder=str(tmp_path))
    await service.admit(sid, [{"type": "text", "text": "go"}])
    outcome = await service.run_turn(sid)
    await service.drain(timeout=5)
    assert outcome.stop_reason == "end_turn"
    return editor, snapshots


async def test_a_call_is_shown_with_the_kind_its_tool_declares(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    editor, _ = await run(store, tmp_path, [calls("fetcher", "peek"), DONE])

    kinds = {
        e.data["toolName"]: e.data["kind"] for e in editor.events if e.type == "tool_call_updated"
    }
    assert kinds == {"fetcher": "fetch", "peek": "read"}


async def test_a_step_calling_a_tool_that_declares_it_mutates_is_snapshotted(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    editor, snapshots = await run(store, tmp_path, [calls("scribble"), DONE])

    (checkpoint,) = [e.data for e in editor.events if e.type == "checkpoint_recorded"]
    assert (checkpoint["before"], checkpoint["after"]) == ("tree1", "tree2")
    assert snapshots.tracked == 2


async def test_a_step_of_tools_that_change_nothing_is_not_snapshotted(
    store: SqliteEventStore, tmp_path: Path
) -> None:
    editor, snapshots = await run(store, tmp_path, [calls("fetcher", "peek"), DONE])

    assert not [e for e in editor.events if e.type == "checkpoint_recorded"]
    assert snapshots.tracked == 1  # the tree before the first step, nothing after
