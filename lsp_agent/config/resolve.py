"""Which model and provider a ``provider/model`` reference means: the catalog's facts, the
configuration's overrides, the endpoint and the key variable (a :class:`ResolvedModel`)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

import attrs

from lsp_agent.config import catalog
from lsp_agent.config.settings import ModelNotConfigured, Settings
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.models import ModelInfo
from lsp_agent.providers import PROVIDER_KINDS, ProviderType

__all__ = [
    "BASE_URL_ENV",
    "BUILTIN_PROVIDERS",
    "DEFAULT_API_KEY_ENV",
    "ResolvedModel",
    "resolve_model",
    "resolve_small_model",
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
    for a malformed reference or an unknown provider.
    """
    if ref is None:
        ref = settings.model
    if ref is None or not ref.strip():
        raise ModelNotConfigured()
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


def resolve_small_model(settings: Settings) -> ResolvedModel:
    """The model for titles and summaries: ``small_model``, else the main model."""
    return resolve_model(settings, settings.small_model or settings.model)
