"""``agent/config/options``: the pickers' choices before a session — the options a new session
starts with, from the server's one table of modes and its configuration, creating nothing."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.lsp_client import agent_client, agent_options


def option(options: list[dict[str, Any]], config_id: str) -> dict[str, Any]:
    return next(o for o in options if o["configId"] == config_id)


async def test_config_options_before_a_session_are_the_ones_a_new_session_starts_with(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    async with agent_client(env=server_env, folders=[workspace]) as client:
        before = (await client.request("agent/config/options", {}))["configOptions"]
        listed = await client.request("agent/session/list", {})
        assert listed["sessions"] == []  # asking created no session
        modes = option(before, "mode")
        assert [o["value"] for o in modes["options"]] == ["build", "plan"]
        assert all(o.get("description") for o in modes["options"])
        assert modes["currentValue"] == "build"
        session = await client.request("agent/session/new", {})
        assert session["configOptions"] == before


async def test_config_options_follow_the_configured_mode(
    workspace: Path, fake_llm: FakeLLMServer, server_env: dict[str, str]
) -> None:
    options = agent_options(config={"mode": "plan"})
    async with agent_client(env=server_env, folders=[workspace], options=options) as client:
        before = (await client.request("agent/config/options", {}))["configOptions"]
        assert option(before, "mode")["currentValue"] == "plan"
        assert option(before, "model")["currentValue"] == "anthropic/claude-test"
