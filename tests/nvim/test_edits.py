"""Permission prompts answered through the real ``vim.ui.select``, edits landing in open
buffers through ``workspace/applyEdit`` (one ``u`` undoes them), deny with a reason, stop
during a running tool, undo/redo of a prompt."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any


def edit_script(path: Path, old: str, new: str, then: str = "Done.") -> dict[str, Any]:
    edit = {"file_path": str(path), "old_string": old, "new_string": new}
    return {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": then}]}


def focus_buffer(editor: Any, path: Path) -> None:
    win = editor.lua("return vim.fn.bufwinid(vim.fn.bufnr(...))", str(path))
    assert win != -1, f"{path.name} is not in a window"
    editor.lua("vim.api.nvim_set_current_win(...)", win)


def test_an_edit_of_an_unsaved_buffer_asks_shows_the_diff_and_one_u_undoes_it(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_script(path, "value = 1", "value = 2", "Changed it."))
    editor.edit(path)
    editor.type("Gounsaved = True<Esc>")  # an unsaved change, typed
    editor.wait(lambda: editor.buffer_text(path) == "value = 1\nunsaved = True", "the typed change")

    editor.command("LspAgent chat set value to 2")
    asked = editor.wait_select(1)
    assert asked["kind"] == "lsp_agent_permission"
    assert "a.py" in asked["prompt"]
    labels = asked["items"]
    for label in ("Allow once", "Allow for this session", "Always allow", "Reject"):
        assert any(item.startswith(label) for item in labels), labels
    assert "Deny with reason…" in labels
    assert "View diff" in labels
    editor.wait(lambda: "awaiting permission" in editor.chat_text(), "the tool line's status")

    # "View diff": a tab with the current (unsaved) text and the proposal in diff mode,
    # then the same choice again
    editor.choose(asked, "View diff")
    again = editor.wait_select(2)
    assert again["tabs"] == 2
    assert [d["text"] for d in again["diff"]] == [
        "value = 1\nunsaved = True",
        "value = 2\nunsaved = True",
    ]
    editor.choose(again, "Allow once")

    editor.wait_chat("Changed it.")
    editor.wait_idle()
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1  # the diff tab closed
    assert editor.buffer_text(path) == "value = 2\nunsaved = True"
    assert path.read_text() == "value = 1\n"  # the disk is the user's to save
    # a versioned TextDocumentEdit (documentChanges advertised), applied by the plugin
    assert editor.lua(
        "return require('lsp_agent.log').contains('applied an edit to ' .. ... .. ' (version')",
        str(path),
    )
    [edit_line] = [line for line in editor.chat_lines() if " edit " in line]
    assert "[done]" in edit_line

    focus_buffer(editor, path)
    editor.type("u")
    editor.wait(
        lambda: editor.buffer_text(path) == "value = 1\nunsaved = True",
        "one u to restore the text before the edit",
    )


def test_deny_with_a_reason_reaches_the_model(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_script(path, "value = 1", "value = 2", "OK, tabs."))
    editor.edit(path)
    editor.command("LspAgent chat change it")
    asked = editor.wait_select(1)
    editor.choose(asked, "Deny with reason…")
    prompt = editor.wait_input(1)
    assert "Reason" in prompt["prompt"]
    editor.type("use tabs, not spaces<CR>")

    editor.wait_chat("OK, tabs.")
    editor.wait_idle()
    assert editor.buffer_text(path) == "value = 1"
    second = str(editor.model_requests()[1]["messages"])
    assert "use tabs, not spaces" in second
    [edit_line] = [line for line in editor.chat_lines() if " edit " in line]
    assert "denied" in edit_line or "failed" in edit_line


def test_stop_during_a_running_bash_interrupts_it_and_the_session_goes_idle(
    editor: Any, workspace: Path
) -> None:
    bash = {"name": "bash", "input": {"command": "sleep 60", "description": "wait a minute"}}
    editor.fake_llm.set_script({"turns": [{"tool_calls": [bash]}, {"text": "never"}]})
    editor.command("LspAgent chat wait a minute")
    asked = editor.wait_select(1)
    assert "sleep 60" in asked["prompt"]
    editor.choose(asked, "Allow once")
    editor.wait(
        lambda: any(" bash " in line and "[running]" in line for line in editor.chat_lines()),
        "the bash line running",
    )
    assert editor.lua("return require('lsp_agent').statusline()").startswith("agent: ● running")

    started = time.monotonic()
    editor.command("LspAgent stop")
    end = editor.wait_idle(timeout=20)
    assert end["stopReason"] == "cancelled"
    assert time.monotonic() - started < 15
    editor.wait(
        lambda: any(" bash " in line and "[interrupted]" in line for line in editor.chat_lines()),
        "the bash line interrupted",
    )
    assert "_stopped_" in editor.chat_lines()
    assert len(editor.model_requests()) == 1


def test_undo_puts_the_files_back_and_offers_the_prompt_again_and_redo_brings_them_back(
    editor: Any, workspace: Path
) -> None:
    opened = workspace / "a.py"  # open in a buffer: changed through workspace/applyEdit
    opened.write_text("value = 1\n")
    on_disk = workspace / "b.py"  # not open: changed on disk
    on_disk.write_text("other = 1\n")
    edits = [
        {"file_path": str(opened), "old_string": "value = 1", "new_string": "value = 2"},
        {"file_path": str(on_disk), "old_string": "other = 1", "new_string": "other = 2"},
    ]
    editor.fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "edit", "input": edit} for edit in edits]},
                {"text": "Set."},
            ]
        }
    )
    editor.edit(opened)
    editor.command("LspAgent chat set both to 2")
    editor.choose(editor.wait_select(1), "Allow once")
    editor.choose(editor.wait_select(2), "Allow once")
    editor.wait_chat("Set.")
    editor.wait_idle()
    assert editor.buffer_text(opened) == "value = 2"
    assert opened.read_text() == "value = 1\n"
    assert on_disk.read_text() == "other = 2\n"

    # :LspAgent diff shows the last proposed edit again
    editor.command("LspAgent diff")
    editor.wait_lua("#vim.api.nvim_list_tabpages() == 2", "the diff tab")
    diffs = editor.lua(
        "return vim.tbl_map(function(w) return vim.wo[w].diff end,"
        " vim.api.nvim_tabpage_list_wins(0))"
    )
    assert diffs == [True, True]
    editor.command("tabclose")

    editor.command("LspAgent undo")
    editor.wait(lambda: on_disk.read_text() == "other = 1\n", "b.py back as before")
    editor.wait(lambda: editor.buffer_text(opened) == "value = 1", "the a.py buffer back")
    view_prompt = (
        "return vim.api.nvim_buf_get_lines(require('lsp_agent.chat')"
        ".views[require('lsp_agent.session').current].prompt_buf, 0, -1, false)"
    )
    editor.wait(lambda: editor.lua(view_prompt) == ["set both to 2"], "the prompt offered again")
    editor.wait(lambda: "undone" in editor.chat_text(), "the undone part marked in the chat")
    assert "Set." not in editor.chat_text()

    editor.command("LspAgent redo")
    editor.wait(lambda: on_disk.read_text() == "other = 2\n", "the b.py edit back")
    editor.wait(lambda: editor.buffer_text(opened) == "value = 2", "the a.py edit back")
    editor.wait(lambda: "Set." in editor.chat_text(), "the conversation back")
    assert editor.lua(view_prompt) == [""]
