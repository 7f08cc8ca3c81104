"""Where shadow repositories live, and the lock each one is used under.

Layout under the data dir::

    <data_dir>/snapshots/
        .last-prune                      time of the last prune (seconds since the epoch)
        <name>-<hash>/                   one shadow git dir per workspace folder
            HEAD, config, objects/, refs/  a git directory (no work tree of its own)
            index                        the shadow index (the project's index is never used)
            info/exclude                 the project's info/exclude, copied (plus the data dir)
            info/attributes              turns off every content conversion
            objects/info/alternates      the project's object store, read-only (git projects)
            workspace.json               which folder this is, and how it was set up
            trees                        "<time> <tree>" per recorded tree (for pruning)

``<name>`` is the folder's base name made file-name safe, ``<hash>`` the first 16 hex digits of
the SHA-256 of its resolved path, so the same folder always maps to the same shadow.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import re
from pathlib import Path

__all__ = [
    "PRUNE_STAMP",
    "TREES_LOG",
    "WORKSPACE_FILE",
    "WorkspaceLocks",
    "shadow_dir",
    "snapshots_root",
    "workspace_key",
]

PRUNE_STAMP = ".last-prune"
"""File under :func:`snapshots_root` holding the time of the last prune."""

WORKSPACE_FILE = "workspace.json"
"""File in a shadow dir naming its workspace folder and how the shadow was set up."""

TREES_LOG = "trees"
"""File in a shadow dir with one ``<time> <tree>`` line per recorded tree."""

_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_NAME_CHARS = 40


def snapshots_root(data_dir: Path) -> Path:
    """The folder holding every shadow repository: ``<data_dir>/snapshots``."""
    return data_dir / "snapshots"


def workspace_key(workspace: Path) -> str:
    """A stable, file-name safe id of ``workspace`` (which should already be resolved)."""
    raw = os.fsencode(str(workspace))
    digest = hashlib.sha256(raw).hexdigest()[:16]
    name = _UNSAFE.sub("_", workspace.name).strip("._")[:_NAME_CHARS] or "root"
    return f"{name}-{digest}"


def shadow_dir(data_dir: Path, workspace: Path) -> Path:
    """The shadow git dir of ``workspace`` (resolved) under ``data_dir``."""
    return snapshots_root(data_dir) / workspace_key(workspace)


class WorkspaceLocks:
    """One :class:`asyncio.Lock` per shadow repository, created on first use.

    Every operation on a shadow repository (tracking, restoring, pruning) holds its lock, so the
    shadow index is never used by two operations of this process at once. (Another process
    using the same shadow is kept apart by git's own ``index.lock``.)
    """

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def get(self, key: str) -> asyncio.Lock:
        lock = self._locks.get(key)
        if lock is None:
            lock = self._locks[key] = asyncio.Lock()
        return lock
