"""Undo and redo of the agent's edits to documents open in the editor, through the real
composition root: the real tools edit the open buffer (the disk is not written), the step's
checkpoint records the buffer, and undo / redo change the buffer back and forth through the
editor while a closed file is restored on disk."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_agent.app import build_app
from lsp_agent.config.resolve import resolve_model
from lsp_agent.config.settings import Settings
from lsp_agent.core.permission.rules import PermissionReply
from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.fake_llm import FakeLLMServer

KEY = "sk-test-revert-documents"


async def test_undo_and_redo_of_an_open_document_go_through_the_editor(tmp_path: Path) -> None:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    (workspace / "open.py").write_text("x = 1\ny = 2\n")
    (workspace / "closed.py").write_text("z = 3\n")
    open_path = str(workspace / "open.py")
    editor = RecordingEditor(
        [PermissionReply(kind="allow_session")], buffers={open_path: "x = 1\ny = 2\n"}
    )
    edit_open = {"file_path": "open.py", "old_string": "x = 1", "new_string": "x = 10"}
    edit_closed = {"file_path": "closed.py", "old_string": "z = 3", "new_string": "z = 30"}
    script = {
        "turns": [
            {"tool_calls": [{"name": "edit", "input": edit_open}]},
            {"tool_calls": [{"name": "edit", "input": edit_closed}]},
            {"text": "done"},
        ]
    }
    async with FakeLLMServer(script) as server:
        env = {
            "LSP_AGENT_DATA_DIR": os.environ["LSP_AGENT_DATA_DIR"],
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": KEY,
        }
        settings = Settings.model_validate(
            {"model": "anthropic/claude-test", "title": {"enabled": False}}
        )
        store = await open_store(tmp_path / "data")
        try:
            app = await build_app(
                settings=settings,
                model=resolve_model(settings),
                env=env,
                editor=editor,
                workspace=workspace,
                store=store,
            )
            sessions = app.sessions
            sid = await sessions.create(workspace_folder=str(workspace))
            await sessions.admit(sid, [{"type": "text", "text": "edit both"}])
            assert (await sessions.run_turn(sid)).stop_reason == "end_turn"

            assert editor.buffers[open_path] == "x = 10\ny = 2\n"
            assert (workspace / "open.py").read_text() == "x = 1\ny = 2\n"
            assert (workspace / "closed.py").read_text() == "z = 30\n"
            checkpoints = [e.data for e in editor.of_type("checkpoint_recorded")]
            assert [[f["path"] for f in c["files"]] for c in checkpoints] == [
                ["open.py"],
                ["closed.py"],
            ]
            assert "+x = 10" in checkpoints[0]["patch"]
            disk_before_undo = (workspace / "open.py").stat().st_mtime_ns

            _, prompt = await sessions.undo(sid)
            assert prompt == [{"type": "text", "text": "edit both"}]
            assert editor.applied[-1] == (open_path, "x = 10\ny = 2\n", "x = 1\ny = 2\n")
            assert editor.buffers[open_path] == "x = 1\ny = 2\n"
            assert (workspace / "closed.py").read_text() == "z = 3\n"
            assert (workspace / "open.py").stat().st_mtime_ns == disk_before_undo

            redone = await sessions.revert_clear(sid)
            assert redone.conflicts == ()
            assert editor.applied[-1] == (open_path, "x = 1\ny = 2\n", "x = 10\ny = 2\n")
            assert editor.buffers[open_path] == "x = 10\ny = 2\n"
            assert (workspace / "closed.py").read_text() == "z = 30\n"
            assert (workspace / "open.py").read_text() == "x = 1\ny = 2\n"
        finally:
            await store.close()
