"""An MCP server the client passes in ``session/new`` (stdio, on the ``mcp`` package's own
server, tests/support/mcp_servers.py): started for that session, its tool offered to the
model as ``<server>_<tool>``, the call asked for and its result given to the model."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from acp import text_block
from acp.schema import EnvVariable, HttpHeader, HttpMcpServer, McpServerStdio

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.acp.conftest import KEY
from tests.support.acp_client import TIMEOUT, spawn_agent
from tests.support.acp_terminal_client import running
from tests.support.mcp_servers import start_http_server, stdio_command
from tests.support.waiting import wait_until

WORD = "mcp-probe-word-4411"


async def test_a_stdio_server_from_session_new_serves_the_models_call(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "probe_echo", "input": {"text": WORD}}]},
                {"tool_calls": [{"name": "probe_env", "input": {}}]},
                {"text": "The probe answered."},
            ]
        }
    )
    pid_file = tmp_path / "probe.pid"
    command, *args = stdio_command(pid_file)
    server = McpServerStdio(
        name="probe",
        command=command,
        args=args,
        env=[EnvVariable(name="PROBE_GIVEN", value="from-the-client")],
    )
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        async with asyncio.timeout(TIMEOUT):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("use the probe")])
        assert answer.stop_reason == "end_turn", agent.log()
        [ask, _] = agent.client.permissions
        assert ask.tool_call["title"]
    agent.assert_clean_exit()

    requests = [r for r in fake_llm.requests if r.turn != "side"]
    offered = {tool["name"] for tool in requests[0].body["tools"]}
    assert {"probe_echo", "probe_env"} <= offered
    echoed = json.dumps(requests[1].body["messages"][-1]["content"])
    assert WORD in echoed
    environment = json.dumps(requests[2].body["messages"][-1]["content"])
    assert "PROBE_GIVEN=from-the-client" in environment
    assert "ANTHROPIC_API_KEY" not in environment  # the agent's key stays out
    # the session's server ended with the agent
    pid = int(pid_file.read_text())
    await wait_until(lambda: not running(pid), TIMEOUT)


async def test_a_streamable_http_server_from_session_new_gets_its_headers(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script(
        {
            "turns": [
                {"tool_calls": [{"name": "remote_headers", "input": {}}]},
                {"text": "Seen the headers."},
            ]
        }
    )
    with start_http_server() as url:
        server = HttpMcpServer(
            name="remote",
            type="http",
            url=url,
            headers=[HttpHeader(name="X-Probe", value="from-the-client-77")],
        )
        async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
            async with asyncio.timeout(TIMEOUT):
                sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[server])).session_id
                answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("headers")])
            assert answer.stop_reason == "end_turn", agent.log()
        agent.assert_clean_exit()
    requests = [r for r in fake_llm.requests if r.turn != "side"]
    seen = json.dumps(requests[1].body["messages"][-1]["content"])
    assert "x-probe: from-the-client-77" in seen
    assert KEY not in seen
