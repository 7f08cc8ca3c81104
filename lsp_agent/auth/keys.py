"""The request-time key lookup: the provider's variable in the environment first, then the
keyring (``lsp-agent auth set``).

A key read from the keyring is registered with the secret filter, so it is masked like an
environment key in everything the model sees; it is never put into any environment, so
``bash`` children never receive it. Keyring answers are kept for ``ttl`` seconds: a lookup
may block (a D-Bus call), and a changed key is still picked up within that time.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Mapping
from typing import Literal, Protocol

from lsp_agent.auth.keyring_index import KeyringIndex
from lsp_agent.auth.store import KeyStore
from lsp_agent.config.resolve import BUILTIN_PROVIDERS, DEFAULT_API_KEY_ENV
from lsp_agent.config.settings import Settings
from lsp_agent.core.secrets.filter import SecretFilter

__all__ = ["KEYRING_TTL", "KeyReader", "KeySource", "ProviderKeys", "key_owners", "preload"]

KEYRING_TTL = 60.0

KeySource = Literal["env", "keyring", "missing"]


class KeyReader(Protocol):
    """What the lookup needs of a key store (``KeyStore``; tests pass their own)."""

    def get(self, provider: str) -> str | None: ...


class ProviderKeys:
    def __init__(
        self,
        env: Mapping[str, str],
        *,
        store: KeyReader | None = None,
        secrets: SecretFilter | None = None,
        ttl: float = KEYRING_TTL,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._env = env
        self._store = store if store is not None else KeyStore()
        self._secrets = secrets
        self._ttl = ttl
        self._clock = clock
        self._cache: dict[str, tuple[float, str | None]] = {}
        self._lock = threading.Lock()

    def key(self, provider: str, variable: str) -> str | None:
        """``provider``'s key: ``$variable``, else the keyring's, else ``None``."""
        return self._env.get(variable) or self.stored(provider, variable)

    def source(self, provider: str, variable: str) -> KeySource:
        if self._env.get(variable):
            return "env"
        return "keyring" if self.stored(provider, variable) else "missing"

    def stored(self, provider: str, variable: str) -> str | None:
        """The keyring's key for ``provider`` (registered with the filter as ``variable``)."""
        now = self._clock()
        with self._lock:
            cached = self._cache.get(provider)
        if cached is not None and now - cached[0] < self._ttl:
            return cached[1]
        key = self._store.get(provider)
        if key and self._secrets is not None:
            self._secrets.register(variable, key)
        with self._lock:
            self._cache[provider] = (now, key)
        return key


def key_owners(settings: Settings) -> dict[str, str | None]:
    """Every provider the configuration knows → its key variable (``None``: needs no key)."""
    owners: dict[str, str | None] = {
        name: DEFAULT_API_KEY_ENV[kind] for name, kind in BUILTIN_PROVIDERS.items()
    }
    for name, config in settings.providers.items():
        kind = config.type or BUILTIN_PROVIDERS.get(name)
        if kind is not None:
            owners[name] = config.api_key_env or DEFAULT_API_KEY_ENV[kind]
    return owners


def preload(keys: ProviderKeys, settings: Settings, index: KeyringIndex | None = None) -> None:
    """Read the keyring once for each provider whose variable is unset and that ``index``
    lists, so every stored key is registered with the secret filter before anything reaches
    the model. Nothing is listed: the keyring is not touched (not even imported). No list
    (``index`` None, or none written yet): every provider is probed, and the list is written
    from what the keyring holds."""
    owners = {p: v for p, v in key_owners(settings).items() if v is not None}
    listed = index.read() if index is not None else None
    if listed is not None:
        for provider in sorted(listed & owners.keys()):
            keys.key(provider, owners[provider])
        return
    held = [provider for provider, variable in owners.items() if keys.stored(provider, variable)]
    if index is not None:
        index.write(held)
