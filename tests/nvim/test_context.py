"""What the editor knows reaching the agent: ``:LspAgent fix`` with the diagnostic under the
cursor, ``ask`` with a selection, forwarded diagnostics, code actions."""

from __future__ import annotations

from pathlib import Path
from typing import Any

SET_DIAGNOSTIC = """
local bufnr, lnum, col, end_col, message = ...
local ns = vim.api.nvim_create_namespace('test_linter')
vim.diagnostic.set(ns, bufnr, {{
  lnum = lnum, col = col, end_lnum = lnum, end_col = end_col,
  message = message, severity = vim.diagnostic.severity.ERROR,
  source = 'testlint', code = 'E999',
}})
"""


def set_diagnostic(editor: Any, lnum: int, col: int, end_col: int, message: str) -> None:
    bufnr = editor.lua("return vim.api.nvim_get_current_buf()")
    editor.lua(SET_DIAGNOSTIC, bufnr, lnum, col, end_col, message)


def test_fix_sends_the_diagnostic_under_the_cursor(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("import os\nprint(valu)\n")
    editor.fake_llm.set_script({"turns": [{"text": "Use value."}]})
    editor.edit(path)
    set_diagnostic(editor, 1, 6, 10, "undefined name valu")
    editor.lua("vim.api.nvim_win_set_cursor(0, {2, 7})")

    editor.command("LspAgent fix")
    editor.wait_chat("Use value.")
    editor.wait_idle()
    first = str(editor.model_requests()[0]["messages"])
    assert "undefined name valu" in first
    assert "testlint" in first
    assert editor.lua("return require('lsp_agent.log').contains('fix through lspAgent.fix')")


def test_fix_without_a_diagnostic_says_so(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("x = 1\n")
    editor.edit(path)
    editor.command("LspAgent fix")
    assert editor.lua("return require('lsp_agent.log').contains('no diagnostic under the cursor')")
    assert editor.model_requests() == []


def test_ask_with_a_range_takes_the_selection_as_context(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("one = 1\ntwo = 2\nthree = 3\nfour = 4\n")
    editor.fake_llm.set_script({"turns": [{"text": "Two assignments."}]})
    editor.edit(path)

    editor.command("2,3LspAgent ask what do these lines do?")
    editor.wait_chat("Two assignments.")
    editor.wait_idle()
    first = str(editor.model_requests()[0]["messages"])
    assert "what do these lines do?" in first
    assert "two = 2" in first
    assert "three = 3" in first
    assert "four = 4" not in first
    assert "lines 2-3" in first
    # the link and the selected text of the same file: one chip in the chat, with its lines
    assert editor.chat_text().count("<a.py") == 1, editor.chat_text()
    assert "<a.py:2-3>" in editor.chat_lines()


def test_ask_without_text_asks_for_it(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("one = 1\n")
    editor.fake_llm.set_script({"turns": [{"text": "An assignment."}]})
    editor.edit(path)
    editor.type(":LspAgent ask<CR>")  # typed: the input prompt must not block an RPC call
    editor.wait_input(1)
    editor.type("what is this?<CR>")
    editor.wait_chat("An assignment.")
    assert "what is this?" in str(editor.model_requests()[0]["messages"])


def test_forwarded_diagnostics_reach_the_agent(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("import os\nprint(valu)\n")
    call = {"name": "diagnostics", "input": {"file_path": str(path)}}
    editor.fake_llm.set_script({"turns": [{"tool_calls": [call]}, {"text": "One error."}]})
    editor.edit(path)
    set_diagnostic(editor, 1, 6, 10, "undefined name valu")
    editor.wait_lua(
        "require('lsp_agent.log').contains('forwarded the diagnostics')", "the diagnostics sent"
    )

    editor.command("LspAgent chat what is wrong in a.py?")
    editor.wait_chat("One error.")
    editor.wait_idle()
    second = str(editor.model_requests()[1]["messages"])
    assert "undefined name valu" in second
    assert "2:7" in second  # line 2, column 7 (1-based)


def test_the_fix_code_action_runs_through_the_plugin(editor: Any, workspace: Path) -> None:
    path = workspace / "a.py"
    path.write_text("print(valu)\n")
    editor.fake_llm.set_script({"turns": [{"text": "Fixed via code action."}]})
    editor.edit(path)
    set_diagnostic(editor, 0, 6, 10, "undefined name valu")

    editor.lua("require('lsp_agent').code_action()")
    record = editor.wait_select(1)
    assert any("Ask agent to fix: undefined name valu" in item for item in record["items"])
    editor.choose(record, next(i for i in record["items"] if "Ask agent to fix" in i))
    editor.wait_chat("Fixed via code action.")
    assert "undefined name valu" in str(editor.model_requests()[0]["messages"])
