"""The models a session may switch to: the core's ``ModelCatalog`` port over the settings.

A reference resolves as the configuration resolves it (``settings.resolve_model``); the
provider behind it is built once and shared by every model of that provider. The list a
client shows holds the configured model and the models of providers that can be used now:
the built-in catalog's models of ``anthropic``/``openai`` when their key variable is set, and
the models configured under ``providers.<name>.models``. Key values are never read here,
only whether their variable is set or the keyring holds a key (``stored_key``).
"""

from __future__ import annotations

from collections.abc import Mapping

from lsp_agent.config.catalog import CATALOG
from lsp_agent.config.resolve import (
    BUILTIN_PROVIDERS,
    ResolvedModel,
    cheapest_model,
    resolve_model,
)
from lsp_agent.config.settings import Settings
from lsp_agent.core.errors import ConfigError, InvalidConfigValue
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.models import ModelChoice, ModelInfo
from lsp_agent.providers import StoredKey, make_provider

_ProviderKey = tuple[str, str, str | None, str | None]  # type, name, base url, key variable


class ConfiguredModels:
    """``offered()`` and ``resolve()`` for ``settings``; ``default`` is the configured model
    (and ``default_provider`` its provider, if one was built already)."""

    def __init__(
        self,
        settings: Settings,
        env: Mapping[str, str],
        default: ResolvedModel,
        default_provider: Provider | None = None,
        stored_key: StoredKey | None = None,
    ) -> None:
        self._settings = settings
        self._env = env
        self._default = default
        self._stored_key = stored_key
        self._providers: dict[_ProviderKey, Provider] = {}
        self._models: dict[str, tuple[Provider, ModelInfo]] = {}
        if default_provider is not None:
            self._providers[_key(default)] = default_provider
            self._models[default.ref] = (default_provider, default.info)

    def offered(self) -> list[ModelChoice]:
        """The configured model and the usable providers' models, sorted by reference."""
        choices = {self._default.ref: _choice(self._default.info)}
        for ref in self._candidates():
            if ref in choices:
                continue
            try:
                resolved = resolve_model(self._settings, ref)
            except ConfigError:
                continue
            if self._usable(resolved):
                choices[ref] = _choice(resolved.info)
        return [choices[ref] for ref in sorted(choices)]

    def resolve(self, ref: str) -> tuple[Provider, ModelInfo]:
        """The provider and model of ``ref``; ``InvalidConfigValue`` for a reference the
        configuration does not know, or whose provider's key variable is not set."""
        known = self._models.get(ref)
        if known is not None:
            return known
        try:
            resolved = resolve_model(self._settings, ref)
        except ConfigError as error:
            raise InvalidConfigValue(f"unknown model {ref!r}: {error}") from error
        if ref != self._default.ref and not self._usable(resolved):
            raise InvalidConfigValue(
                f"model {ref!r} cannot be used: set {resolved.api_key_env} to its API key"
            )
        key = _key(resolved)
        provider = self._providers.get(key)
        if provider is None:
            provider = make_provider(
                resolved.provider_type,
                name=resolved.info.provider,
                base_url=resolved.base_url,
                api_key_env=resolved.api_key_env,
                env=self._env,
                stored_key=self._stored_key,
            )
            self._providers[key] = provider
        self._models[ref] = (provider, resolved.info)
        return provider, resolved.info

    def cheapest(self, ref: str, *, min_context_window: int = 0) -> str | None:
        """``config.resolve.cheapest_model``'s reference, when its key can be used now."""
        found = cheapest_model(self._settings, ref, min_context_window=min_context_window)
        if found is None or not self._usable(found):
            return None
        return found.ref

    def _candidates(self) -> list[str]:
        refs = [ref for ref, info in CATALOG.items() if info.provider in BUILTIN_PROVIDERS]
        for name, config in self._settings.providers.items():
            refs.extend(f"{name}/{model}" for model in config.models)
        return refs

    def _usable(self, resolved: ResolvedModel) -> bool:
        variable = resolved.api_key_env
        if variable is None:  # a local server that needs no key
            return True
        if self._env.get(variable):
            return True
        stored = self._stored_key
        return stored is not None and bool(stored(resolved.info.provider, variable))


def _key(resolved: ResolvedModel) -> _ProviderKey:
    return (resolved.provider_type, resolved.info.provider, resolved.base_url, resolved.api_key_env)


def _choice(info: ModelInfo) -> ModelChoice:
    window = f"{info.context_window // 1000}k context"
    if info.input_price is None or info.output_price is None:
        return ModelChoice(ref=info.ref, name=info.ref, description=window)
    prices = f"${info.input_price:g} / ${info.output_price:g} per 1M tokens in / out"
    return ModelChoice(ref=info.ref, name=info.ref, description=f"{window}, {prices}")
