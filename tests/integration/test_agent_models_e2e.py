"""A model per agent through the real composition root and the real SDKs, against the fake
LLM, which logs the model named in each request body."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from lsp_agent.app import AgentInputs, load_agent
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.fake_llm import FakeLLMServer, RequestRecord
from tests.support.provider_env import provider_env

KEY = "sk-test-agent-models"


def model_calls(server: FakeLLMServer) -> list[RequestRecord]:
    return [r for r in server.requests if r.path.endswith("/messages")]


async def run_once(
    workspace: Path, server: FakeLLMServer, config: dict[str, Any], prompt: str
) -> str:
    env = {
        "LSP_AGENT_DATA_DIR": os.environ["LSP_AGENT_DATA_DIR"],
        "HOME": os.environ["HOME"],
        **provider_env(server, KEY),
    }
    options = {"model": "anthropic/claude-main", "snapshots": False, **config}
    inputs = AgentInputs(workspace=workspace, env=env, init_options=options)
    app = await load_agent(inputs, editor=RecordingEditor())
    try:
        sid = await app.sessions.create(workspace_folder=str(workspace))
        await app.sessions.admit(sid, [{"type": "text", "text": prompt}])
        assert (await app.sessions.run_turn(sid)).stop_reason == "end_turn"
        await app.sessions.drain(timeout=10)
        info = await app.store.session(sid)
        assert info is not None
        return info.title
    finally:
        await app.aclose()


async def test_the_title_goes_to_the_title_model_and_the_loop_does_not(workspace: Path) -> None:
    script = {"turns": [{"text": "the answer"}], "side_text": "Title from the title model"}
    async with FakeLLMServer(script) as server:
        config = {"agents": {"title": {"model": "anthropic/claude-title"}}}
        title = await run_once(workspace, server, config, "what is x?")
    assert title == "Title from the title model"
    calls = model_calls(server)
    side = [r.body["model"] for r in calls if r.turn == "side"]
    loop = [r.body["model"] for r in calls if r.turn != "side"]
    assert side == ["claude-title"]
    assert loop == ["claude-main"]
    (title_call,) = [r for r in calls if r.turn == "side"]
    assert "tools" not in title_call.body


async def test_the_title_defaults_to_the_providers_cheapest_catalog_model(
    workspace: Path,
) -> None:
    async with FakeLLMServer({"turns": [{"text": "the answer"}]}) as server:
        await run_once(workspace, server, {}, "what is x?")
    calls = model_calls(server)
    assert [r.body["model"] for r in calls if r.turn == "side"] == ["claude-3-5-haiku"]
    assert [r.body["model"] for r in calls if r.turn != "side"] == ["claude-main"]


async def test_a_subagent_asks_the_task_model(workspace: Path) -> None:
    task = {
        "name": "task",
        "input": {"description": "look", "prompt": "find x", "subagent_type": "explore"},
    }
    script = {
        "turns": [
            {"tool_calls": [task]},
            {"text": "x is in a.py"},  # the child's answer
            {"text": "done"},
        ]
    }
    async with FakeLLMServer(script) as server:
        config = {
            "title": {"enabled": False},
            "agents": {"task": {"model": "anthropic/claude-task"}},
        }
        await run_once(workspace, server, config, "where is x?")
    calls = model_calls(server)
    assert [r.turn for r in calls] == [0, 1, 2]
    assert [r.body["model"] for r in calls] == ["claude-main", "claude-task", "claude-main"]
    assert "x is in a.py" in str(calls[2].body["messages"])


async def test_a_compaction_asks_the_summary_model(workspace: Path) -> None:
    script = {"turns": [{"text": "a long answer " * 40}], "side_text": "## Objective\n- x"}
    async with FakeLLMServer(script) as server:
        env = {
            "LSP_AGENT_DATA_DIR": os.environ["LSP_AGENT_DATA_DIR"],
            "HOME": os.environ["HOME"],
            **provider_env(server, KEY),
        }
        options = {
            "model": "anthropic/claude-main",
            "snapshots": False,
            "title": {"enabled": False},
            "compaction": {"keep_recent_tokens": 1},
            "agents": {"summary": {"model": "anthropic/claude-summary", "max_tokens": 1500}},
        }
        app = await load_agent(
            AgentInputs(workspace=workspace, env=env, init_options=options),
            editor=RecordingEditor(),
        )
        try:
            sid = await app.sessions.create(workspace_folder=str(workspace))
            await app.sessions.admit(sid, [{"type": "text", "text": "tell me"}])
            assert (await app.sessions.run_turn(sid)).stop_reason == "end_turn"
            assert await app.sessions.compact(sid)
        finally:
            await app.aclose()
    calls = model_calls(server)
    assert [r.body["model"] for r in calls if r.turn != "side"] == ["claude-main"]
    (summary,) = [r for r in calls if r.turn == "side"]
    assert (summary.body["model"], summary.body["max_tokens"]) == ("claude-summary", 1500)
