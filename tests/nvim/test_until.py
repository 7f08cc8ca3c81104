"""`:LspAgent until {command}` (protocol.md "Until green"): the task goes to the server with
`until`, the server runs the command after each turn and, while it fails, gives the agent its
output for another turn; each check is a notice in the chat."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# fails after the first turn, passes after the second (run in the session's folder)
COMMAND = 'echo try >> tries.txt; n=$(grep -c try tries.txt); echo "attempt $n"; test "$n" -ge 2'


def test_until_runs_the_command_after_each_turn_and_retries_while_it_fails(
    editor: Any, workspace: Path
) -> None:
    editor.fake_llm.set_script({"turns": [{"text": "First try."}, {"text": "Second try."}]})
    editor.type(f":LspAgent until {COMMAND}<CR>")  # typed: the input prompt must not block RPC
    asked = editor.wait_input(1)
    assert COMMAND in asked["prompt"]
    editor.type("make the tests pass<CR>")

    editor.wait_chat("until green: attempt 2/5:")
    editor.wait_idle()
    text = editor.chat_text()
    assert "until green: attempt 1/5: " + COMMAND + " exited 1; its output goes to the agent" in (
        text
    )
    assert "until green: attempt 2/5: " + COMMAND + " exited 0" in text
    assert (workspace / "tries.txt").read_text() == "try\ntry\n"
    first, second = editor.model_requests()
    assert "make the tests pass" in json.dumps(first["messages"])
    assert "attempt 1" in json.dumps(second["messages"])  # the failing output went to the agent


def test_an_empty_task_asks_the_agent_to_make_the_command_pass(
    editor: Any, workspace: Path
) -> None:
    editor.fake_llm.set_script({"turns": [{"text": "Done."}]})
    editor.lua("require('lsp_agent').until_green('true', '')")
    editor.wait_chat("until green: attempt 1/5: true exited 0")
    editor.wait_idle()
    (request,) = editor.model_requests()
    assert "Make `true` pass." in json.dumps(request["messages"])


def test_until_without_a_command_says_what_it_takes(editor: Any) -> None:
    editor.command("LspAgent until")
    messages = editor.nvim.exec_lua("return vim.fn.execute('messages')")
    assert "until takes the command that must pass" in messages
    assert editor.fake_llm.requests == []
