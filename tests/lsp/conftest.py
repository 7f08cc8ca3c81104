"""Fixtures for end-to-end tests of ``lsp-agent serve``: the server's environment (the workspace
and the fake LLM come from ``tests/conftest.py``)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.provider_env import PASSED_ON, agent_env

KEY = "sk-lsp-test"


@pytest.fixture
def server_env(fake_llm: FakeLLMServer, isolated_home: Path) -> dict[str, str]:
    """The server's environment: isolated folders, the fake LLM as Anthropic."""
    return agent_env(
        fake_llm,
        KEY,
        keep=(*PASSED_ON, "SYSTEMROOT"),
        LSP_AGENT_LOG="INFO" if os.environ.get("LSP_AGENT_TEST_LOG") else "WARNING",
    )
