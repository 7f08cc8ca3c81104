"""The OS keyring, through the ``keyring`` library, as values: nothing here raises.

Keys live under the service ``lsp-agent`` with the provider's name as the user. Where no
usable backend exists (a headless Linux machine without a Secret Service: keyring picks its
``fail`` backend, or ``null`` when told to), the store says so and callers fall back to the
environment.

The backend is chosen here rather than by ``keyring``'s discovery off macOS and Windows: that
discovery imports every backend, and the macOS one looks for its libraries with
``ctypes.util.find_library``, which on Linux starts ``ldconfig`` and ``gcc`` (three times each,
a tenth of a second or more). ``PYTHON_KEYRING_BACKEND`` or keyring's own config file still
choose any backend; otherwise the best of the Secret Service, libsecret and KWallet backends
that works here, else ``fail``.
"""

from __future__ import annotations

import logging
import sys
from typing import TYPE_CHECKING

import attrs

if TYPE_CHECKING:
    from keyring.backend import KeyringBackend

__all__ = ["SERVICE", "KeyStore", "StoreResult"]

SERVICE = "lsp-agent"

_log = logging.getLogger(__name__)
_UNUSABLE = ("keyring.backends.fail.Keyring", "keyring.backends.null.Keyring")


@attrs.frozen
class StoreResult:
    """``error`` is ``None`` on success, else one sentence saying why not."""

    error: str | None = None

    @property
    def ok(self) -> bool:
        return self.error is None


def choose_backend() -> KeyringBackend:
    """The backend: the one configured for ``keyring``, else keyring's choice on macOS and
    Windows, else the best free-desktop backend that works here (module docstring)."""
    import keyring.core

    chosen = keyring.core.load_env() or keyring.core.load_config()
    if chosen is not None:
        return chosen
    if sys.platform in ("darwin", "win32"):
        return keyring.core.get_keyring()
    from keyring.backends import SecretService, fail, kwallet, libsecret

    candidates: tuple[type[KeyringBackend], ...] = (
        SecretService.Keyring,
        libsecret.Keyring,
        kwallet.DBusKeyring,
        kwallet.DBusKeyringKWallet4,
        fail.Keyring,  # always viable, priority 0: the answer when none of the others works
    )
    return max((c for c in candidates if c.viable), key=lambda c: c.priority)()


class KeyStore:
    """The provider keys in the keyring. The backend is chosen once, on first use, so a start
    that needs no key from the keyring never imports ``keyring``."""

    def __init__(self) -> None:
        self._backend: KeyringBackend | None = None

    def _active(self) -> KeyringBackend:
        if self._backend is None:
            self._backend = choose_backend()
        return self._backend

    def backend(self) -> str:
        """The backend's class name, or why there is none."""
        try:
            active = self._active()
        except Exception as exc:  # a broken backend must never stop the agent
            return f"unavailable ({type(exc).__name__}: {exc})"
        return f"{type(active).__module__}.{type(active).__qualname__}"

    def unusable(self) -> str | None:
        """Why the keyring cannot hold keys here, or ``None`` when it can."""
        name = self.backend()
        if name.startswith("unavailable") or name in _UNUSABLE:
            return f"no usable keyring backend here ({name})"
        return None

    def get(self, provider: str) -> str | None:
        if self.unusable() is not None:
            return None
        try:
            return self._active().get_password(SERVICE, provider) or None
        except Exception as exc:  # locked, no D-Bus, a backend bug: the environment only
            _log.warning("could not read the keyring for %s: %s", provider, type(exc).__name__)
            return None

    def set(self, provider: str, key: str) -> StoreResult:
        reason = self.unusable()
        if reason is not None:
            return StoreResult(reason)
        try:
            active = self._active()
            active.set_password(SERVICE, provider, key)
            stored = active.get_password(SERVICE, provider)
        except Exception as exc:
            return StoreResult(f"the keyring refused the key ({type(exc).__name__})")
        if stored != key:  # a backend that accepts and forgets (null-like)
            return StoreResult(f"the keyring backend {self.backend()} did not keep the key")
        return StoreResult()

    def delete(self, provider: str) -> StoreResult:
        reason = self.unusable()
        if reason is not None:
            return StoreResult(reason)
        try:
            from keyring.errors import PasswordDeleteError

            active = self._active()
            if active.get_password(SERVICE, provider) is None:
                return StoreResult(f"no key is stored for {provider}")
            try:
                active.delete_password(SERVICE, provider)
            except PasswordDeleteError:
                return StoreResult(f"no key is stored for {provider}")
        except Exception as exc:
            return StoreResult(f"the keyring refused to delete the key ({type(exc).__name__})")
        return StoreResult()
