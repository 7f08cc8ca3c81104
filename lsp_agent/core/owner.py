"""Who owns a running turn: a process id plus its start time, so a reused pid is not mistaken
for the owner (recovery must never touch a live owner's turn)."""

from __future__ import annotations

import os
from typing import Any


def start_ticks(pid: int) -> int | None:
    """The process's start time in clock ticks since boot (Linux ``/proc``), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            text = stat.read().decode("ascii", "replace")
    except OSError:
        return None
    # The command name (field 2) may contain spaces and parentheses: split after the last ")".
    fields = text[text.rfind(")") + 2 :].split()
    try:
        return int(fields[19])  # field 22 overall
    except (IndexError, ValueError):
        return None


def current_owner() -> dict[str, Any]:
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
