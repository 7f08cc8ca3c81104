"""What the chat shows of command results and failed turns, in a real Neovim (issue 32 §5,
§6): a command that fails is ✗ with its exit status and its last output lines (the earlier
ones in a closed fold); a provider error is an error block in the conversation, and Retry
(`r` in the chat, `:LspAgent retry`) sends the prompt again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

BASH_ALLOWED = {"permission": {"bash": "allow"}}


def test_a_failed_command_shows_its_exit_status_and_last_lines(
    editor: Any, workspace: Path
) -> None:
    editor.setup(server_config=BASH_ALLOWED)
    script = "; ".join(f"echo line{i}" for i in range(1, 11)) + "; echo FAILED test_add; exit 3"
    bash = {"name": "bash", "input": {"command": script, "description": "Run the tests"}}
    ok = {"name": "bash", "input": {"command": "echo fine", "description": "Say fine"}}
    editor.fake_llm.set_script(
        {"turns": [{"tool_calls": [bash]}, {"tool_calls": [ok]}, {"text": "A test fails."}]}
    )
    editor.command("LspAgent chat run the tests")
    editor.wait_chat("A test fails.")
    editor.wait_idle()
    lines = editor.chat_lines()

    # each line titled by the server: the command it runs (issue 34: the tool's own words)
    [failed] = [line for line in lines if line.startswith("- ✗ bash Run echo line1; echo line2")]
    assert "[exit 3]" in failed
    [fine] = [line for line in lines if line.startswith("- ✓ bash Run echo fine")]
    assert "[exit 0]" in fine
    at = lines.index(failed)
    # the last lines are visible under the call; the earlier ones folded away
    assert lines[at + 1] == "  ┆ … 8 earlier lines (za shows them)"
    assert lines[at + 2 : at + 13] == [
        *(f"  ┆ line{i}" for i in range(1, 11)),
        "  ┆ FAILED test_add",
    ]
    assert not any(line.startswith("  ┆ Exit code") for line in lines), lines
    chat_win = editor.lua("return require('lsp_agent.chat').win")
    fold_start = at + 2  # 1-based line of the fold's first line
    assert editor.in_window(chat_win, f"vim.fn.foldclosed({fold_start})") == fold_start
    assert editor.in_window(chat_win, f"vim.fn.foldclosed({at + 12})") == -1  # visible
    assert editor.in_window(chat_win, f"vim.fn.foldclosed({at + 13})") == -1
    # expandable: opening the fold shows every line
    editor.lua("vim.api.nvim_set_current_win(...)", chat_win)
    editor.set_cursor(fold_start)
    editor.command("normal! zo")
    assert editor.in_window(chat_win, f"vim.fn.foldclosed({fold_start + 1})") == -1


def test_a_provider_error_is_in_the_chat_and_retry_sends_the_prompt_again(
    editor: Any, workspace: Path
) -> None:
    editor.fake_llm.set_script({"turns": [{"error": "auth"}, {"text": "Hello again."}]})
    editor.command("LspAgent chat say hello")
    end = editor.wait_idle()
    assert end["stopReason"] == "error"
    text = editor.wait_chat("**✗ Error:**")
    [error] = [line for line in editor.chat_lines() if line.startswith("**✗ Error:**")]
    assert "401" in error
    assert "ANTHROPIC_API_KEY" in error
    assert "_Retry: press `r` or run `:LspAgent retry` (sends your last prompt again)_" in text

    # `r` in the chat retries
    chat_win = editor.lua("return require('lsp_agent.chat').win")
    editor.lua("vim.api.nvim_set_current_win(...)", chat_win)
    editor.type("r")
    editor.wait_chat("Hello again.")
    editor.wait_idle()
    requests = editor.model_requests()
    assert len(requests) == 2
    assert "say hello" in str(requests[1]["messages"][-1])
    # the old error stays in the conversation; its retry hint is gone
    assert "**✗ Error:**" in editor.chat_text()
    assert "Retry:" not in editor.chat_text()


def test_retry_is_a_command_too(editor: Any, workspace: Path) -> None:
    editor.fake_llm.set_script({"turns": [{"error": "overloaded"}, {"text": "Second time lucky."}]})
    editor.setup(server_config={"retry": {"max_retries": 0}})
    editor.command("LspAgent chat try it")
    editor.wait_chat("**✗ Error:**")
    editor.wait_idle()
    editor.command("LspAgent retry")
    editor.wait_chat("Second time lucky.")
    assert "try it" in str(editor.model_requests()[-1]["messages"][-1])


def test_the_command_ask_shows_the_command_and_the_models_description(
    editor: Any, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("keep\n")
    rm = {"name": "bash", "input": {"command": "rm notes.txt", "description": "Run hello.py"}}
    editor.fake_llm.set_script({"turns": [{"tool_calls": [rm]}, {"text": "Not removed."}]})
    editor.command("LspAgent chat run hello.py")
    record = editor.wait_select(1)
    editor.type("<Esc>")
    editor.command("LspAgent stop")
    editor.wait_idle()

    assert "Run: rm notes.txt" in record["prompt"]
    assert "Run hello.py" in record["prompt"]
    assert (workspace / "notes.txt").exists()
