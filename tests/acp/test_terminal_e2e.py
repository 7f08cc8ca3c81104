"""bash through the client's terminal, against the real ``lsp-agent acp``: a client that offers
``terminal`` is asked to start the command (``terminal/create`` … ``release``), the tool call
embeds that terminal, the model reads its output, and the agent's key never reaches the
command even though the client merges its own environment (which has it) in. A cancel kills
and releases the terminal."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.acp.conftest import KEY
from tests.support.acp_client import TIMEOUT, RecordingClient, capabilities, spawn_agent
from tests.support.acp_terminal_client import SpawningTerminals, running
from tests.support.waiting import wait_until


class TerminalClient(SpawningTerminals, RecordingClient):
    """The recording client that also hosts terminals."""


def bash_turns(command: str) -> dict[str, object]:
    call = {"name": "bash", "input": {"command": command}}
    return {"turns": [{"tool_calls": [call]}, {"text": "Ran it."}]}


async def test_bash_runs_in_the_clients_terminal_without_the_agents_key(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script(bash_turns('echo "in-terminal key=${ANTHROPIC_API_KEY:-none}"'))
    client = TerminalClient(base_env={**os.environ, "ANTHROPIC_API_KEY": KEY}, kill_grace=3)
    offers = capabilities(terminal=True)
    async with spawn_agent(
        acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client, offers=offers
    ) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("run")])
        assert answer.stop_reason == "end_turn", agent.log()
        [terminal] = client.terminals.values()
        assert [method for method, _ in client.calls] == [
            "terminal/create",
            "terminal/wait_for_exit",
            "terminal/output",
            "terminal/release",
        ]
        assert terminal.session_id == sid
        assert terminal.cwd == str(ws)
        embedded = [
            block
            for update in client.of_kind(sid, "tool_call_update")
            for block in update.get("content", [])
            if block.get("type") == "terminal"
        ]
        assert {"type": "terminal", "terminalId": terminal.terminal_id} in embedded
    agent.assert_clean_exit()
    result = json.dumps([r for r in fake_llm.requests if r.turn != "side"][1].body["messages"][-1])
    assert "in-terminal key=none" in result
    assert KEY not in result


async def test_cancelling_kills_and_releases_the_clients_terminal(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    pids_file = ws / "pids.txt"
    fake_llm.set_script(bash_turns(f"echo $$ > {pids_file}; sleep 600"))
    client = TerminalClient(kill_grace=3)
    offers = capabilities(terminal=True)
    async with spawn_agent(
        acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client, offers=offers
    ) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            prompt = asyncio.create_task(
                agent.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
            )
            await wait_until(lambda: pids_file.exists() and pids_file.read_text().endswith("\n"))
            await agent.conn.cancel(session_id=sid)
            answer = await prompt
        assert answer.stop_reason == "cancelled", agent.log()
        [terminal] = client.terminals.values()
        await wait_until(lambda: terminal.released, TIMEOUT)
        assert terminal.killed
        assert terminal.process.returncode is not None
        assert not running(terminal.process.pid)
    agent.assert_clean_exit()
