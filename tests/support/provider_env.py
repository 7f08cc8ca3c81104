"""The environment that points a provider at the fake LLM."""

from __future__ import annotations

from typing import Literal

from lsp_agent.testing.fake_llm import FakeLLMServer


def provider_env(
    server: FakeLLMServer, key: str, provider: Literal["anthropic", "openai"] | str = "anthropic"
) -> dict[str, str]:
    """``*_BASE_URL`` and ``*_API_KEY`` of ``provider`` (``anthropic`` or ``openai``)."""
    if provider == "anthropic":
        return {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": key}
    return {"OPENAI_BASE_URL": server.openai_base_url, "OPENAI_API_KEY": key}
