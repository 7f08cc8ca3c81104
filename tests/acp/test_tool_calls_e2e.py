"""What an ACP client is shown of tool calls and failed turns, against the real ``lsp-agent
acp`` (issue 32 §5, §6): a call is announced once, with its input, title and ``kind``; a
command's ask shows the command, not only the model's description of it; a command run in
the client's terminal has its output in the tool content too (clients that render no
terminal show that); a turn that fails puts its error in the conversation as well as in the
prompt's error response."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from acp import text_block
from acp.exceptions import RequestError

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, RecordingClient, capabilities, spawn_agent
from tests.support.acp_terminal_client import SpawningTerminals


class TerminalClient(SpawningTerminals, RecordingClient):
    """The recording client that also hosts terminals."""


def calls_of(client: RecordingClient, sid: str) -> list[dict[str, Any]]:
    return [
        u
        for u in client.updates.get(sid, [])
        if u["sessionUpdate"] in ("tool_call", "tool_call_update")
    ]


def texts(update: dict[str, Any]) -> list[str]:
    return [
        block["content"]["text"]
        for block in update.get("content", [])
        if block.get("type") == "content"
    ]


async def test_a_call_is_announced_once_with_its_input_kind_and_the_command_in_the_ask(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    (ws / "notes.txt").write_text("keep me\n")
    (ws / "a.txt").write_text("hello\n")
    rm = {"name": "bash", "input": {"command": "rm notes.txt", "description": "Run hello.py"}}
    read = {"name": "read", "input": {"file_path": str(ws / "a.txt")}}
    fake_llm.set_script({"turns": [{"tool_calls": [read, rm]}, {"text": "Done."}]})
    client = RecordingClient(answers=[("reject_once", "do not delete it")])
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log", client=client) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn", agent.log()
    agent.assert_clean_exit()

    # the ask names the command itself; the model's description is there too
    [asked] = client.permissions
    assert "rm notes.txt" in asked.tool_call["title"]
    assert asked.tool_call["kind"] == "execute"
    assert (ws / "notes.txt").exists()

    updates = calls_of(client, sid)
    announces = [u for u in updates if u["sessionUpdate"] == "tool_call"]
    assert len(announces) == 2, updates
    by_id = {u["toolCallId"]: u for u in announces}
    # every call is announced once, complete: never a first announce with empty input
    for first in announces:
        assert first["rawInput"], first
    kinds = sorted(u["kind"] for u in by_id.values())
    assert kinds == ["execute", "read"]
    [bash_call] = [u for u in announces if u["kind"] == "execute"]
    assert bash_call["rawInput"]["command"] == "rm notes.txt"
    # no update before a call's announce
    seen: set[str] = set()
    for update in updates:
        if update["sessionUpdate"] == "tool_call_update":
            assert update["toolCallId"] in seen, updates
        seen.add(update["toolCallId"])


async def test_a_command_in_the_clients_terminal_has_its_output_in_the_content_too(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    call = {"name": "bash", "input": {"command": "echo tests-failed-here; exit 3"}}
    fake_llm.set_script({"turns": [{"tool_calls": [call]}, {"text": "It failed."}]})
    client = TerminalClient(base_env=dict(os.environ), kill_grace=3)
    async with spawn_agent(
        acp_env,
        cwd=ws,
        stderr=tmp_path / "acp.log",
        client=client,
        offers=capabilities(terminal=True),
    ) as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("run")])
        assert answer.stop_reason == "end_turn", agent.log()
    agent.assert_clean_exit()

    [terminal] = client.terminals.values()
    [last] = [u for u in calls_of(client, sid) if u.get("status") == "completed"]
    assert {"type": "terminal", "terminalId": terminal.terminal_id} in last["content"]
    [output] = texts(last)
    assert "tests-failed-here" in output
    assert "Exit code: 3" in output


async def test_a_failed_turn_puts_its_error_in_the_conversation(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"error": "auth"}]})
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        client = agent.client
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            with pytest.raises(RequestError) as failed:
                await agent.conn.prompt(session_id=sid, prompt=[text_block("hi")])
    agent.assert_clean_exit()

    assert failed.value.code == -32000  # authentication required: the client may ask for a key
    said = "".join(u["content"]["text"] for u in client.of_kind(sid, "agent_message_chunk"))
    assert "401" in said
    assert "ANTHROPIC_API_KEY" in said
