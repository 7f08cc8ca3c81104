"""Issue 37 in Neovim: a comment on a hunk asked with ``vim.ui.input`` (and an undo with a
reason) reaches the model at the start of the next prompt; ``:LspAgent commit`` fills a commit
buffer with the agent's message and ``:w`` commits the staged changes with it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.nvim.test_review import AUTO, FIRST, SECOND, quickfix, run_two_edits
from tests.support.git_history import commit_history, git
from tests.support.model_requests import last_user_text


def test_a_comment_asked_in_the_quickfix_and_an_undo_reason_open_the_next_prompt(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=AUTO)
    path = run_two_edits(editor, workspace)
    editor.command("LspAgent review")
    editor.wait(lambda: len(quickfix(editor)["items"]) == 2, "the list")
    # in the quickfix window: `c` on the second entry asks for the comment
    editor.lua("vim.cmd('copen'); vim.api.nvim_win_set_cursor(0, { 2, 0 })")
    editor.type("c")
    asked = editor.wait_input(1)
    assert asked["prompt"] == "Comment on the change: "
    editor.type("name it LIMIT<CR>")
    session = editor.session()["id"]
    editor.wait(
        lambda: any(
            c["text"] == "name it LIMIT"
            for f in editor.lua("return require('lsp_agent.review').lists[...]", session) or []
            for h in f["hunks"]
            for c in h.get("comments", [])
        ),
        "the comment in the list",
    )
    # the first hunk: undone with a reason given on the command line
    editor.focus_buffer(path)
    editor.set_cursor(2)
    editor.command("LspAgent undo-reason v2 must stay 2")
    editor.wait(lambda: editor.buffer_text(path).split("\n")[1] == "v2 = 2", "the undo")
    editor.wait(
        lambda: (
            [
                h["status"]
                for f in editor.lua("return require('lsp_agent.review').lists[...]", session) or []
                for h in f["hunks"]
            ]
            == ["undone", "pending"]
        ),
        "the undo answered",
    )

    editor.fake_llm.set_script({"turns": [{"text": "Noted."}]})
    editor.command("LspAgent chat go on")
    editor.wait_chat("Noted.")
    text = last_user_text(editor.model_requests()[-1])
    assert text.startswith("My comments on your changes:")
    assert f"a.py:18\n```\n{SECOND}\n```\nComment: name it LIMIT" in text
    assert f"a.py:2\n```\n{FIRST}\n```\nUndone, because: v2 must stay 2\ngo on" in text


def test_commit_fills_a_commit_buffer_and_w_commits_with_it(editor: Any, workspace: Path) -> None:
    commit_history(workspace, ["docs: readme", "fix(io): flush", "feat: start"])
    git(workspace, "config", "user.name", "T")  # the person's own commit needs an identity
    git(workspace, "config", "user.email", "t@example.invalid")
    (workspace / "greet.py").write_text("print('hello')\n")
    git(workspace, "add", "greet.py")
    editor.setup(server_config=AUTO)
    editor.fake_llm.set_script(
        {
            "side_requests_use_script": True,
            "turns": [{"text": "feat(greet): say hello\n\nPrints a greeting."}],
        }
    )
    editor.edit(workspace / "greet.py")
    editor.command("LspAgent commit")
    lines = editor.wait(
        lambda: (
            editor.lua("return vim.bo.filetype") == "gitcommit"
            and editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)")
        ),
        "the commit buffer",
    )
    assert lines[:3] == ["feat(greet): say hello", "", "Prints a greeting."]
    assert lines[4].startswith("#")
    asked = json.dumps(editor.fake_llm.requests[-1].body)
    assert "print('hello')" in asked
    # the person edits the body, then :w commits
    editor.lua("vim.api.nvim_buf_set_lines(0, 2, 3, false, { 'Prints hello.' })")
    editor.command("write")
    editor.wait(
        lambda: (
            git(workspace, "log", "-1", "--format=%B").strip()
            == "feat(greet): say hello\n\nPrints hello."
        ),
        "the commit",
    )
    assert git(workspace, "status", "--porcelain").strip() == ""
    editor.wait(lambda: editor.lua("return vim.bo.filetype") != "gitcommit", "the buffer closed")
