"""MCP servers over LSP (issue 20): ``agent/mcp/list`` gives the panels each configured server
with its status and tools, a server that cannot start with its error (also noted to a session
in ``agent/session/update``); a call to a server's tool asks with the permission ``mcp`` and
the pattern ``<server>:<tool>``."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import AgentClient, agent_client, allow_once
from tests.support.mcp_servers import MISSING_COMMAND, TOOL_NAMES, stdio_command
from tests.support.user_config import write_user_config


def configure(tmp_path: Path) -> None:
    write_user_config(
        {
            "mcp": {
                "probe": {"type": "local", "command": stdio_command(tmp_path / "probe.pid")},
                "ghostsrv": {"type": "local", "command": [MISSING_COMMAND]},
            }
        }
    )


def tool_names(entry: dict[str, Any]) -> set[str]:
    return set(entry["tools"])


async def settled_servers(client: AgentClient, timeout: float = 60.0) -> dict[str, Any]:
    """``agent/mcp/list`` once no server is still starting (they start in the background)."""
    deadline = time.monotonic() + timeout
    while True:
        listed = await client.request("agent/mcp/list", {})
        servers = {entry["name"]: entry for entry in listed["servers"]}
        if all(entry["status"] != "starting" for entry in servers.values()):
            return servers
        assert time.monotonic() < deadline, f"servers still starting after {timeout} s: {listed}"
        await asyncio.sleep(0.2)


async def test_mcp_list_gives_each_server_with_its_status_and_tools(
    workspace: Path, tmp_path: Path, server_env: dict[str, str]
) -> None:
    configure(tmp_path)
    async with agent_client(env=server_env, folders=[workspace]) as client:
        servers = await settled_servers(client)
    assert list(servers) == ["probe", "ghostsrv"]  # in config order
    probe, ghost = servers["probe"], servers["ghostsrv"]
    assert probe["status"] == "connected", probe
    # the names offered to the model (docs/protocol.md "agent/mcp/list")
    assert tool_names(probe) == {f"probe_{name}" for name in TOOL_NAMES}, probe
    assert not probe.get("error"), probe
    assert ghost["status"] == "failed", ghost
    assert tool_names(ghost) == set(), ghost
    assert MISSING_COMMAND in ghost["error"], ghost


async def test_a_server_tool_asks_with_permission_mcp_and_a_server_colon_tool_pattern(
    workspace: Path, tmp_path: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    configure(tmp_path)
    fake_llm.set_script(
        [
            {"tool_calls": [{"name": "probe_echo", "input": {"text": "over lsp"}}]},
            {"text": "echoed"},
        ]
    )
    async with agent_client(env=server_env, folders=[workspace]) as client:
        await settled_servers(client)
        client.permission_answers.append(allow_once())
        session = await client.new_session()
        await client.prompt(session, "echo something")
        assert (await client.wait_idle(session, timeout=60))["stopReason"] == "end_turn"
        [asked] = client.permission_requests
    assert asked["permission"] == "mcp"
    assert "probe:echo" in asked["patterns"]
    second = json.dumps(fake_llm.model_bodies()[1]["messages"][-1])
    assert "over lsp" in second


async def test_a_server_that_cannot_start_is_noted_in_the_session_s_updates(
    workspace: Path, tmp_path: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    # issue 20: a failed server gives "one status line (doctor, `agent/session/update` state
    # note, stderr for run)"
    configure(tmp_path)
    fake_llm.set_script([{"text": "hello"}])
    async with agent_client(env=server_env, folders=[workspace]) as client:
        await settled_servers(client)
        session = await client.new_session()
        await client.prompt(session, "hi")
        assert (await client.wait_idle(session, timeout=60))["stopReason"] == "end_turn"
        updates = client.session_updates(session)
    noted = [u["update"] for u in updates if "ghostsrv" in json.dumps(u["update"])]
    assert len(noted) == 1, [u["update"].get("sessionUpdate") for u in updates]
