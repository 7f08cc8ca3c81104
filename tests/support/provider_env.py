"""The environment that points a provider at the fake LLM, and that of a started
``lsp-agent`` (``serve``, ``acp``) using it."""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Literal

from lsp_agent.testing.fake_llm import FakeLLMServer


def provider_env(
    server: FakeLLMServer, key: str, provider: Literal["anthropic", "openai"] | str = "anthropic"
) -> dict[str, str]:
    """``*_BASE_URL`` and ``*_API_KEY`` of ``provider`` (``anthropic`` or ``openai``)."""
    if provider == "anthropic":
        return {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": key}
    return {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": key}


PASSED_ON = ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "TMPDIR", "LSP_AGENT_NO_DAEMON")


def agent_env(
    server: FakeLLMServer, key: str, *, keep: Sequence[str] = PASSED_ON, **extra: str
) -> dict[str, str]:
    """A started agent's environment: ``keep`` of this one, the test's isolated folders
    (``isolated_home``), the fake LLM as Anthropic with ``claude-test``, then ``extra``."""
    env = {name: value for name, value in os.environ.items() if name in keep}
    env.update(
        HOME=os.environ["HOME"],
        XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"],
        LSP_AGENT_DATA_DIR=os.environ["LSP_AGENT_DATA_DIR"],
        **provider_env(server, key),
        LSP_AGENT_MODEL="anthropic/claude-test",
    )
    env.update(extra)
    return env
