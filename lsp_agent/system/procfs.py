"""``/proc/<pid>/stat``: the one reader of process facts (Linux).

The command name (field 2) is in parentheses and may itself hold spaces and parentheses, so
the fields after it are split after the *last* ``)``. Where there is no ``/proc`` (not Linux)
every reader answers "unknown" (None, or no pids) instead of raising.
"""

from __future__ import annotations

import os
from typing import NamedTuple

__all__ = ["ProcStat", "mounted", "parse_stat", "pids", "read_stat", "start_ticks"]

_PROC = "/proc"


class ProcStat(NamedTuple):
    """The fields of ``/proc/<pid>/stat`` the agent uses."""

    state: str
    """Field 3: ``R``, ``S``, ``D``, ``T``, ``Z`` (zombie), ``X`` (dead), …"""
    ppid: int
    """Field 4: the parent's pid."""
    pgid: int
    """Field 5: the process group."""
    start_ticks: int
    """Field 22: when it started, in clock ticks since boot; with the pid it names one
    process across pid reuse."""


def parse_stat(data: bytes) -> ProcStat | None:
    """The fields of one ``stat`` file's content; None when it is not one."""
    end = data.rfind(b")")
    if end < 0:
        return None
    fields = data[end + 1 :].decode("ascii", "replace").split()
    try:
        return ProcStat(fields[0], int(fields[1]), int(fields[2]), int(fields[19]))
    except (IndexError, ValueError):
        return None


def read_stat(pid: int) -> ProcStat | None:
    """Process ``pid``'s facts; None when it is gone (or there is no ``/proc``)."""
    try:
        with open(f"{_PROC}/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return None
    return parse_stat(data)


def start_ticks(pid: int) -> int | None:
    """When ``pid`` started (:attr:`ProcStat.start_ticks`), or None where that is unknown."""
    stat = read_stat(pid)
    return stat.start_ticks if stat is not None else None


def pids() -> list[int]:
    """Every process id in ``/proc`` now (none without ``/proc``)."""
    try:
        names = os.listdir(_PROC)
    except OSError:
        return []
    return [int(name) for name in names if name.isdigit()]


def mounted() -> bool:
    """Whether ``/proc`` is there to ask (without it nothing here can tell processes apart)."""
    return os.path.isdir(_PROC)
