"""Checkpoints and revert with documents open in the editor: the agent's edit of an open
document lands in the buffer (not on disk), is recorded in the step's checkpoint, and a revert
takes it back through the editor; closed files are restored on disk as always."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.checkpoints import open_in
from lsp_agent.core.documents import DocumentEditResult
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
from lsp_agent.snapshots import GitShadowSnapshots
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.clock import FakeClock, SequentialIds
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.provider import ScriptedProvider
from lsp_agent.testing.tools import tool_spec

MODEL = ModelInfo(provider="alpha", model="a1")


class Editor(RecordingEditor):
    """A RecordingEditor whose refusals can be switched on after the agent's turn."""

    def __init__(self, buffers: dict[str, str]) -> None:
        super().__init__(buffers=buffers)
        self.refusing = False

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        if self.refusing and path in self.buffers:
            return DocumentEditResult(status="conflict", message="the editor refused the edit")
        return await super().apply_document_edit(path, base_text, new_text)


class WriteTools:
    """``write`` as the real tools do it: an open document through the editor, else the disk;
    ``delete`` removes a file from disk."""

    def __init__(self, root: Path, editor: RecordingEditor) -> None:
        self._root = root
        self._editor = editor

    def specs(self) -> tuple[ToolSpec, ...]:
        return (
            tool_spec("write", kind="edit", mutates=True, permission=PermissionKind.EDIT),
            tool_spec("bash", kind="execute", mutates=True),
        )

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome:
        path = str(self._root / str(call.input["file_path"]))
        if call.name == "bash":
            os.unlink(path)
            return ToolOutcome(output="deleted")
        content = str(call.input["content"])
        buffer = await self._editor.open_document_text(path)
        if buffer is not None:
            result = await self._editor.apply_document_edit(path, buffer, content)
            assert result.status == "applied"
        else:
            Path(path).write_text(content)
        return ToolOutcome(output="ok")


def write(*files: tuple[str, str]) -> list[StreamEvent]:
    events: list[StreamEvent] = [
        ToolCallEnded(tool_call_id=f"w{i}", name="write", input={"file_path": p, "content": c})
        for i, (p, c) in enumerate(files)
    ]
    return [*events, UsageReported(usage=Usage(input_tokens=10)), Finished(reason="tool_use")]


def delete(path: str) -> list[StreamEvent]:
    return [
        ToolCallEnded(tool_call_id="d0", name="bash", input={"file_path": path}),
        Finished(reason="tool_use"),
    ]


def done() -> list[StreamEvent]:
    return [TextDelta(text="done"), Finished(reason="end_turn")]


@pytest.fixture
def ws(ws: Path) -> Path:
    (ws / "a.py").write_text("a = 1\n")
    (ws / "b.py").write_text("b = 1\n")
    return ws


class Setup:
    def __init__(
        self, store: SqliteEventStore, ws: Path, data: Path, buffers: dict[str, str]
    ) -> None:
        self.ws = ws
        self.editor = Editor(buffers={str(ws / p): t for p, t in buffers.items()})
        self.snapshots = GitShadowSnapshots(data)
        self.store = store
        self.clock = FakeClock()
        self.ids = SequentialIds()
        self.service = self._service([])
        self.sid = ""

    def _service(self, steps: list[list[StreamEvent]]) -> SessionService:
        return SessionService(
            store=self.store,
            provider=ScriptedProvider(steps),
            tools=WriteTools(self.ws, self.editor),
            editor=self.editor,
            clock=self.clock,
            ids=self.ids,
            options=AgentOptions(model=MODEL, titles=False),
            snapshots=self.snapshots,
        )

    async def turn(self, *steps: list[StreamEvent]) -> str:
        """One prompt and a turn playing ``steps``; the prompt's message id."""
        if not self.sid:
            self.sid = await self.service.create(workspace_folder=str(self.ws))
        self.service = self._service(list(steps))
        message_id = await self.service.admit(self.sid, [{"type": "text", "text": "go"}])
        outcome = await self.service.run_turn(self.sid)
        assert outcome.stop_reason == "end_turn"
        return message_id

    def buffer(self, name: str) -> str:
        return self.editor.buffers[str(self.ws / name)]

    def set_buffer(self, name: str, text: str) -> None:
        self.editor.buffers[str(self.ws / name)] = text

    def checkpoints(self) -> list[dict[str, Any]]:
        return [e.data for e in self.editor.of_type("checkpoint_recorded")]


@pytest.fixture
def setup(store: SqliteEventStore, ws: Path, tmp_path: Path) -> Setup:
    return Setup(store, ws, tmp_path / "data", {"a.py": "a = 1\n"})


def disk(path: Path) -> tuple[bytes, int]:
    return path.read_bytes(), path.stat().st_mtime_ns


async def test_an_edit_through_the_editor_is_in_the_checkpoint(setup: Setup) -> None:
    await setup.turn(write(("a.py", "a = 2\n")), done())

    assert setup.buffer("a.py") == "a = 2\n"
    assert (setup.ws / "a.py").read_text() == "a = 1\n"  # the disk is the user's to save
    [checkpoint] = setup.checkpoints()
    assert checkpoint["files"] == [
        {"path": "a.py", "status": "modify", "additions": 1, "deletions": 1}
    ]
    assert "-a = 1\n+a = 2\n" in checkpoint["patch"]
    assert await setup.snapshots.read(setup.ws, checkpoint["after"], "a.py") == "a = 2\n"
    assert await setup.snapshots.read(setup.ws, checkpoint["before"], "a.py") == "a = 1\n"


async def test_undo_takes_the_edit_back_through_the_editor_and_redo_puts_it_back(
    setup: Setup,
) -> None:
    await setup.turn(write(("a.py", "a = 2\n")), done())
    on_disk = disk(setup.ws / "a.py")
    path = str(setup.ws / "a.py")

    message_id, _ = await setup.service.undo(setup.sid)
    assert setup.editor.applied[-1] == (path, "a = 2\n", "a = 1\n")
    assert setup.buffer("a.py") == "a = 1\n"
    assert disk(setup.ws / "a.py") == on_disk
    [staged] = setup.editor.of_type("revert_staged")
    assert staged.data["files"] == ["a.py"]
    assert staged.data["conflicts"] == []

    redone = await setup.service.revert_clear(setup.sid)
    assert redone.conflicts == ()
    assert setup.editor.applied[-1] == (path, "a = 1\n", "a = 2\n")
    assert setup.buffer("a.py") == "a = 2\n"
    assert disk(setup.ws / "a.py") == on_disk
    assert message_id == staged.data["messageId"]


async def test_a_buffer_the_user_changed_since_is_a_conflict_unless_forced(setup: Setup) -> None:
    message_id = await setup.turn(write(("a.py", "a = 2\n")), done())
    setup.set_buffer("a.py", "a = 2\nuser = True\n")
    applied = len(setup.editor.applied)

    result = await setup.service.revert_stage(setup.sid, message_id)
    assert result.conflicts == ("a.py",)
    assert "changed" in result.reasons["a.py"]
    assert len(setup.editor.applied) == applied
    assert setup.buffer("a.py") == "a = 2\nuser = True\n"

    await setup.service.revert_clear(setup.sid)
    assert setup.buffer("a.py") == "a = 2\nuser = True\n"
    forced = await setup.service.revert_stage(setup.sid, message_id, force=True)
    assert forced.conflicts == ()
    assert setup.buffer("a.py") == "a = 1\n"
    assert (setup.ws / "a.py").read_text() == "a = 1\n"

    await setup.service.revert_clear(setup.sid)
    assert setup.buffer("a.py") == "a = 2\nuser = True\n"  # the undo point had the user's text


async def test_open_and_closed_files_each_go_back_their_own_way(setup: Setup) -> None:
    message_id = await setup.turn(write(("a.py", "a = 2\n"), ("b.py", "b = 2\n")), done())
    assert (setup.ws / "b.py").read_text() == "b = 2\n"
    [checkpoint] = setup.checkpoints()
    assert [f["path"] for f in checkpoint["files"]] == ["a.py", "b.py"]
    a_on_disk = disk(setup.ws / "a.py")

    result = await setup.service.revert_stage(setup.sid, message_id)
    assert result.files == ("a.py", "b.py")
    assert result.conflicts == ()
    assert setup.buffer("a.py") == "a = 1\n"
    assert disk(setup.ws / "a.py") == a_on_disk
    assert (setup.ws / "b.py").read_text() == "b = 1\n"
    assert [p for p, _, _ in setup.editor.applied[1:]] == [str(setup.ws / "a.py")]

    await setup.service.revert_clear(setup.sid)
    assert setup.buffer("a.py") == "a = 2\n"
    assert (setup.ws / "b.py").read_text() == "b = 2\n"
    assert disk(setup.ws / "a.py") == a_on_disk


async def test_a_file_opened_after_the_step_is_reverted_in_its_buffer(setup: Setup) -> None:
    message_id = await setup.turn(write(("b.py", "b = 2\n")), done())
    setup.set_buffer("b.py", "b = 2\n")  # the user opens it
    on_disk = disk(setup.ws / "b.py")

    await setup.service.revert_stage(setup.sid, message_id)
    assert setup.buffer("b.py") == "b = 1\n"
    assert disk(setup.ws / "b.py") == on_disk


async def test_a_document_closed_since_is_restored_on_disk(setup: Setup) -> None:
    message_id = await setup.turn(write(("a.py", "a = 2\n")), done())
    (setup.ws / "a.py").write_text("a = 2\n")  # the user saves, then closes it
    del setup.editor.buffers[str(setup.ws / "a.py")]

    result = await setup.service.revert_stage(setup.sid, message_id)
    assert result.conflicts == ()
    assert (setup.ws / "a.py").read_text() == "a = 1\n"
    await setup.service.revert_clear(setup.sid)
    assert (setup.ws / "a.py").read_text() == "a = 2\n"


async def test_an_edit_the_editor_refuses_is_a_conflict_and_nothing_is_written(
    setup: Setup,
) -> None:
    message_id = await setup.turn(write(("a.py", "a = 2\n"), ("b.py", "b = 2\n")), done())
    setup.editor.refusing = True
    on_disk = disk(setup.ws / "a.py")

    result = await setup.service.revert_stage(setup.sid, message_id, force=True)
    assert result.conflicts == ("a.py",)
    assert "refused" in result.reasons["a.py"]
    assert setup.buffer("a.py") == "a = 2\n"
    assert disk(setup.ws / "a.py") == on_disk
    assert (setup.ws / "b.py").read_text() == "b = 1\n"
    [staged] = setup.editor.of_type("revert_staged")
    assert staged.data["conflicts"] == ["a.py"]


async def test_an_open_file_the_revert_would_delete_is_left_unless_forced(setup: Setup) -> None:
    message_id = await setup.turn(write(("new.py", "new\n")), done())
    setup.set_buffer("new.py", "new\n")  # the user opens the file the agent created

    result = await setup.service.revert_stage(setup.sid, message_id)
    assert result.conflicts == ("new.py",)
    assert "delete" in result.reasons["new.py"]
    assert (setup.ws / "new.py").read_text() == "new\n"

    await setup.service.revert_clear(setup.sid)
    forced = await setup.service.revert_stage(setup.sid, message_id, force=True)
    assert forced.conflicts == ()
    assert not (setup.ws / "new.py").exists()

    await setup.service.revert_clear(setup.sid)  # still open: its file comes back on disk
    assert (setup.ws / "new.py").read_text() == "new\n"


async def test_an_open_document_the_agent_deleted_comes_back_on_disk(setup: Setup) -> None:
    message_id = await setup.turn(delete("a.py"), done())
    assert not (setup.ws / "a.py").exists()
    [checkpoint] = setup.checkpoints()
    assert checkpoint["files"][0]["status"] == "delete"  # the open buffer does not keep it

    await setup.service.revert_stage(setup.sid, message_id)
    assert (setup.ws / "a.py").read_text() == "a = 1\n"


async def test_a_bom_stays_out_of_a_buffer_that_has_none(
    store: SqliteEventStore, ws: Path, tmp_path: Path
) -> None:
    (ws / "a.py").write_bytes(b"\xef\xbb\xbfa = 1\n")
    setup = Setup(store, ws, tmp_path / "data", {"a.py": "a = 1\n"})
    message_id = await setup.turn(write(("a.py", "a = 2\n")), done())
    [checkpoint] = setup.checkpoints()
    assert [f["path"] for f in checkpoint["files"]] == ["a.py"]
    assert await setup.snapshots.read(ws, checkpoint["after"], "a.py") == "\ufeffa = 2\n"

    await setup.service.revert_stage(setup.sid, message_id)
    assert setup.buffer("a.py") == "a = 1\n"
    assert (ws / "a.py").read_bytes() == b"\xef\xbb\xbfa = 1\n"


def test_only_documents_inside_the_workspace_count() -> None:
    documents = {"/ws/a.py": "a", "/ws/sub/b.py": "b", "/ws2/c.py": "c", "/elsewhere/d.py": "d"}
    assert open_in(documents, "/ws") == {"/ws/a.py": "a", "/ws/sub/b.py": "b"}
    assert open_in(documents, "/ws/") == {"/ws/a.py": "a", "/ws/sub/b.py": "b"}
