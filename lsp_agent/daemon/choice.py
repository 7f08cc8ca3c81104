"""Whether ``run`` takes the warm path, decided before any of the agent is imported.

Only your own layers count (the user file, then ``LSP_AGENT_CONFIG``): a project's file must not
decide which process runs the agent. They are read as plain JSON for ``daemon.enabled`` and
``daemon.idle_seconds``; a value of the wrong type is left to the run itself, which reads the
whole configuration and reports it (exit 2) as for any other key.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import NamedTuple

OFF_VARIABLE = "LSP_AGENT_NO_DAEMON"
DEFAULT_IDLE_SECONDS = 600


class WarmChoice(NamedTuple):
    enabled: bool
    idle_seconds: int


def warm_choice(argv: Sequence[str], env: Mapping[str, str]) -> WarmChoice:
    """``run`` only, not with ``--no-daemon``, ``LSP_AGENT_NO_DAEMON=1`` or
    ``daemon.enabled: false``; Linux only (``SO_PEERCRED``)."""
    idle = DEFAULT_IDLE_SECONDS
    if (
        not argv
        or argv[0] != "run"
        or "--no-daemon" in argv[1:]
        or env.get(OFF_VARIABLE, "").strip() not in ("", "0")
        or not sys.platform.startswith("linux")
    ):
        return WarmChoice(enabled=False, idle_seconds=idle)
    enabled = True
    for path in _own_files(env):
        section = _daemon_section(path)
        switch = section.get("enabled")
        if isinstance(switch, bool):
            enabled = switch
        seconds = section.get("idle_seconds")
        if isinstance(seconds, int) and not isinstance(seconds, bool) and seconds > 0:
            idle = seconds
    return WarmChoice(enabled=enabled, idle_seconds=idle)


def _own_files(env: Mapping[str, str]) -> list[str]:
    """The user file and ``LSP_AGENT_CONFIG``'s, where config/load.py finds them (Linux)."""
    home = env.get("HOME") or os.path.expanduser("~")
    xdg = env.get("XDG_CONFIG_HOME", "")
    base = xdg if xdg.strip() else os.path.join(home, ".config")
    files = [os.path.join(base, "lsp-agent", "config.json")]
    extra = env.get("LSP_AGENT_CONFIG", "").strip()
    if extra in ("~", "$HOME"):
        extra = home
    for prefix in ("~/", "$HOME/"):
        if extra.startswith(prefix):
            extra = os.path.join(home, extra[len(prefix) :])
    if os.path.isabs(extra):
        files.append(extra)
    return files


def _daemon_section(path: str) -> dict[str, object]:
    try:
        with open(path, encoding="utf-8") as file:
            data = json.load(file)
    except (OSError, ValueError):
        return {}
    section = data.get("daemon") if isinstance(data, dict) else None
    return section if isinstance(section, dict) else {}
