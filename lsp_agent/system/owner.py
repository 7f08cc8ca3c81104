"""A process named across pid reuse: its pid plus its start time.

A turn's ``running`` event records its owner this way, and each temporary-file journal is
named after its writer, so recovery never touches what a live process still owns, even when
a dead owner's pid now names another process.
"""

from __future__ import annotations

import os
from typing import Any

from lsp_agent.system.procfs import start_ticks

__all__ = ["current_owner", "owner_alive"]


def current_owner() -> dict[str, Any]:
    """This process as an owner record: ``{"pid", "startTicks"}`` (ticks None without
    ``/proc``)."""
    pid = os.getpid()
    return {"pid": pid, "startTicks": start_ticks(pid)}


def owner_alive(owner: dict[str, Any]) -> bool:
    """Whether the recorded owner still runs (same pid *and* same start time)."""
    pid = owner.get("pid")
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        pass  # exists, owned by someone else
    recorded = owner.get("startTicks")
    return recorded is None or start_ticks(pid) == recorded
