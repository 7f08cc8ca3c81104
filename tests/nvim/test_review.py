"""Reviewing the agent's changes in Neovim (issue 21): the pending hunks in the quickfix list,
signs and ``]a`` / ``[a`` in the buffer, ``:LspAgent undo-hunk`` through the server's
``workspace/applyEdit`` (``u`` undoes the undo), an edited proposal is what ``:LspAgent allow``
applies, and ``:LspAgent rewind code|conversation``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

AUTO = {"permission": {"edit": "allow"}}
SOURCE = "".join(f"v{i} = {i}\n" for i in range(1, 21))
FIRST = "v2 = 200"  # line 2
SECOND = "v18 = 1800"  # line 18


def two_edits(path: Path, then: str = "Both changed.") -> dict[str, Any]:
    edits = [
        {"file_path": str(path), "old_string": "v2 = 2", "new_string": FIRST},
        {"file_path": str(path), "old_string": "v18 = 18", "new_string": SECOND},
    ]
    calls = [{"name": "edit", "input": edit} for edit in edits]
    return {"turns": [{"tool_calls": calls}, {"text": then}]}


def signs(editor: Any, path: Path) -> list[tuple[int, str]]:
    """The review signs of the buffer of `path`: (1-based line, sign text), in line order."""
    rows = editor.lua(
        """
        local review = require('lsp_agent.review')
        local marks = vim.api.nvim_buf_get_extmarks(vim.fn.bufnr(...), review.ns, 0, -1,
          { details = true })
        local rows = {}
        for _, mark in ipairs(marks) do
          table.insert(rows, { mark[2] + 1, vim.trim(mark[4].sign_text or '') })
        end
        return rows
        """,
        str(path),
    )
    return sorted((row[0], row[1]) for row in rows)


def quickfix(editor: Any) -> dict[str, Any]:
    return editor.lua(
        """
        local list = vim.fn.getqflist({ title = 0, items = 0 })
        local items = {}
        for _, item in ipairs(list.items) do
          table.insert(items, { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum,
                                text = item.text })
        end
        return { title = list.title, items = items }
        """
    )


def mapped_here(editor: Any, lhs: str) -> bool:
    """Whether the current buffer has its own normal-mode mapping of `lhs` (Neovim's global
    `]a` / `[a`, :next / :previous, stay beneath)."""
    return bool(editor.lua("return vim.fn.maparg(..., 'n', false, true).buffer == 1", lhs))


def cursor_line(editor: Any) -> int:
    return int(editor.lua("return vim.api.nvim_win_get_cursor(0)[1]"))


def run_two_edits(editor: Any, workspace: Path) -> Path:
    path = workspace / "a.py"
    path.write_text(SOURCE)
    editor.fake_llm.set_script(two_edits(path))
    editor.edit(path)
    editor.command("LspAgent chat change v2 and v18")
    editor.wait_chat("Both changed.")
    editor.wait_idle()
    lines = editor.buffer_text(path).split("\n")
    assert lines[1] == FIRST
    assert lines[17] == SECOND
    return path


def test_review_lists_the_hunks_signs_mark_them_and_undo_hunk_lands_as_one_undo_step(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    marked = editor.wait(lambda: len(found := signs(editor, path)) == 2 and found, "two signs")
    assert [line for line, _ in marked] == [2, 18]
    assert all(text == "▎" for _, text in marked)

    editor.command("LspAgent review")
    listed = editor.wait(lambda: len((qf := quickfix(editor))["items"]) == 2 and qf, "the list")
    assert listed["title"].startswith("lsp-agent: pending changes")
    assert [(Path(i["file"]), i["lnum"]) for i in listed["items"]] == [(path, 2), (path, 18)]
    assert FIRST in listed["items"][0]["text"]
    assert "+1 -1" in listed["items"][0]["text"]
    assert SECOND in listed["items"][1]["text"]

    # ]a / [a between the hunks (buffer-local, only where hunks are pending)
    editor.focus_buffer(path)
    assert mapped_here(editor, "]a")
    assert mapped_here(editor, "[a")
    editor.set_cursor(1)
    editor.type("]a")
    editor.wait(lambda: cursor_line(editor) == 2, "]a to the first hunk")
    editor.type("]a")
    editor.wait(lambda: cursor_line(editor) == 18, "]a to the second hunk")
    editor.type("[a")
    editor.wait(lambda: cursor_line(editor) == 2, "[a back to the first")

    # undo the hunk under the cursor: the buffer gets the old line back, the other stays
    editor.command("LspAgent undo-hunk")
    editor.wait(
        lambda: editor.buffer_text(path).split("\n")[1] == "v2 = 2", "the first hunk undone"
    )
    assert editor.buffer_text(path).split("\n")[17] == SECOND
    editor.wait(lambda: signs(editor, path) == [(18, "▎")], "one sign left")
    editor.wait(
        lambda: [i["lnum"] for i in quickfix(editor)["items"]] == [18], "the quickfix refreshed"
    )
    assert editor.lua("return require('lsp_agent.log').contains('undid 1 hunk')")

    # the undo came through workspace/applyEdit: one `u` takes it back
    editor.focus_buffer(path)
    editor.type("u")
    editor.wait(lambda: editor.buffer_text(path).split("\n")[1] == FIRST, "u undoes the undo")
    assert editor.buffer_text(path).split("\n")[17] == SECOND

    # keep with a range: the second hunk leaves the list, its text stays
    editor.command("17,19LspAgent keep")
    editor.wait(lambda: signs(editor, path) == [], "no sign once nothing is pending")
    editor.wait(lambda: quickfix(editor)["items"] == [], "the quickfix list emptied")
    assert editor.buffer_text(path).split("\n")[17] == SECOND
    assert not mapped_here(editor, "]a")  # gone with the last hunk


def test_undo_all_takes_back_every_pending_hunk(editor: Any, workspace: Path) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.wait(lambda: len(signs(editor, path)) == 2, "two signs")
    editor.command("LspAgent undo-hunk all")
    editor.wait(lambda: editor.buffer_text(path) + "\n" == SOURCE, "both hunks undone")
    editor.wait(lambda: signs(editor, path) == [], "no sign left")


def test_undoing_a_hunk_the_user_changed_since_is_a_conflict_shown_with_notify(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.wait(lambda: len(signs(editor, path)) == 2, "two signs")
    editor.lua(
        """
        _G.test.notified = {}
        vim.notify = function(message, level) table.insert(_G.test.notified, message) end
        """
    )
    editor.focus_buffer(path)
    editor.set_cursor(2)
    editor.type("A # mine<Esc>")  # the user changes the first hunk's line
    mine = FIRST + " # mine"
    editor.wait(lambda: editor.buffer_text(path).split("\n")[1] == mine, "the typed change")
    editor.command("LspAgent undo-hunk")
    editor.wait(
        lambda: any("could not undo a.py" in m for m in editor.lua("return _G.test.notified")),
        "the conflict notified",
    )
    assert editor.buffer_text(path).split("\n")[1] == mine  # the user's text stays
    assert editor.buffer_text(path).split("\n")[17] == SECOND


def test_keymaps_set_to_false_are_not_mapped(editor: Any, workspace: Path) -> None:
    editor.setup(server_config=AUTO, keymaps={"review": {"next": False, "undo": "<leader>u"}})
    path = run_two_edits(editor, workspace)
    editor.wait(lambda: len(signs(editor, path)) == 2, "two signs")
    editor.focus_buffer(path)
    assert not mapped_here(editor, "]a")
    assert mapped_here(editor, "[a")
    editor.set_cursor(18)
    editor.type("\\u")  # the configured undo key, on the second hunk
    editor.wait(
        lambda: editor.buffer_text(path).split("\n")[17] == "v18 = 18", "the second hunk undone"
    )
    assert editor.buffer_text(path).split("\n")[1] == FIRST


def test_an_edited_proposal_is_what_allow_applies(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    script = {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Applied."}]}
    editor.fake_llm.set_script(script)
    editor.edit(path)
    editor.command("LspAgent chat set value to 2")
    editor.choose(editor.wait_select(1), "View diff")
    editor.wait_lua("vim.t.lsp_agent_diff ~= nil", "the diff tab")
    proposal = "return vim.api.nvim_buf_get_name(0)"
    editor.wait(lambda: "/proposed/" in editor.lua(proposal), "the cursor in the proposal")
    assert editor.lua("return vim.bo.modifiable")
    editor.type("gg0f2r7")  # typed into the proposal: value = 7
    editor.wait(
        lambda: editor.lua("return vim.api.nvim_get_current_line()") == "value = 7",
        "the proposal edited",
    )

    editor.command("LspAgent allow")
    editor.wait_chat("Applied.")
    editor.wait_idle()
    assert editor.buffer_text(path) == "value = 7"
    assert editor.lua("return #vim.api.nvim_list_tabpages()") == 1
    assert editor.lua("return require('lsp_agent.log').contains('allowed with your edits')")
    second = str(editor.model_requests()[1]["messages"])
    assert "value = 7" in second  # the model is told what landed instead of its proposal


def test_edits_in_the_proposal_survive_closing_the_diff_and_the_prompts_allow(
    editor: Any, workspace: Path
) -> None:
    path = workspace / "a.py"
    path.write_text("value = 1\n")
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    script = {"turns": [{"tool_calls": [{"name": "edit", "input": edit}]}, {"text": "Applied."}]}
    editor.fake_llm.set_script(script)
    editor.edit(path)
    editor.command("LspAgent chat set value to 2")
    editor.choose(editor.wait_select(1), "View diff")
    editor.wait_lua("vim.t.lsp_agent_diff ~= nil", "the diff tab")
    editor.lua("vim.api.nvim_buf_set_lines(0, 0, -1, false, { 'value = 9', 'extra = True' })")
    editor.type("q")  # closes the diff: the prompt comes back
    editor.choose(editor.wait_select(2), "Allow once")
    editor.wait_chat("Applied.")
    editor.wait_idle()
    assert editor.buffer_text(path) == "value = 9\nextra = True"


def test_rewind_code_restores_the_file_and_keeps_the_conversation(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.command("LspAgent rewind code")
    editor.wait(lambda: editor.buffer_text(path) + "\n" == SOURCE, "the file back as before")
    editor.wait(lambda: "files rewound" in editor.chat_text(), "the rewind marked in the chat")
    chat = editor.chat_text()
    assert "change v2 and v18" in chat
    assert "Both changed." in chat


def test_rewind_conversation_hides_the_messages_and_keeps_the_file(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.command("LspAgent rewind conversation")
    editor.wait(lambda: "Both changed." not in editor.chat_text(), "the answer hidden")
    assert "conversation rewound" in editor.chat_text()
    lines = editor.buffer_text(path).split("\n")
    assert lines[1] == FIRST
    assert lines[17] == SECOND
    editor.wait(lambda: editor.prompt_lines() == ["change v2 and v18"], "the prompt offered")


def test_the_new_subcommands_complete(editor: Any) -> None:
    complete = "return vim.fn.getcompletion(..., 'cmdline')"
    names = editor.lua(complete, "LspAgent ")
    for name in ("review", "keep", "undo-hunk", "rewind", "allow"):
        assert name in names
    assert editor.lua(complete, "LspAgent rewind ") == ["both", "code", "conversation"]
    assert editor.lua(complete, "LspAgent undo-hunk ") == ["all", "file"]
    assert editor.lua(complete, "LspAgent allow s") == ["session"]


def test_undo_takes_the_signs_away_and_redo_brings_them_back(editor: Any, workspace: Path) -> None:
    """Issue 35: a sign stayed after `:LspAgent undo` until a redraw, and `redo` did not bring
    it back: the signs follow the review list the server keeps across undo and redo."""
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.focus_buffer(path)
    editor.wait(lambda: signs(editor, path) == [(2, "▎"), (18, "▎")], "two signs")

    editor.command("LspAgent undo")
    editor.wait(lambda: editor.buffer_text(path) + "\n" == SOURCE, "the file back as before")
    editor.wait(lambda: signs(editor, path) == [], "no sign once the prompt is undone")

    editor.command("LspAgent redo")
    editor.wait(lambda: editor.buffer_text(path).split("\n")[1] == FIRST, "the edits redone")
    editor.wait(lambda: signs(editor, path) == [(2, "▎"), (18, "▎")], "the signs back after redo")
