"""Session options over ACP (issue 23 §8): ``configOptions`` with mode, model and thought
level; ``session/set_config_option`` changes one (a ``config_option_update`` follows) and the
next model request shows it; ``session/set_mode`` is the legacy way to the mode."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from acp import text_block

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.acp_client import TIMEOUT, spawn_agent


def options_by_id(options: Any) -> dict[str, dict[str, Any]]:
    dumped = [
        o.model_dump(mode="json", by_alias=True, exclude_none=True)
        if hasattr(o, "model_dump")
        else o
        for o in options
    ]
    return {o["id"]: o for o in dumped}


async def test_the_thought_level_and_the_mode_are_options_the_next_request_follows(
    ws: Path, tmp_path: Path, acp_env: dict[str, str], fake_llm: FakeLLMServer
) -> None:
    fake_llm.set_script({"turns": [{"text": "thinking hard"}, {"text": "planning"}]})
    async with spawn_agent(acp_env, cwd=ws, stderr=tmp_path / "acp.log") as agent:
        async with asyncio.timeout(TIMEOUT):
            session = await agent.conn.new_session(cwd=str(ws), mcp_servers=[])
            sid = session.session_id
            offered = options_by_id(session.config_options)
            assert {key: o.get("category") for key, o in offered.items()} == {
                "mode": "mode",
                "model": "model",
                "thought_level": "thought_level",
            }
            levels = [choice["value"] for choice in offered["thought_level"]["options"]]
            assert {"off", "low", "medium", "high"} <= set(levels)

            changed = await agent.conn.set_config_option(
                config_id="thought_level", session_id=sid, value="high"
            )
            assert options_by_id(changed.config_options)["thought_level"]["currentValue"] == "high"
            await agent.conn.prompt(session_id=sid, prompt=[text_block("think")])

            await agent.conn.set_session_mode(session_id=sid, mode_id="plan")
            await agent.client.wait_for(
                lambda: bool(agent.client.of_kind(sid, "current_mode_update"))
            )
            await agent.conn.prompt(session_id=sid, prompt=[text_block("plan")])
        updates = agent.client.of_kind(sid, "config_option_update")
        assert updates
        current = options_by_id(updates[-1]["configOptions"])
        assert current["mode"]["currentValue"] == "plan"
        assert current["thought_level"]["currentValue"] == "high"
        [mode_update] = agent.client.of_kind(sid, "current_mode_update")
        assert mode_update["currentModeId"] == "plan"
    agent.assert_clean_exit()

    first, second = [r.body for r in fake_llm.requests if r.turn != "side"]
    assert first["thinking"] == {"type": "enabled", "budget_tokens": 16_000}
    assert second["thinking"] == {"type": "enabled", "budget_tokens": 16_000}
    tools_first = {tool["name"] for tool in first["tools"]}
    tools_second = {tool["name"] for tool in second["tools"]}
    assert "edit" in tools_first
    assert "edit" not in tools_second  # plan mode offers no edit tools
