"""Code references in the Neovim chat: `gf` or `<CR>` on `src/a.py:12` (or `src/a.py:3:5`) in
an answer opens that file at that line (and column); other text with colons is no reference."""

from __future__ import annotations

from pathlib import Path
from typing import Any

ANSWER = "The value is set at src/a.py:12 and `src/a.py:3:5` reads it; localhost:8080 is a port."


def answer_in_chat(editor: Any, workspace: Path) -> tuple[Path, int, int]:
    (workspace / "src").mkdir()
    path = workspace / "src" / "a.py"
    path.write_text("".join(f"line_{n} = {n}\n" for n in range(1, 21)))
    editor.fake_llm.set_script({"turns": [{"text": ANSWER}]})
    editor.command("LspAgent chat where is the value set?")
    editor.wait_chat("localhost:8080")
    editor.wait_idle()
    chat_win = editor.lua("return require('lsp_agent.chat').win")
    editor.lua("vim.api.nvim_set_current_win(...)", chat_win)
    row = next(i for i, line in enumerate(editor.chat_lines(), 1) if "src/a.py:12" in line)
    return path, chat_win, row


def cursor_in(editor: Any, path: Path) -> list[int] | None:
    if editor.lua("return vim.api.nvim_buf_get_name(0)") != str(path):
        return None
    return list(editor.lua("return vim.api.nvim_win_get_cursor(0)"))


def test_gf_on_a_reference_opens_the_file_at_its_line(editor: Any, workspace: Path) -> None:
    path, chat_win, row = answer_in_chat(editor, workspace)
    line = editor.chat_lines()[row - 1]
    marks = editor.lua(
        "local first, last = ...\n"
        "local links = require('lsp_agent.links')\n"
        "return vim.api.nvim_buf_get_extmarks(0, links.ns, first, last, { details = true })",
        [row - 1, 0],
        [row - 1, -1],
    )
    underlined = [line.encode()[m[2] : m[3]["end_col"]].decode() for m in marks]
    assert underlined == ["src/a.py:12", "src/a.py:3:5"]
    assert all(m[3]["hl_group"] == "LspAgentCodeRef" for m in marks)
    editor.set_cursor(row, line.index("src/a.py:12") + 4)  # inside the reference
    editor.type("gf")
    assert editor.wait(lambda: cursor_in(editor, path), "a.py opened") == [12, 0]
    assert editor.lua("return vim.api.nvim_get_current_win()") != chat_win  # not in the chat

    editor.lua("vim.api.nvim_set_current_win(...)", chat_win)
    editor.set_cursor(row, line.index("src/a.py:3:5") + 1)
    editor.type("<CR>")
    editor.wait(lambda: cursor_in(editor, path) == [3, 4], "line 3, column 5")


def test_what_is_not_a_reference_opens_nothing(editor: Any, workspace: Path) -> None:
    path, chat_win, row = answer_in_chat(editor, workspace)
    line = editor.chat_lines()[row - 1]
    editor.set_cursor(row, line.index("localhost:8080") + 2)
    editor.type("gf")
    editor.lua("vim.wait(300)")
    assert editor.lua("return vim.api.nvim_get_current_win()") == chat_win
    assert editor.lua("return vim.api.nvim_buf_get_name(0)") != str(path)
    refs = editor.lua("return require('lsp_agent.links').find(...)", line)
    assert [(r["path"], r["line"], r.get("column")) for r in refs] == [
        ("src/a.py", 12, None),
        ("src/a.py", 3, 5),
    ]
    for text in ("at 12:30", "http://h.io/a.py:3", "ratio 1:2", "x.py:0", "v1.2:3x"):
        assert editor.lua("return require('lsp_agent.links').find(...)", text) == [], text
