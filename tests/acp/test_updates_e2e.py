"""The todo list as an ACP ``plan`` update and the ``/compact`` command, against the real
``lsp-agent acp``: ``todowrite`` becomes ``plan`` entries with their status and priority;
``/compact`` (offered in ``available_commands_update``) summarizes the conversation."""

from __future__ import annotations

import asyncio
from pathlib import Path

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent
from tests.support.user_config import write_user_config

PLAN = [
    {"content": "read the code", "status": "completed", "priority": "high"},
    {"content": "fix the bug", "status": "in_progress"},
    {"content": "drop the hack", "status": "cancelled", "priority": "low"},
]


def sides(fake_llm: FakeLLMServer) -> list[object]:
    return [r for r in fake_llm.requests if r.turn == "side"]


async def test_the_todo_list_is_a_plan_and_compact_is_a_command(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    big = ws / "big.txt"
    big.write_text("".join(f"line {i} with some words to fill the context\n" for i in range(200)))
    # a small kept tail and no automatic compaction: only the command compacts
    write_user_config(
        {"compaction": {"auto": False, "keep_recent_tokens": 200}, "title": {"enabled": False}}
    )
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "todowrite", "input": {"todos": PLAN}}]},
                {"tool_calls": [{"name": "read", "input": {"file_path": str(big)}}]},
                {"text": "Planned."},
            ],
            "side_text": "A summary of the conversation so far.",
        }
    )
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        client = agent.client
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await client.wait_for(lambda: bool(client.of_kind(sid, "available_commands_update")))
            [commands] = client.of_kind(sid, "available_commands_update")
            assert "compact" in {c["name"] for c in commands["availableCommands"]}
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("plan it")])
            assert answer.stop_reason == "end_turn", agent.log()
            sides_before = len(sides(fake_llm))
            compacted = await agent.conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        assert compacted.stop_reason == "end_turn", agent.log()
        assert len(sides(fake_llm)) == sides_before + 1  # the summary request
        [plan] = client.of_kind(sid, "plan")
        assert plan["entries"] == [
            {"content": "read the code", "priority": "high", "status": "completed"},
            {"content": "fix the bug", "priority": "medium", "status": "in_progress"},
            {"content": "drop the hack", "priority": "low", "status": "completed"},
        ]
        said = [u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk")]
        assert said[-1] == "Compacted the conversation."
    agent.assert_clean_exit()
