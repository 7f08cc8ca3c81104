"""Permission prompts answered through the real ``vim.ui.select``, edits landing in open
buffers through ``workspace/applyEdit`` (one ``u`` undoes them), deny with a reason, stop
during a running tool, undo/redo of a prompt."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def edit_script(path: Path, old: str, new: str, then: str = "Done.") -> dict[str, Any]:
    edit = {"file_path": str(path), "old_string": old, "new_string": new}
    return {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": then}]}


def disk_text(path: Path) -> str | None:
    """The file's text, or None while a restore has it out of place: git's checkout-index
    (the snapshot restore) writes a file by removing it and creating it again."""
    try:
        return path.read_text()
    except FileNotFoundError:
        return None


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

    # "View diff": a tab with the current (unsaved) text and the proposal in diff mode, on
    # screen with no prompt over it; closing the tab brings the same choice back
    editor.choose(asked, "View diff")
    editor.wait_lua("vim.t.lsp_agent_diff ~= nil", "the diff tab")
    editor.type(":let g:typed_in_the_diff = 1<CR>")  # keys reach the diff, not a prompt
    editor.wait_lua("vim.g.typed_in_the_diff == 1", "normal mode in the diff tab")
    assert not editor.in_prompt()
    assert editor.lua("return #_G.test.selects") == 1
    diff_texts = editor.lua(
        """
        local texts = {}
        for _, win in ipairs(vim.api.nvim_tabpage_list_wins(0)) do
          if vim.wo[win].diff then
            local buf = vim.api.nvim_win_get_buf(win)
            table.insert(texts, table.concat(vim.api.nvim_buf_get_lines(buf, 0, -1, false), "\\n"))
          end
        end
        return texts
        """
    )
    assert diff_texts == ["value = 1\nunsaved = True", "value = 2\nunsaved = True"]
    editor.command("redraw")  # drawn: both sides on the screen
    screen = "\n".join(editor.screen_rows())
    assert "value = 1" in screen
    assert "value = 2" in screen
    assert "back to the permission prompt" in screen  # the winbar says how to answer
    editor.type("q")  # the diff's close key
    again = editor.wait_select(2)
    assert again["tabs"] == 1
    assert again["items"] == labels
    editor.choose(again, "Allow once")

    editor.wait_chat("Changed it.")
    editor.wait_idle()
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1  # the diff tab closed
    assert editor.buffer_text(path) == "value = 2\nunsaved = True"
    # the buffer held the user's unsaved change: not saved for them, the disk as it was
    assert path.read_text() == "value = 1\n"
    # a versioned TextDocumentEdit (documentChanges advertised), applied by the plugin
    assert editor.lua(
        "return require('lsp_agent.log').contains('applied an edit to ' .. ... .. ' (version')",
        str(path),
    )
    [edit_line] = [line for line in editor.chat_lines() if " edit " in line]
    assert "[done]" in edit_line

    editor.focus_buffer(path)
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

    editor.command("LspAgent stop")
    end = editor.wait_idle(timeout=20)  # well before `sleep 60` could have ended by itself
    assert end["stopReason"] == "cancelled"
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
    assert opened.read_text() == "value = 2\n"  # saved for the agent (lsp_agent.save)
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
    editor.wait(lambda: disk_text(on_disk) == "other = 1\n", "b.py back as before")
    editor.wait(lambda: editor.buffer_text(opened) == "value = 1", "the a.py buffer back")
    editor.wait(lambda: disk_text(opened) == "value = 1\n", "and a.py on disk")
    editor.wait(lambda: editor.prompt_lines() == ["set both to 2"], "the prompt offered again")
    editor.wait(lambda: "undone" in editor.chat_text(), "the undone part marked in the chat")
    assert "Set." not in editor.chat_text()

    editor.command("LspAgent redo")
    editor.wait(lambda: disk_text(on_disk) == "other = 2\n", "the b.py edit back")
    editor.wait(lambda: editor.buffer_text(opened) == "value = 2", "the a.py edit back")
    editor.wait(lambda: disk_text(opened) == "value = 2\n", "and on disk")
    editor.wait(lambda: "Set." in editor.chat_text(), "the conversation back")
    assert editor.prompt_lines() == [""]


def test_dismissing_the_permission_prompt_keeps_the_ask_pending_until_answered(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_script(path, "value = 1", "value = 2", "Changed it."))
    editor.edit(path)
    editor.command("LspAgent chat set value to 2")
    asked = editor.wait_select(1)
    editor.type("<Esc>")  # no choice: nothing decided

    editor.wait(
        lambda: "`:LspAgent permission` answers" in editor.chat_text(),
        "the pending ask and how to answer it in the chat",
    )
    assert not editor.in_prompt()
    assert editor.session()["state"] == "requires_action"
    assert "? permission" in editor.lua("return require('lsp_agent').statusline()")
    assert len(editor.model_requests()) == 1  # the turn did not go on
    assert editor.buffer_text(path) == "value = 1"

    editor.type(":LspAgent permission<CR>")
    again = editor.wait_select(2)
    assert again["items"] == asked["items"]
    editor.choose(again, "Allow once")
    editor.wait_chat("Changed it.")
    editor.wait_idle()
    assert editor.buffer_text(path) == "value = 2"
    assert "waiting for your permission" not in editor.chat_text()


def test_stopping_the_turn_withdraws_a_pending_ask(editor: Any, workspace: Path) -> None:
    bash = {"name": "bash", "input": {"command": "echo hi", "description": "say hi"}}
    editor.fake_llm.set_script({"turns": [{"tool_calls": [bash]}, {"text": "never"}]})
    editor.command("LspAgent chat say hi")
    editor.wait_select(1)
    editor.type("<Esc>")
    editor.wait(lambda: "`:LspAgent permission` answers" in editor.chat_text(), "the pending ask")

    editor.command("LspAgent stop")
    end = editor.wait_idle()
    assert end["stopReason"] == "cancelled"
    editor.wait_lua("#require('lsp_agent.permission').queue == 0", "the ask withdrawn")
    editor.wait(lambda: "waiting for your permission" not in editor.chat_text(), "the footer gone")
    editor.type(":LspAgent permission<CR>")
    editor.wait_lua(
        "require('lsp_agent.log').contains('no permission to answer')", "nothing to answer"
    )
    assert editor.lua("return #_G.test.selects") == 1
    assert len(editor.model_requests()) == 1


def test_the_agents_edit_its_undo_and_redo_are_saved_and_u_is_the_users(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    editor.fake_llm.set_script(edit_script(path, "value = 1", "value = 2", "Changed it."))
    editor.edit(path)
    modified = "return vim.bo[vim.fn.bufnr(...)].modified"
    editor.command("LspAgent chat set value to 2")
    editor.choose(editor.wait_select(1), "Allow once")
    editor.wait_chat("Changed it.")
    editor.wait_idle()
    assert editor.buffer_text(path) == "value = 2"
    assert path.read_text() == "value = 2\n"  # saved for the agent: no [+]
    assert editor.lua(modified, str(path)) is False

    editor.command("LspAgent undo")
    editor.wait(lambda: editor.buffer_text(path) == "value = 1", "the buffer put back")
    editor.wait(lambda: disk_text(path) == "value = 1\n", "and the disk")
    editor.wait(lambda: editor.lua(modified, str(path)) is False, "no [+]: it is the file again")
    # the buffer is back before the server has finished the undo: redo only once it answered
    editor.wait(lambda: "undone" in editor.chat_text(), "the undo's answer")

    editor.command("LspAgent redo")
    editor.wait(lambda: editor.buffer_text(path) == "value = 2", "the edit back")
    editor.wait(lambda: disk_text(path) == "value = 2\n", "and on disk")
    editor.wait(lambda: "Changed it." in editor.chat_text(), "the redo's answer")
    assert editor.lua(modified, str(path)) is False

    # the editor's own undo is the user's: the buffer only, modified until they save it
    editor.focus_buffer(path)
    editor.type("u")
    editor.wait(lambda: editor.buffer_text(path) == "value = 1", "u undid the edit")
    assert editor.lua(modified, str(path)) is True
    assert path.read_text() == "value = 2\n"
