"""The composition root's model catalog: what a session may switch to, and how it is reached."""

from __future__ import annotations

from typing import Any

import pytest

from lsp_agent.config.models import ConfiguredModels
from lsp_agent.config.resolve import resolve_model
from lsp_agent.config.settings import Settings
from lsp_agent.core.errors import InvalidConfigValue

KEY = "sk-test-secret-value"


def catalog(env: dict[str, str], **config: Any) -> ConfiguredModels:
    settings = Settings.model_validate({"model": "anthropic/claude-sonnet-4-5", **config})
    return ConfiguredModels(settings, env, resolve_model(settings))


def test_offered_is_the_configured_model_and_the_catalog_of_providers_with_a_key() -> None:
    models = catalog({"ANTHROPIC_API_KEY": KEY})
    refs = [c.ref for c in models.offered()]
    assert refs == sorted(refs)
    assert "anthropic/claude-sonnet-4-5" in refs
    assert "anthropic/claude-haiku-4-5" in refs
    assert not any(ref.startswith("openai/") for ref in refs)
    sonnet = next(c for c in models.offered() if c.ref == "anthropic/claude-sonnet-4-5")
    assert sonnet.description == "200k context, $3 / $15 per 1M tokens in / out"
    assert all(KEY not in repr(c) for c in models.offered())


def test_without_keys_only_the_configured_model_is_offered() -> None:
    assert [c.ref for c in catalog({}).offered()] == ["anthropic/claude-sonnet-4-5"]


def test_configured_models_of_a_keyless_local_provider_are_offered() -> None:
    models = catalog(
        {},
        providers={
            "local": {
                "type": "openai-compatible",
                "base_url": "http://localhost:1234/v1",
                "models": {"qwen": {"context_window": 32000}},
            },
            "broken": {"type": "openai-compatible", "models": {"x": {}}},  # no endpoint
        },
    )
    offered = {c.ref: c for c in models.offered()}
    assert list(offered) == ["anthropic/claude-sonnet-4-5", "local/qwen"]
    assert offered["local/qwen"].description == "32k context"
    provider, info = models.resolve("local/qwen")
    assert provider.name == "local"
    assert info.context_window == 32000


def test_resolve_builds_one_provider_per_provider_and_refuses_unusable_refs() -> None:
    models = catalog({"ANTHROPIC_API_KEY": KEY})
    default, sonnet = models.resolve("anthropic/claude-sonnet-4-5")
    haiku_provider, haiku = models.resolve("anthropic/claude-haiku-4-5")
    assert haiku_provider is default
    assert (sonnet.model, haiku.model) == ("claude-sonnet-4-5", "claude-haiku-4-5")
    with pytest.raises(InvalidConfigValue, match="set OPENAI_API_KEY"):
        models.resolve("openai/gpt-5")
    with pytest.raises(InvalidConfigValue, match="unknown model 'nowhere/x'"):
        models.resolve("nowhere/x")


def test_the_configured_model_resolves_even_without_its_key() -> None:
    # the request itself then fails with the message naming the variable, as before
    provider, info = catalog({}).resolve("anthropic/claude-sonnet-4-5")
    assert provider.name == "anthropic"
    assert info.ref == "anthropic/claude-sonnet-4-5"


def test_a_key_set_later_makes_a_provider_usable() -> None:
    env: dict[str, str] = {}
    models = catalog(env)
    with pytest.raises(InvalidConfigValue):
        models.resolve("openai/gpt-5")
    env["OPENAI_API_KEY"] = KEY
    provider, _ = models.resolve("openai/gpt-5")
    assert provider.name == "openai"
    assert "openai/gpt-5" in [c.ref for c in models.offered()]
