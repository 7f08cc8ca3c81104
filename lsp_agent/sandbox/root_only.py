"""What a command could read only because the agent runs as root: found, so the sandbox
masks it.

Inside the sandbox every capability is dropped, so root reads a file only as its owner (or
through group 0): every file and folder owned by uid 0 or gid 0 that others may not read —
``/etc/shadow``, ``/etc/gshadow``, ``/etc/ssh/ssh_host_*_key``, ``/etc/ssl/private``,
``/var/backups/shadow.bak``, ``/var/log/btmp``, a service's secrets — is still readable there.
A user namespace does not help: ``bwrap --unshare-user --uid 65534`` run by root maps the new
uid to root outside, so the kernel still sees the owner (measured on 6.18). So the system
folders that hold configuration and state are walked (a few levels deep, a bounded number
of entries, symlinks not followed) and every such entry is masked. Root's home
(:data:`ROOT_HOME`) is hidden like ``$HOME`` even when ``HOME`` points elsewhere — an empty
folder with the ``sandbox.allow_read`` entries shown in it (the toolchains) — by the caller.

Not for other users: an unprivileged agent cannot read those files outside the sandbox
either.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable
from typing import Final

__all__ = ["ROOT_HOME", "SCANNED", "root_only_paths"]

ROOT_HOME: Final = "/root"
SCANNED: Final = (
    ("/etc", 5),
    ("/var", 3),
    ("/opt", 2),
    ("/srv", 2),
    ("/boot", 1),
    ("/usr/local/etc", 3),
)
"""The folders walked, each with how deep."""
_MAX_ENTRIES: Final = 50_000


def root_only_paths(scanned: Iterable[tuple[str, int]] = SCANNED) -> tuple[str, ...]:
    """Every entry under ``scanned`` that only uid 0 or gid 0 may read (the topmost one:
    nothing below a masked folder is listed)."""
    found: list[str] = []
    budget = [_MAX_ENTRIES]
    for top, depth in scanned:
        _walk(top, depth, found, budget)
    return tuple(found)


def _walk(folder: str, depth: int, found: list[str], budget: list[int]) -> None:
    try:
        entries = os.scandir(folder)
    except OSError:
        return
    with entries:
        for entry in entries:
            budget[0] -= 1
            if budget[0] < 0:
                return
            try:
                info = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            mode = info.st_mode
            if stat.S_ISLNK(mode):
                continue
            if _root_only(info):
                found.append(entry.path)
            elif stat.S_ISDIR(mode) and depth > 1:
                _walk(entry.path, depth - 1, found, budget)


def _root_only(info: os.stat_result) -> bool:
    """Readable by uid 0 or gid 0 as owner or group, not by others."""
    mode = info.st_mode
    if stat.S_ISDIR(mode):
        others = mode & 0o005 == 0o005
        owner, group = mode & 0o500 == 0o500, mode & 0o050 == 0o050
    else:
        others = bool(mode & 0o004)
        owner, group = bool(mode & 0o400), bool(mode & 0o040)
    if others:
        return False
    return (info.st_uid == 0 and owner) or (info.st_gid == 0 and group)
