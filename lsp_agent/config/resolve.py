"""Which model and provider a ``provider/model`` reference means: the catalog's facts, the
configuration's overrides, the endpoint and the key variable (a :class:`ResolvedModel`); which
model an agent (``agents.<name>``) is configured with, and the cheapest model of a provider
that titles and summaries fall back to."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from lsp_agent.config import catalog
from lsp_agent.config.settings import (
    AGENT_NAMES,
    MODEL_ENV,
    InvalidConfig,
    ModelNotConfigured,
    Settings,
)
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import SIDE_AGENTS as CORE_SIDE_AGENTS
from lsp_agent.providers import PROVIDER_KINDS, ProviderType

__all__ = [
    "BASE_URL_ENV",
    "BUILTIN_PROVIDERS",
    "DEFAULT_API_KEY_ENV",
    "SIDE_AGENTS",
    "ResolvedModel",
    "agent_model_ref",
    "cheapest_model",
    "check_agent_models",
    "ignored_settings",
    "resolve_model",
]


#: Provider names that need no ``providers`` entry, and their (fixed) type.
BUILTIN_PROVIDERS: Final[Mapping[str, ProviderType]] = {
    kind: kind for kind, facts in PROVIDER_KINDS.items() if facts.builtin
}
#: The variable holding the key when a provider names no ``api_key_env``.
DEFAULT_API_KEY_ENV: Final[Mapping[ProviderType, str | None]] = {
    kind: facts.key_env for kind, facts in PROVIDER_KINDS.items()
}
#: The variable giving the endpoint when a provider has no ``base_url``.
BASE_URL_ENV: Final[Mapping[ProviderType, str]] = {
    kind: facts.base_url_env for kind, facts in PROVIDER_KINDS.items()
}


# ---------------------------------------------------------------------------------------------
# Model resolution


@attrs.frozen(kw_only=True)
class ResolvedModel:
    """What a provider needs to call a model: limits/prices, wire type, endpoint, key NAME."""

    info: ModelInfo
    provider_type: ProviderType
    #: None = the SDK's default endpoint
    base_url: str | None
    #: the environment variable holding the key; None = send no key (local servers)
    api_key_env: str | None

    @property
    def ref(self) -> str:
        return self.info.ref


def resolve_model(settings: Settings, ref: str | None = None) -> ResolvedModel:
    """Resolve ``provider/model`` (default ``settings.model``).

    Raises :class:`ModelNotConfigured` when there is no model at all, :class:`ConfigError`
    for a malformed reference or an unknown provider — an :class:`InvalidConfig` naming the
    layer and the key ``model`` when the reference is the configured one.
    """
    if ref is not None:
        return _resolve(settings, ref)
    if settings.model is None or not settings.model.strip():
        raise ModelNotConfigured()
    try:
        return _resolve(settings, settings.model)
    except ConfigError as error:
        raise _named(settings, "model", error) from error


def _named(settings: Settings, key: str, error: ConfigError) -> InvalidConfig:
    """``error`` about the value of ``key`` as the mistake of the layer that set it."""
    source = settings.origin(key)
    if source == MODEL_ENV:  # the variable is the key
        return InvalidConfig(source, str(error))
    return InvalidConfig(source, f"key {key!r}: {error}", key=key)


def _resolve(settings: Settings, ref: str) -> ResolvedModel:
    provider, sep, model = ref.partition("/")
    if not sep or not provider or not model:
        raise ConfigError(
            f"invalid model {ref!r}: expected 'provider/model', e.g. 'anthropic/claude-sonnet-4-5'"
        )
    config = settings.providers.get(provider)
    provider_type: ProviderType
    if provider in BUILTIN_PROVIDERS:
        provider_type = BUILTIN_PROVIDERS[provider]
    elif config is None:
        raise ConfigError(f"unknown provider {provider!r} (configure it under providers)")
    elif config.type is None:
        raise ConfigError(f"provider {provider!r} has no type (set providers.{provider}.type)")
    else:
        provider_type = config.type

    info: ModelInfo | None = None
    catalog_provider = PROVIDER_KINDS[provider_type].catalog
    if catalog_provider is not None:
        info = catalog.lookup(catalog_provider, model)
    if info is None:
        info = ModelInfo(
            provider=provider,
            model=model,
            context_window=catalog.UNKNOWN_CONTEXT_WINDOW,
            max_output=catalog.UNKNOWN_MAX_OUTPUT,
        )
    else:
        info = attrs.evolve(info, provider=provider, model=model)
    override = config.models.get(model) if config is not None else None
    if override is not None:
        info = attrs.evolve(info, **override.model_dump(exclude_none=True))

    base_url = config.base_url if config is not None else None
    if base_url is None:
        base_url = settings.env_base_urls.get(BASE_URL_ENV[provider_type])
    if base_url is None and PROVIDER_KINDS[provider_type].needs_base_url:
        raise ConfigError(
            f"provider {provider!r} ({provider_type}) has no endpoint: "
            f"set providers.{provider}.base_url"
        )
    api_key_env = config.api_key_env if config is not None else None
    if api_key_env is None:
        api_key_env = DEFAULT_API_KEY_ENV[provider_type]
    return ResolvedModel(
        info=info, provider_type=provider_type, base_url=base_url, api_key_env=api_key_env
    )


# ---------------------------------------------------------------------------------------------
# Agents

#: The agents whose requests are side jobs: ``small_model`` is their fallback.
SIDE_AGENTS: Final = CORE_SIDE_AGENTS


def agent_model_ref(settings: Settings, agent: str) -> str | None:
    """``agents.<agent>.model``; for ``title`` and ``summary`` else ``small_model``; None
    when nothing is configured (the agent's default then applies: docs/configuration.md)."""
    ref = settings.agents.of(agent).model
    if ref is None and agent in SIDE_AGENTS:
        ref = settings.small_model
    return ref


def check_agent_models(settings: Settings) -> None:
    """Resolve every configured agent model once, so a bad reference is a
    :class:`ConfigError` at start-up rather than a surprise in the middle of a session."""
    keys = {f"agents.{agent}.model": settings.agents.of(agent).model for agent in AGENT_NAMES}
    keys["small_model"] = settings.small_model
    for key, ref in keys.items():
        if ref is not None:
            try:
                resolve_model(settings, ref)
            except ConfigError as error:
                raise _named(settings, key, error) from error


def ignored_settings(settings: Settings) -> list[str]:
    """Warnings for reasoning settings the model's provider ignores: an OpenAI-compatible
    server gets no reasoning parameter (``providers/openai.py``), so ``reasoning_effort`` or
    ``thinking.enabled`` there changes nothing (docs/configuration.md)."""
    warnings: list[str] = []
    wanted = [
        (f"agents.{agent}.reasoning_effort", agent_model_ref(settings, agent) or settings.model)
        for agent in AGENT_NAMES
        if settings.agents.of(agent).reasoning_effort is not None
    ]
    if settings.thinking.enabled:
        wanted.append(("thinking.enabled", settings.model))
    for key, ref in wanted:
        try:
            model = resolve_model(settings, ref) if ref else None
        except ConfigError:
            continue  # reported as an error where the model is checked
        if model is not None and not PROVIDER_KINDS[model.provider_type].takes_reasoning:
            warnings.append(
                f"{settings.origin(key)}: key {key!r} is ignored: {model.ref} is served by "
                f"an {model.provider_type} provider, which is sent no reasoning setting"
            )
    return warnings


def cheapest_model(
    settings: Settings, ref: str, *, min_context_window: int = 0
) -> ResolvedModel | None:
    """The cheapest priced model of ``ref``'s provider (input + output list price per 1M
    tokens; ties broken by name) that does not reason unasked (``ModelInfo.reasons_unasked``)
    and has at least ``min_context_window`` tokens of context.

    A built-in provider's candidates are the catalog's models of its kind; any provider's
    also the models configured under ``providers.<name>.models`` (their overrides apply).
    None when no candidate has prices, or ``ref`` does not resolve.
    """
    try:
        session = resolve_model(settings, ref)
    except ConfigError:
        return None
    name = session.info.provider
    models: list[str] = []
    kind = PROVIDER_KINDS[session.provider_type].catalog
    if name in BUILTIN_PROVIDERS and kind is not None:
        models.extend(info.model for info in catalog.CATALOG.values() if info.provider == kind)
    config = settings.providers.get(name)
    if config is not None:
        models.extend(config.models)
    best: tuple[float, str, ResolvedModel] | None = None
    for model in dict.fromkeys(models):
        candidate = resolve_model(settings, f"{name}/{model}")
        info = candidate.info
        if info.input_price is None or info.output_price is None:
            continue
        if info.context_window < min_context_window or info.reasons_unasked:
            continue
        key = (info.input_price + info.output_price, info.ref)
        if best is None or key < best[:2]:
            best = (*key, candidate)
    return best[2] if best is not None else None
