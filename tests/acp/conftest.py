"""Fixtures of the ACP tests that start ``lsp-agent acp``: its environment (isolated folders
from tests/conftest.py, the fake LLM as Anthropic) and a real workspace path."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.provider_env import agent_env

KEY = "sk-acp-test-0123456789"
MODEL = "anthropic/claude-test"


@pytest.fixture
def ws(workspace: Path) -> Path:
    """The workspace by its real path (the paths the agent names are resolved ones)."""
    return Path(os.path.realpath(workspace))


@pytest.fixture
def acp_env(fake_llm: FakeLLMServer, isolated_home: Path) -> dict[str, str]:
    return agent_env(
        fake_llm,
        KEY,
        PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring",
        LSP_AGENT_LOG="INFO",
    )
