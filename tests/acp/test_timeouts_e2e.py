"""Requests to an ACP client that never answers end within their timeouts (issue 32): an
ask nobody answers ends the turn at ``editor.ask_timeout`` and the model reads why."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import HOLD, TIMEOUT, RecordingClient, spawn_agent
from tests.support.user_config import write_user_config


async def test_an_ask_nobody_answers_ends_the_turn_at_the_ask_timeout(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    write_user_config({"editor": {"ask_timeout": 2}})
    other = ws / "new.txt"
    touch = {"name": "bash", "input": {"command": f"touch {other}"}}
    fake_llm.set_script({"turns": [{"tool_calls": [touch]}, {"text": "never sent"}]})
    client = RecordingClient(answers=[HOLD])
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            stop = (
                await agent.conn.prompt(session_id=sid, prompt=[text_block("touch")])
            ).stop_reason
        assert stop == "cancelled", agent.log()
    agent.assert_clean_exit()
    assert [p.answer for p in client.permissions] == [HOLD]
    assert "Nobody answered the permission request within 2 s" in json.dumps(client.updates[sid])
    assert not other.exists()
    assert len([r for r in fake_llm.requests if r.turn != "side"]) == 1
