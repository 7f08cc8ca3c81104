"""Fixtures of the ACP tests that start ``lsp-agent acp``: its environment (isolated folders
from tests/conftest.py, the fake LLM as Anthropic) and a real workspace path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer

KEY = "sk-acp-test-0123456789"
MODEL = "anthropic/claude-test"


@pytest.fixture
def ws(workspace: Path) -> Path:
    """The workspace by its real path (the paths the agent names are resolved ones)."""
    return Path(os.path.realpath(workspace))


@pytest.fixture
def acp_env(fake_llm: FakeLLMServer, isolated_home: Path) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR")
    }
    env.update(
        HOME=os.environ["HOME"],
        XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"],
        LSP_AGENT_DATA_DIR=os.environ["LSP_AGENT_DATA_DIR"],
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        ANTHROPIC_BASE_URL=fake_llm.anthropic_base_url,
        ANTHROPIC_API_KEY=KEY,
        LSP_AGENT_MODEL=MODEL,
        LSP_AGENT_LOG="INFO",
    )
    return env
