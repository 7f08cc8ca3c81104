"""The completion model and engines from the loaded settings: which model
(``agents.completion.model``, else ``small_model``, else ``model``), in which form (fill in the
middle through ``/v1/completions`` when ``completion.fim`` says so or the provider is
``openai-compatible``; a chat model otherwise), and the engines' limits."""

from __future__ import annotations

from collections.abc import Mapping

from lsp_agent.auth.keys import ProviderKeys
from lsp_agent.completion.budget import TokenCap
from lsp_agent.completion.model import ChatModel, CompletionModel, FimModel
from lsp_agent.config.resolve import BASE_URL_ENV, agent_model_ref, resolve_model
from lsp_agent.config.settings import Settings
from lsp_agent.core.interfaces import Clock
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.providers import PROVIDER_KINDS, make_provider

OPENAI_URL = "https://api.openai.com/v1"


def completion_model(
    settings: Settings, env: Mapping[str, str], secrets: SecretFilter
) -> CompletionModel:
    """Raises :class:`~lsp_agent.core.errors.ConfigError` for a bad model reference."""
    resolved = resolve_model(settings, agent_model_ref(settings, "completion"))
    fim = settings.completion.fim
    if fim is None:
        fim = resolved.provider_type == "openai-compatible"
    if fim:
        base_url = resolved.base_url or env.get(BASE_URL_ENV[resolved.provider_type], "")
        api_key_env = resolved.api_key_env or PROVIDER_KINDS[resolved.provider_type].key_env
        return FimModel(
            model=resolved.info.model,
            base_url=base_url or OPENAI_URL,
            api_key_env=api_key_env,
            env=env,
        )
    keys = ProviderKeys(env, secrets=secrets)
    provider = make_provider(
        resolved.provider_type,
        name=resolved.info.provider,
        base_url=resolved.base_url,
        api_key_env=resolved.api_key_env,
        env=env,
        stored_key=keys.stored,
    )
    return ChatModel(provider=provider, model=resolved.info.model)


def token_cap(settings: Settings, clock: Clock) -> TokenCap:
    return TokenCap(settings.completion.max_tokens_per_hour, clock.now)
