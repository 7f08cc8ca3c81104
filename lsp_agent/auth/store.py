"""The OS keyring, through the ``keyring`` library, as values: nothing here raises.

Keys live under the service ``lsp-agent`` with the provider's name as the user. Where no
usable backend exists (a headless Linux machine without a Secret Service: keyring picks its
``fail`` backend, or ``null`` when told to), the store says so and callers fall back to the
environment.
"""

from __future__ import annotations

import logging

import attrs

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


class KeyStore:
    """The provider keys in the keyring. The backend is chosen once, on first use (keyring
    imports its backends lazily, which costs start-up time only when the keyring is needed)."""

    def backend(self) -> str:
        """The backend's class name, or why there is none."""
        try:
            import keyring

            active = keyring.get_keyring()
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
            import keyring

            return keyring.get_password(SERVICE, provider) or None
        except Exception as exc:  # locked, no D-Bus, a backend bug: the environment only
            _log.warning("could not read the keyring for %s: %s", provider, type(exc).__name__)
            return None

    def set(self, provider: str, key: str) -> StoreResult:
        reason = self.unusable()
        if reason is not None:
            return StoreResult(reason)
        try:
            import keyring

            keyring.set_password(SERVICE, provider, key)
            stored = keyring.get_password(SERVICE, provider)
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
            import keyring
            from keyring.errors import PasswordDeleteError

            if keyring.get_password(SERVICE, provider) is None:
                return StoreResult(f"no key is stored for {provider}")
            try:
                keyring.delete_password(SERVICE, provider)
            except PasswordDeleteError:
                return StoreResult(f"no key is stored for {provider}")
        except Exception as exc:
            return StoreResult(f"the keyring refused to delete the key ({type(exc).__name__})")
        return StoreResult()
