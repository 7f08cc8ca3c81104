"""``:LspAgent sessions search`` in a real Neovim: a word only a tool printed in an older session
finds that session, picking the hit opens it; a word never said, or a query of only syntax,
says so and opens nothing."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any


def test_sessions_search_finds_an_old_sessions_tool_output_and_opens_it(
    editor: Any, workspace: Path
) -> None:
    (workspace / "notes.txt").write_text("the vault code is zirconwombat\n")
    editor.fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": "notes.txt"}}]},
                {"text": "Noted."},
                {"text": "Something else entirely."},
            ]
        }
    )
    editor.command("LspAgent chat read the notes")
    editor.wait_chat("Noted.")
    editor.wait_idle()
    old = editor.session()["id"]
    editor.command("LspAgent! chat another question")
    editor.wait_chat("Something else entirely.")
    editor.wait_idle()
    assert editor.session()["id"] != old

    editor.command("LspAgent sessions search zircon*")
    record = editor.wait_select(1)
    assert record["kind"] == "lsp_agent_search"
    (item,) = record["items"]
    assert old in item
    assert "[tool output]" in item
    assert "zirconwombat" in item
    assert re.search(r"zirconwombat.*  \d{4}-\d{2}-\d{2} \d{2}:\d{2}  ", item), item  # its own time
    editor.choose(record, item)
    editor.wait_lua(f"require('lsp_agent.session').current == '{old}'", "the old session")
    editor.wait_chat("Noted.")

    editor.command("LspAgent sessions search --all neverwordzz")
    editor.wait_lua(
        "require('lsp_agent.log').contains('no session mentions neverwordzz')", "no hits"
    )
    editor.command('LspAgent sessions search "*"')
    editor.wait_lua("require('lsp_agent.log').contains('nothing to search for')", "the error")
    assert len(editor.lua("return _G.test.selects")) == 1
