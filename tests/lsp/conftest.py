"""Fixtures for end-to-end tests of ``lsp-agent serve``: a workspace, the fake LLM, the env."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer

KEY = "sk-lsp-test"


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


@pytest.fixture
async def fake_llm() -> AsyncIterator[FakeLLMServer]:
    async with FakeLLMServer({"turns": []}) as server:
        yield server


@pytest.fixture
def server_env(fake_llm: FakeLLMServer, isolated_home: Path) -> dict[str, str]:
    """The server's environment: isolated folders, the fake LLM as Anthropic."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "SYSTEMROOT", "TMPDIR")
    }
    env.update(
        HOME=os.environ["HOME"],
        XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"],
        LSP_AGENT_DATA_DIR=os.environ["LSP_AGENT_DATA_DIR"],
        ANTHROPIC_BASE_URL=fake_llm.anthropic_base_url,
        ANTHROPIC_API_KEY=KEY,
        LSP_AGENT_MODEL="anthropic/claude-test",
        LSP_AGENT_LOG="INFO" if os.environ.get("LSP_AGENT_TEST_LOG") else "WARNING",
    )
    return env
