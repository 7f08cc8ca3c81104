"""A problem outside the turn (an MCP server that could not start) reaches the chat buffer once
per session, from the first ``state_update`` that carries it as a note."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.mcp_servers import MISSING_COMMAND
from tests.support.user_config import write_user_config

NOTE = 'MCP server "ghostsrv" could not start'


@pytest.fixture
def ghost_server() -> None:
    """A user config naming a server whose command does not exist (before the editor starts)."""
    server = {"type": "local", "command": [MISSING_COMMAND]}
    write_user_config({"mcp": {"ghostsrv": server}})


def test_a_server_that_cannot_start_is_noted_once_in_the_chat(
    ghost_server: None, editor: Any
) -> None:
    editor.fake_llm.set_script({"turns": [{"text": "First answer."}, {"text": "Second answer."}]})
    editor.command("LspAgent chat hello")
    editor.wait_chat("First answer.")
    editor.wait_idle()
    editor.command("LspAgent chat again")
    editor.wait_chat("Second answer.")
    editor.wait_idle()
    assert editor.chat_text().count(NOTE) == 1, editor.chat_text()
