"""Switching a session to a model of another provider, through the real composition root."""

from __future__ import annotations

import os
from pathlib import Path

from lsp_agent.app import build_app
from lsp_agent.config.resolve import resolve_model
from lsp_agent.config.settings import Settings
from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.fake_llm import FakeLLMServer

KEY = "sk-test-config-e2e"


async def test_a_session_switches_from_anthropic_to_openai(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = {"turns": [{"text": "from claude"}, {"text": "from gpt"}]}
    async with FakeLLMServer(script) as server:
        env = {
            "LSP_AGENT_DATA_DIR": os.environ["LSP_AGENT_DATA_DIR"],
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": KEY,
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": KEY,
        }
        settings = Settings.model_validate(
            {"model": "anthropic/claude-test", "snapshots": False, "title": {"enabled": False}}
        )
        store = await open_store(tmp_path / "data")
        try:
            app = await build_app(
                settings=settings,
                model=resolve_model(settings),
                env=env,
                editor=RecordingEditor(),
                workspace=workspace,
                store=store,
            )
            sessions = app.sessions
            sid = await sessions.create(workspace_folder=str(workspace))
            choices = await sessions.config_options(sid)
            refs = [c.ref for c in choices.models]
            assert choices.model == "anthropic/claude-test"
            assert {"anthropic/claude-test", "openai/gpt-4o-mini"} <= set(refs)
            assert KEY not in repr(choices)
            await sessions.admit(sid, [{"type": "text", "text": "one"}])
            assert (await sessions.run_turn(sid)).stop_reason == "end_turn"

            await sessions.set_config(sid, "model", "openai/gpt-4o-mini")
            await sessions.admit(sid, [{"type": "text", "text": "two"}])
            assert (await sessions.run_turn(sid)).stop_reason == "end_turn"
        finally:
            await store.close()
        first, second = [r for r in server.requests if r.path.endswith(("messages", "completions"))]
        assert first.path.endswith("/messages")
        assert first.body["model"] == "claude-test"
        assert second.path.endswith("/chat/completions")
        assert second.body["model"] == "gpt-4o-mini"
        # the whole conversation so far went to the new provider
        contents = [m.get("content") for m in second.body["messages"] if m["role"] != "system"]
        assert "from claude" in repr(contents)
