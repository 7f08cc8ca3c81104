"""ACP's ``/until COMMAND`` with the task on the next lines (docs/acp.md), against the real
``lsp-agent acp``: the task is the turn's prompt; after each turn the command runs in the
session's folder and, while it fails, its output is the next turn's prompt; each check is a
line of the answer, and the prompt request ends when the command passes."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent

# fails after the first turn, passes after the second
COMMAND = 'echo try >> tries.txt; n=$(grep -c try tries.txt); echo "attempt $n"; test "$n" -ge 2'


async def test_until_works_turn_after_turn_until_the_command_passes(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"text": "First try."}, {"text": "Second try."}]})
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        client = agent.client
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            await client.wait_for(lambda: bool(client.of_kind(sid, "available_commands_update")))
            [commands] = client.of_kind(sid, "available_commands_update")
            offered = {c["name"]: c for c in commands["availableCommands"]}
            assert offered["until"]["input"] == {"hint": "COMMAND, then the task on the next lines"}
            answer = await agent.conn.prompt(
                session_id=sid, prompt=[text_block(f"/until {COMMAND}\nmake the tests pass")]
            )
        assert answer.stop_reason == "end_turn", agent.log()
        said = "".join(u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk"))
        assert said.index("First try.") < said.index(
            f"_until green: attempt 1/5: {COMMAND} exited 1; its output goes to the agent_"
        )
        assert said.index("Second try.") < said.index(
            f"_until green: attempt 2/5: {COMMAND} exited 0_"
        )
        assert (ws / "tries.txt").read_text() == "try\ntry\n"
        first, second = fake_llm.model_bodies()
        assert "make the tests pass" in json.dumps(first["messages"])
        assert "/until" not in json.dumps(first["messages"])  # the task, not the command line
        assert "attempt 1" in json.dumps(second["messages"])  # the failing output went on
    agent.assert_clean_exit()


async def test_until_without_a_command_says_how_to_write_it(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        client = agent.client
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("/until")])
        assert answer.stop_reason == "end_turn"
        [said] = [u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk")]
        assert said.startswith("/until takes the command that must pass")
        assert fake_llm.model_bodies() == []
    agent.assert_clean_exit()
