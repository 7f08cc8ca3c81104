"""``agent/session/search`` over LSP: a tool's output is found in this folder's sessions and not
in another folder's, a query of nothing but syntax is ``-32602`` with a message, and a deleted
session is found no more."""

from __future__ import annotations

from pathlib import Path

import pytest
from pygls.exceptions import JsonRpcException

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import agent_client


async def test_search_finds_a_tool_output_in_the_folder_and_forgets_a_deleted_session(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    (workspace / "a.txt").write_text("the word is quetzalpine\n")
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "read", "input": {"file_path": "a.txt"}}]},
                {"text": "Read."},
            ]
        }
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        session = await client.new_session()
        await client.prompt(session, "read a.txt")
        await client.wait_idle(session)
        folder = workspace.as_uri()

        found = await client.request(
            "agent/session/search", {"query": "quetzal*", "workspaceFolder": folder, "limit": 5}
        )
        (hit,) = found["hits"]
        assert hit["sessionId"] == session
        assert hit["kind"] == "tool_output"
        assert "quetzalpine" in hit["snippet"]
        assert set(hit) == {
            "sessionId",
            "title",
            "messageId",
            "snippet",
            "updatedAt",
            "time",
            "kind",
        }
        elsewhere = {"query": "quetzalpine", "workspaceFolder": "file:///elsewhere"}
        assert (await client.request("agent/session/search", elsewhere))["hits"] == []
        never = await client.request("agent/session/search", {"query": "neverwordzz"})
        assert never["hits"] == []

        with pytest.raises(JsonRpcException) as bad:
            await client.request("agent/session/search", {"query": '"*" ()'})
        assert bad.value.code == -32602
        assert "nothing to search for" in bad.value.message

        await client.request("agent/session/delete", {"sessionId": session})
        gone = await client.request("agent/session/search", {"query": "quetzalpine"})
        assert gone["hits"] == []
