"""Fixtures for end-to-end tests of ``lsp-agent serve``: the server's environment (the workspace
and the fake LLM come from ``tests/conftest.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer

KEY = "sk-lsp-test"


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
