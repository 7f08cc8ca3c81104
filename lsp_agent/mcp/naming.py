"""Tool names the providers accept: ``[a-zA-Z0-9_-]``, at most 64 characters, unique.

A name too long is cut in its server part first, so the model can still tell a server's tools
apart (``very_long_server…_echo`` and ``…_env``); only a tool name of 63 characters or more is
cut itself."""

from __future__ import annotations

import re
from collections.abc import Collection

MAX_NAME = 64
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")


def sanitize(name: str) -> str:
    """Every other character becomes ``_``; an empty name becomes ``_``."""
    return _UNSAFE.sub("_", name) or "_"


def tool_name(server: str, tool: str, taken: Collection[str]) -> str:
    """``<server>_<tool>`` made safe, fitted into 64 characters, and suffixed (``_2``,
    ``_3``…) until it is not in ``taken`` (the built-in tools and the names given before)."""
    server_part, tool_part = sanitize(server), sanitize(tool)
    for n in range(1, 10_000):
        candidate = _fit(server_part, tool_part, "" if n == 1 else f"_{n}")
        if candidate not in taken:
            return candidate
    raise ValueError(f"no free tool name for {server}:{tool}")  # pragma: no cover


def _fit(server: str, tool: str, suffix: str) -> str:
    room = MAX_NAME - len(tool) - 1 - len(suffix)
    if room >= 1:
        return f"{server[:room]}_{tool}{suffix}"
    return f"{server[:1]}_{tool}"[: MAX_NAME - len(suffix)] + suffix
