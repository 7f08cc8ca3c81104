"""Saved approvals in a real Neovim: the permission prompt names the exact pattern "always"
saves (a wildcard the model wrote stays literal), ``:LspAgent permissions`` lists it and revokes
the one picked, and the same command is asked again afterwards."""

from __future__ import annotations

from typing import Any


def _bash(command: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "bash", "input": {"command": command, "description": "x"}}]}


def test_always_saves_the_literal_pattern_and_permissions_revokes_it(editor: Any) -> None:
    command = "git 'c*' --help"
    editor.fake_llm.set_script(
        {"turns": [_bash(command), {"text": "First."}, _bash(command), {"text": "Second."}]}
    )
    editor.command("LspAgent chat run it")
    asked = editor.wait_select(1)
    assert asked["kind"] == "lsp_agent_permission"
    always = [item for item in asked["items"] if item.startswith("Always allow")]
    assert always == ["Always allow in this project: bash git c[*] *"], asked["items"]
    editor.choose(asked, "Always allow")
    editor.wait_chat("First.")
    editor.wait_idle()

    editor.command("LspAgent permissions")
    listed = editor.wait_select(2)
    assert listed["kind"] == "lsp_agent_approval"
    assert listed["items"] == ["bash: git c[*] *  [always, this project]"]
    editor.choose(listed, "bash: git c[*] *")
    editor.wait_lua("require('lsp_agent.log').contains('revoked bash: git c')", "the revoke")

    editor.command("LspAgent chat again")  # revoked: the same command is asked again
    again = editor.wait_select(3)
    assert again["kind"] == "lsp_agent_permission"
    editor.choose(again, "Allow once")
    editor.wait_chat("Second.")

    editor.command("LspAgent permissions")
    editor.wait_lua(
        "require('lsp_agent.log').contains('no saved approvals in this workspace')", "none left"
    )
