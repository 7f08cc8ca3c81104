"""Commands issued while the server starts: `:LspAgent ask` in the same Lua chunk as setup()
waits for the server and answers; a server that cannot start says why and where the log is."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pynvim
import pytest

from tests.nvim.conftest import SERVER_CMD, SPY, Editor

#: Records every vim.notify (message, level), then shows it as usual.
NOTIFY_SPY = """
_G.notes = {}
local notify = vim.notify
vim.notify = function(msg, level, opts)
  table.insert(_G.notes, { msg = msg, level = level or vim.log.levels.INFO })
  return notify(msg, level, opts)
end
"""

#: setup() and a command in one chunk (no attach in between); what the statusline said then.
SETUP_THEN = """
local opts, command = ...
require('lsp_agent').setup(opts)
vim.cmd(command)
return require('lsp_agent').statusline()
"""


def start_editor(nvim: pynvim.Nvim, fake_llm: Any, workspace: Path) -> Editor:
    editor = Editor(nvim, fake_llm, workspace)
    editor.lua(SPY)
    editor.lua(NOTIFY_SPY)
    return editor


def notes(editor: Editor, least: int = 0) -> list[str]:
    """The messages shown with vim.notify at `least` this level."""
    return [n["msg"] for n in editor.lua("return _G.notes") if n["level"] >= least]


def errors(editor: Editor) -> list[str]:
    """The warnings and errors shown."""
    return notes(editor, editor.lua("return vim.log.levels.WARN"))


@pytest.mark.parametrize("opened", ["no buffer", "a file open before setup"])
def test_ask_right_after_setup_waits_for_the_server_then_answers(
    nvim: pynvim.Nvim, fake_llm: Any, workspace: Path, opened: str
) -> None:
    fake_llm.set_script({"turns": [{"text": "Forty-two, from the model."}]})
    editor = start_editor(nvim, fake_llm, workspace)
    if opened != "no buffer":
        path = workspace / "a.py"
        path.write_text("answer = 42\n")
        editor.command(f"edit {path}")

    status = editor.lua(SETUP_THEN, {"cmd": SERVER_CMD}, "LspAgent ask what is the answer?")

    # the command was queued, and the starting state was visible meanwhile
    assert status == "agent: starting…"
    editor.wait_chat("Forty-two, from the model.", timeout=60)
    editor.wait_idle()
    assert "what is the answer?" in editor.chat_text()
    [request] = editor.model_requests()
    assert "what is the answer?" in str(request["messages"])
    # told once that it was starting; no error, no warning
    assert [n for n in notes(editor) if "starting the server" in n] == [
        "lsp-agent: starting the server… (the command runs when it is ready)"
    ]
    assert errors(editor) == []
    assert editor.lua("return vim.v.errmsg") == ""
    # the server's start progress ended: the statusline shows the session now
    editor.wait_lua(
        "require('lsp_agent').statusline():find('starting', 1, true) == nil",
        "the starting state to end",
    )


def test_a_server_that_cannot_start_says_why_and_points_to_the_log(
    nvim: pynvim.Nvim, fake_llm: Any, workspace: Path, tmp_path: Path
) -> None:
    not_a_folder = tmp_path / "data-is-a-file"
    not_a_folder.write_text("not a folder\n")
    editor = start_editor(nvim, fake_llm, workspace)
    options = {"cmd": SERVER_CMD, "cmd_env": {"LSP_AGENT_DATA_DIR": str(not_a_folder)}}

    editor.lua(SETUP_THEN, options, "LspAgent ask does this reach the model?")

    [error] = editor.wait(lambda: errors(editor), "the start failure to be told", timeout=60)
    log_path = editor.lua("return vim.lsp.get_log_path()")
    assert error.startswith("lsp-agent: the server failed to start: ")
    assert str(not_a_folder) in error  # the server's own reason
    assert ":LspAgent log" in error
    assert log_path in error
    editor.wait_lua(
        "require('lsp_agent').statusline() == 'agent: failed to start'", "the failed state"
    )
    # told once: the server's showMessage and the failed request are one notification
    editor.lua("vim.wait(300)")
    assert len(errors(editor)) == 1

    # a later command says it again at once, and nothing reached the model
    editor.command("LspAgent ask and now?")
    editor.wait(lambda: len(errors(editor)) == 2, "the second command's failure")
    assert str(not_a_folder) in errors(editor)[1]
    assert editor.model_requests() == []

    editor.command("LspAgent log")
    log_text = "\n".join(editor.lua("return vim.api.nvim_buf_get_lines(0, 0, -1, false)"))
    assert str(not_a_folder) in log_text
    assert log_path in log_text


def test_a_server_that_exits_at_once_says_so(
    nvim: pynvim.Nvim, fake_llm: Any, workspace: Path
) -> None:
    editor = start_editor(nvim, fake_llm, workspace)
    cmd = [sys.executable, "-c", "import sys; sys.exit(3)"]

    editor.lua(SETUP_THEN, {"cmd": cmd}, "LspAgent ask anyone there?")

    # (Neovim itself also says "Client lsp_agent quit with exit code 3")
    ours = editor.wait(
        lambda: [e for e in errors(editor) if e.startswith("lsp-agent:")], "the exit to be told"
    )
    [error] = ours
    assert "the server exited (code 3) before it was ready" in error
    assert ":LspAgent log" in error


def test_a_server_that_never_answers_initialize_times_out(
    nvim: pynvim.Nvim, fake_llm: Any, workspace: Path
) -> None:
    editor = start_editor(nvim, fake_llm, workspace)
    editor.lua("require('lsp_agent.startup').timeout_ms = 1500")
    cmd = [sys.executable, "-c", "import sys; sys.stdin.read()"]  # silent until Neovim quits

    status = editor.lua(SETUP_THEN, {"cmd": cmd}, "LspAgent ask hello?")

    assert status == "agent: starting…"
    [error] = editor.wait(lambda: errors(editor), "the wait to run out", timeout=30)
    assert "the server is not ready after 1.5 s" in error
    assert ":LspAgent log" in error


#: A server that answers `initialize` with what is not JSON, then waits for Neovim to quit.
GARBLED_SERVER = r"""
import sys
sys.stdout.write("Content-Length: 9\r\n\r\nnot json!")
sys.stdout.flush()
sys.stdin.read()
"""


def test_a_server_that_talks_garbage_before_initialize_says_so(
    nvim: pynvim.Nvim, fake_llm: Any, workspace: Path
) -> None:
    editor = start_editor(nvim, fake_llm, workspace)
    cmd = [sys.executable, "-c", GARBLED_SERVER]

    editor.lua(SETUP_THEN, {"cmd": cmd}, "LspAgent ask anyone there?")

    ours = editor.wait(
        lambda: [e for e in errors(editor) if e.startswith("lsp-agent:")], "the failure told"
    )
    [error] = ours
    assert error.startswith("lsp-agent: the server failed to start: INVALID_SERVER_JSON")
    assert ":LspAgent log" in error
