"""Cancelling over ACP, against the real ``lsp-agent acp``: ``session/cancel`` during a bash
call answers the prompt ``cancelled`` and leaves none of the command's processes; closing
stdin during a turn ends the turn as cancelled and the process cleanly (the store closed
after the turn recorded its end, never under it)."""

from __future__ import annotations

import asyncio
import contextlib
import os
from pathlib import Path

import pytest
from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent
from tests.support.acp_terminal_client import running
from tests.support.user_config import write_user_config
from tests.support.waiting import wait_until

SLEEPER = "sleep 600 & echo $$ $! > pids.txt; wait"


def pids_in(path: Path) -> list[int]:
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    return [int(word) for word in text.split()] if text.endswith("\n") else []


def exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def sleeping_turn(fake_llm: FakeLLMServer) -> None:
    # the pids must be this machine's, not a sandbox's own PID namespace's
    write_user_config({"sandbox": "off"})
    fake_llm.set_script(
        {"turns": [{"tool_calls": [{"name": "bash", "input": {"command": SLEEPER}}]}]}
    )


async def test_session_cancel_stops_the_bash_call_and_its_process_group(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    sleeping_turn(fake_llm)
    pids_file = ws / "pids.txt"
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            prompt = asyncio.create_task(
                agent.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
            )
            await wait_until(lambda: len(pids_in(pids_file)) == 2, TIMEOUT)
            pids = pids_in(pids_file)
            assert all(running(pid) for pid in pids)
            await agent.conn.cancel(session_id=sid)
            answer = await prompt
        assert answer.stop_reason == "cancelled", agent.log()
        for pid in pids:  # gone, and reaped (a zombie still answers kill(pid, 0))
            await wait_until(lambda pid=pid: not exists(pid), TIMEOUT)
        [call] = agent.client.of_kind(sid, "tool_call")
        ends = [
            u
            for u in agent.client.of_kind(sid, "tool_call_update")
            if u["toolCallId"] == call["toolCallId"] and u.get("status") == "failed"
        ]
        assert ends, agent.client.updates[sid]
    agent.assert_clean_exit()


@pytest.mark.parametrize("during", ["bash", "model"])
async def test_stdin_closing_mid_turn_cancels_the_turn_and_exits_cleanly(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer, during: str
) -> None:
    sleeping_turn(fake_llm)
    if during == "model":  # the answer stalls: a model request is in flight
        fake_llm.set_script({"turns": [{"text": "never finished", "stall_after": 3}]})
    pids_file = ws / "pids.txt"
    pids: list[int] = []
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            prompt = asyncio.create_task(
                agent.conn.prompt(session_id=sid, prompt=[text_block("sleep")])
            )
            if during == "bash":
                await wait_until(lambda: len(pids_in(pids_file)) == 2, TIMEOUT)
                pids = pids_in(pids_file)
            else:
                await wait_until(lambda: any(r.stalled for r in fake_llm.requests), TIMEOUT)
    # leaving the context closed stdin, then the connection: the prompt is abandoned
    with contextlib.suppress(ConnectionError, asyncio.CancelledError):
        await prompt
    agent.assert_clean_exit()
    assert "event store is closed" not in agent.log()
    for pid in pids:
        await wait_until(lambda pid=pid: not exists(pid), TIMEOUT)
    # the turn recorded its end: a new process loads the session and can go on with it
    fake_llm.set_script({"turns": [{"text": "back again"}]})
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp2.log") as again:
        async with asyncio.timeout(TIMEOUT):
            await again.conn.load_session(cwd=str(ws), session_id=sid, mcp_servers=[])
            answer = await again.conn.prompt(session_id=sid, prompt=[text_block("go on")])
        assert answer.stop_reason == "end_turn", again.log()
        if during == "bash":
            failed = [
                u
                for u in again.client.of_kind(sid, "tool_call_update")
                if u.get("status") == "failed"
            ]
            assert failed, again.client.updates.get(sid)
    again.assert_clean_exit()
