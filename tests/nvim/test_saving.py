"""Issue 32 point 1 in Neovim: the agent edits a file open in a buffer, then runs a command
that reads it — the command sees the edit (the plugin saved the buffer for the agent); a
buffer with the user's own unsaved change keeps it, is not saved, and the model is told."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.model_requests import edit_then_cat, tool_result_texts


def run_edit_then_cat(editor: Any) -> list[str]:
    editor.command("LspAgent chat fix it, then show the file")
    editor.choose(editor.wait_select(1), "Allow once")
    editor.choose(editor.wait_select(2), "Allow once")
    editor.wait_chat("Shown.", timeout=60)
    editor.wait_idle()
    return tool_result_texts(editor.model_requests()[2])


def test_a_command_after_the_agents_edit_of_an_open_buffer_sees_the_edit(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_then_cat(path, "Shown."))
    editor.edit(path)

    edited, shown = run_edit_then_cat(editor)

    assert "value = 2" in shown
    assert "Note" not in edited
    assert editor.buffer_text(path) == "value = 2"
    assert path.read_text() == "value = 2\n"
    assert editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(path)) is False
    assert editor.lua(
        "return require('lsp_agent.log').contains('saved ' .. ... .. ' for the agent')", str(path)
    )


def test_a_buffer_with_the_users_unsaved_change_keeps_it_and_is_not_saved(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "calc.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_then_cat(path, "Shown."))
    editor.edit(path)
    editor.type("Gomine = True<Esc>")  # typed, not saved
    editor.wait(lambda: editor.buffer_text(path) == "value = 1\nmine = True", "the typed change")

    edited, shown = run_edit_then_cat(editor)

    assert editor.buffer_text(path) == "value = 2\nmine = True"
    assert editor.lua("return vim.bo[vim.fn.bufnr(...)].modified", str(path)) is True
    assert path.read_text() == "value = 1\n"
    assert "unsaved changes of their own" in edited
    assert "value = 1" in shown
    assert "mine" not in shown
