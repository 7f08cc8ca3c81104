"""``authMethods`` and ``authenticate``: the provider keys, by the variables that hold them.

lsp-agent has no login of its own: a provider's key is read from its variable (e.g.
``ANTHROPIC_API_KEY``) or the OS keyring (``lsp-agent auth set``). Each provider the
configuration knows is one method naming its variable; ``authenticate`` checks that the key
is there and otherwise answers ``-32000`` naming the variable to set. A turn whose key the
provider rejects answers the same code (``errors.py``).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from acp.exceptions import RequestError

from lsp_agent.acp.errors import AUTH_REQUIRED
from lsp_agent.auth.keys import ProviderKeys, key_owners
from lsp_agent.config.load import load_settings
from lsp_agent.config.settings import Settings
from lsp_agent.core.errors import ConfigError

META = "lspAgent"


def _owners(env: Mapping[str, str]) -> dict[str, str]:
    """Provider → key variable, from the configuration seen from this folder (the built-in
    providers alone when it cannot be read)."""
    try:
        settings = load_settings(workspace=Path.cwd(), env=env)
    except ConfigError:
        settings = Settings()
    return {name: var for name, var in key_owners(settings).items() if var is not None}


def auth_methods(env: Mapping[str, str]) -> list[dict[str, Any]]:
    return [
        {
            "id": provider,
            "name": f"{provider} API key",
            "description": (
                f"Set {variable} in the environment lsp-agent starts with, "
                f"or run `lsp-agent auth set {provider}`."
            ),
            "_meta": {META: {"variable": variable}},
        }
        for provider, variable in sorted(_owners(env).items())
    ]


def authenticate(env: Mapping[str, str], method_id: str) -> None:
    """Raises ``RequestError``: an unknown method, or no key for it (blocking: a thread)."""
    owners = _owners(env)
    variable = owners.get(method_id)
    if variable is None:
        known = ", ".join(sorted(owners)) or "none"
        raise RequestError(-32602, f"Invalid params: unknown auth method {method_id!r} ({known})")
    if ProviderKeys(env).key(method_id, variable) is None:
        raise RequestError(
            AUTH_REQUIRED,
            f"Authentication required: no key for {method_id}. Set {variable} in the "
            f"environment lsp-agent starts with, or run `lsp-agent auth set {method_id}`.",
            {"variable": variable},
        )
