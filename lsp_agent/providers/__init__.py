"""Model providers behind the core's ``Provider`` port, and the factory that builds them.

Importing this package loads neither SDK: :func:`make_provider` imports only the module of the
provider type it builds. Endpoints come from the configuration or the SDKs' own variables
(``ANTHROPIC_BASE_URL``, ``OPENAI_BASE_URL``); keys are read from ``env`` on every request.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Final, Literal

import attrs

from lsp_agent.core.interfaces import Provider

if TYPE_CHECKING:
    import httpx2

__all__ = ["PROVIDER_KINDS", "ProviderKind", "ProviderType", "StoredKey", "make_provider"]

ProviderType = Literal["anthropic", "openai", "openai-compatible"]


@attrs.frozen(kw_only=True)
class ProviderKind:
    """What the configuration needs to know about a provider type (config/resolve.py reads
    these; adding a provider type is its module, an entry here and a branch in
    :func:`make_provider`)."""

    key_env: str | None
    """The variable holding the key when the configuration names no ``api_key_env``."""
    base_url_env: str
    """The variable giving the endpoint when the configuration has no ``base_url``."""
    catalog: str | None
    """Whose models the built-in catalog describes (None: every model is unknown to it)."""
    builtin: bool
    """A provider of this name needs no ``providers`` entry (its type is fixed)."""
    needs_base_url: bool = False
    """An endpoint is required (a local or third-party server)."""
    takes_reasoning: bool = True
    """Requests carry the thinking budget or reasoning effort (``reasoning_effort``,
    ``thinking``); where not, those settings are ignored and ``doctor`` warns."""


PROVIDER_KINDS: Final[Mapping[ProviderType, ProviderKind]] = MappingProxyType(
    {
        "anthropic": ProviderKind(
            key_env="ANTHROPIC_API_KEY",
            base_url_env="ANTHROPIC_BASE_URL",
            catalog="anthropic",
            builtin=True,
        ),
        "openai": ProviderKind(
            key_env="OPENAI_API_KEY", base_url_env="OPENAI_BASE_URL", catalog="openai", builtin=True
        ),
        "openai-compatible": ProviderKind(
            key_env=None,
            base_url_env="OPENAI_BASE_URL",
            catalog=None,
            builtin=False,
            needs_base_url=True,
            takes_reasoning=False,
        ),
    }
)
StoredKey = Callable[[str, str], "str | None"]
"""(provider name, key variable) → the key stored outside the environment (the keyring)."""


def make_provider(
    provider_type: ProviderType,
    *,
    name: str,
    base_url: str | None,
    api_key_env: str | None,
    env: Mapping[str, str],
    http_client: httpx2.AsyncClient | None = None,
    stored_key: StoredKey | None = None,
) -> Provider:
    """Build the provider ``name`` of type ``provider_type``.

    ``api_key_env`` names the variable holding the key (default: the SDK's own variable); an
    ``openai-compatible`` provider without one sends a placeholder key, as local servers need none.
    ``env`` is kept, not copied, so a key set later is picked up by the next request;
    ``stored_key`` is asked when the key variable is not set there.
    """
    if stored_key is not None and api_key_env is not None:
        env = _WithStoredKey(env, name, api_key_env, stored_key)
    if provider_type == "anthropic":
        from lsp_agent.providers import anthropic

        return anthropic.AnthropicProvider(
            name=name,
            base_url=base_url or env.get("ANTHROPIC_BASE_URL"),
            api_key_env=api_key_env or anthropic.DEFAULT_KEY_ENV,
            env=env,
            http_client=http_client,
        )
    if provider_type not in ("openai", "openai-compatible"):
        raise ValueError(f"unknown provider type {provider_type!r}")
    from lsp_agent.providers import openai

    compatible = provider_type == "openai-compatible"
    return openai.OpenAIProvider(
        name=name,
        base_url=base_url or env.get("OPENAI_BASE_URL"),
        api_key_env=api_key_env if compatible else (api_key_env or openai.DEFAULT_KEY_ENV),
        env=env,
        compatible=compatible,
        http_client=http_client,
    )


class _WithStoredKey(Mapping[str, str]):
    """``env``, where the key variable falls back to the stored key at each lookup."""

    def __init__(self, env: Mapping[str, str], name: str, variable: str, stored: StoredKey):
        self._env, self._name, self._variable, self._stored = env, name, variable, stored

    def __getitem__(self, name: str) -> str:
        value = self._env.get(name)
        if not value and name == self._variable:
            value = self._stored(self._name, name)
        if value is None:
            raise KeyError(name)
        return value

    def __iter__(self) -> Iterator[str]:
        return iter(self._env)

    def __len__(self) -> int:
        return len(self._env)
