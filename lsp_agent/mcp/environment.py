"""What a server is given: a clean environment, headers, ``{env:VAR}`` references expanded."""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping

#: the only variables a local server inherits from the agent (docs/mcp.md)
INHERITED = ("PATH", "HOME", "LANG")
_REFERENCE = re.compile(r"\{env:([A-Za-z_][A-Za-z0-9_]*)\}")


def expand(value: str, env: Mapping[str, str]) -> str:
    """``{env:VAR}`` → the agent's ``VAR`` (empty when unset)."""
    return _REFERENCE.sub(lambda m: env.get(m.group(1), ""), value)


def server_environment(
    configured: Mapping[str, str], env: Mapping[str, str], *, hidden: Collection[str] = ()
) -> dict[str, str]:
    """PATH, HOME and LANG from the agent, then what the config names (expanded).

    ``hidden`` (the agent's provider key variables) are never inherited; a config that
    names one on purpose gets what it asked for, as with any other variable it names.
    """
    out = {name: env[name] for name in INHERITED if name in env and name not in hidden}
    out.update({name: expand(value, env) for name, value in configured.items()})
    return out


def expanded_headers(headers: Mapping[str, str], env: Mapping[str, str]) -> dict[str, str]:
    return {name: expand(value, env) for name, value in headers.items()}
