"""The agent's review of YOUR changes in Neovim (issue 37 §1): ``:LspAgent codereview`` puts
the findings in the quickfix list, the server's diagnostics show them in the buffer, and the
code action "Fix with agent" starts a prompt naming the finding; "Dismiss" removes it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.support.hostile_repo import git

PLANTED = "def mean(values):\n    total = sum(values)\n    return total / (len(values) - 1)\n"
MESSAGE = "Divides by len - 1: one value divides by zero."


def repository(ws: Path) -> Path:
    path = ws / "stats.py"
    path.write_text(PLANTED.replace(" - 1)", ")").replace("(len", "len"))
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    path.write_text(PLANTED)
    return path


def quickfix(editor: Any) -> dict[str, Any]:
    return editor.lua(
        """
        local list = vim.fn.getqflist({ title = 0, items = 0 })
        local items = {}
        for _, item in ipairs(list.items) do
          table.insert(items, { file = vim.api.nvim_buf_get_name(item.bufnr), lnum = item.lnum,
                                text = item.text, type = item.type })
        end
        return { title = list.title, items = items }
        """
    )


def review_diagnostics(editor: Any, path: Path) -> list[dict[str, Any]]:
    return editor.lua(
        """
        local found = {}
        for _, d in ipairs(vim.diagnostic.get(vim.fn.bufnr(...))) do
          if d.source == 'lsp-agent' then
            table.insert(found, { lnum = d.lnum, message = d.message })
          end
        end
        return found
        """,
        str(path),
    )


def code_action(editor: Any, title: str) -> None:
    editor.lua(
        """
        local title = ...
        vim.lsp.buf.code_action({
          apply = true,
          filter = function(action) return action.title == title end,
        })
        """,
        title,
    )


def test_codereview_fills_quickfix_and_its_code_actions_fix_and_dismiss(
    editor: Any, workspace: Path
) -> None:
    path = repository(workspace)
    finding = {"path": "stats.py", "line": 3, "severity": "error", "message": MESSAGE}
    editor.fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "report_finding", "input": finding}]},
                {"text": "One bug."},
                {"text": "Fixed."},
            ]
        }
    )
    editor.edit(path)
    editor.command("LspAgent codereview")

    listed = editor.wait(lambda: (qf := quickfix(editor))["items"] and qf, "the findings")
    assert listed["title"] == "lsp-agent: review of your changes"
    assert [(Path(i["file"]), i["lnum"], i["type"]) for i in listed["items"]] == [(path, 3, "E")]
    assert listed["items"][0]["text"] == MESSAGE
    editor.wait(lambda: review_diagnostics(editor, path), "the diagnostic in the buffer")
    assert review_diagnostics(editor, path) == [{"lnum": 2, "message": MESSAGE}]

    editor.focus_buffer(path)
    editor.set_cursor(3)
    code_action(editor, "Fix with agent")
    editor.wait(lambda: len(editor.model_requests()) >= 3, "the fix's prompt reached the model")
    assert MESSAGE in str(editor.model_requests()[2]["messages"])

    editor.set_cursor(3)
    code_action(editor, "Dismiss")
    editor.wait(lambda: review_diagnostics(editor, path) == [], "the diagnostic dismissed")
