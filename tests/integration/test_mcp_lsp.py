"""``agent/mcp/list`` over ``lsp-agent serve``: every configured server with its status, the
tools it offers and its error; a server that cannot start is a ``window/logMessage`` warning;
shutting the server down stops the MCP servers it started (docs/mcp.md, protocol.md §10)."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import agent_client
from tests.support.mcp_servers import TOOL_NAMES, stdio_command
from tests.support.provider_env import provider_env
from tests.support.user_config import write_user_config

KEY = "sk-mcp-lsp-SECRET-5521"


def _gone(pid: int, within: float = 15.0) -> bool:
    deadline = time.monotonic() + within
    while time.monotonic() < deadline:
        try:
            state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
        except FileNotFoundError:
            return True
        if state in ("Z", "X"):
            return True
        time.sleep(0.05)
    return False


async def test_mcp_list_reports_each_server_and_shutdown_stops_them(
    workspace: Path, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    pid_file = tmp_path / "probe.pid"
    write_user_config(
        {
            "model": "anthropic/claude-test",
            "mcp": {
                "probe": {"type": "local", "command": stdio_command(pid_file)},
                "ghost": {"type": "local", "command": ["no-such-mcp-server-91c2"]},
                "off": {"type": "local", "command": ["unused"], "enabled": False},
            },
        }
    )
    env = {**os.environ, **provider_env(fake_llm, KEY)}
    async with agent_client(env=env, folders=[workspace]) as client:
        servers: dict[str, dict[str, object]] = {}
        for _ in range(200):  # servers start in the background
            result = await client.request("agent/mcp/list", {})
            servers = {s["name"]: s for s in result["servers"]}
            if (
                servers["probe"]["status"] != "starting"
                and servers["ghost"]["status"] != "starting"
            ):
                break
            await asyncio.sleep(0.1)
        assert list(servers) == ["probe", "ghost", "off"]
        assert servers["probe"]["status"] == "connected"
        assert servers["probe"]["tools"] == [f"probe_{name}" for name in TOOL_NAMES]
        assert servers["ghost"]["status"] == "failed"
        assert "no-such-mcp-server-91c2" in str(servers["ghost"]["error"])
        assert servers["off"] == {"name": "off", "status": "disabled", "tools": []}
        logged = [params.message for params in client.client.log_messages]
        assert any('"ghost" could not start' in line for line in logged), logged
        pid = int(pid_file.read_text())
    assert await asyncio.to_thread(_gone, pid), "serve left the MCP server running"
