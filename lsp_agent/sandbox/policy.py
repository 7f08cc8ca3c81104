"""What one sandboxed command may see: the folders it may write, read, and must not see.

Built per command from the workspace folders (plus the folders the user approved for it),
``sandbox.allow_read`` and the agent's data folder. Paths are resolved (symlinks followed)
because bubblewrap mounts real locations; paths that do not exist are left out, since there
is nothing there to show or hide.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

import attrs

__all__ = ["SandboxPolicy", "policy_for"]


@attrs.frozen(kw_only=True)
class SandboxPolicy:
    writable: tuple[str, ...]
    """Read-write: the workspace folders, folders approved for this command, its workdir."""
    read_only: tuple[str, ...] = ()
    """Read-only although inside a writable folder: the protected files
    (``sandbox/protected.py``)."""
    readable: tuple[str, ...]
    """Read-only although hidden otherwise (``sandbox.allow_read`` inside ``$HOME``)."""
    home: str | None
    """Hidden behind an empty, throw-away folder (None: nothing to hide)."""
    hidden: tuple[str, ...]
    """Invisible whatever else says: the agent's data folder."""
    network: bool
    """Whether the command shares the network (else it has only its own loopback)."""


def policy_for(
    *,
    writable: Iterable[str],
    allow_read: Iterable[str],
    home: str | None,
    hidden: Iterable[str],
    network: bool,
) -> SandboxPolicy:
    """The policy for one command; ``allow_read`` entries may start with ``~`` (``home``)."""
    home_real = _existing(home) if home else None
    if home_real == "/":
        home_real = None  # hiding / would hide everything
    writable_real = _unique(p for p in map(_existing, writable) if p is not None)
    readable: list[str] = []
    for entry in allow_read:
        path = _existing(_expand(entry, home))
        if path is not None and not any(_within(path, root) for root in writable_real):
            readable.append(path)  # inside a writable folder it is readable already
    return SandboxPolicy(
        writable=writable_real,
        readable=_unique(readable),
        home=home_real,
        hidden=_unique(p for p in map(_existing, hidden) if p is not None and p != "/"),
        network=network,
    )


def _expand(entry: str, home: str | None) -> str:
    if entry == "~" or entry.startswith("~/"):
        return os.path.join(home, entry[2:]) if home else ""
    return entry


def _existing(path: str) -> str | None:
    if not path or not os.path.isabs(path):
        return None
    real = os.path.realpath(path)
    return real if os.path.exists(real) else None


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


def _unique(paths: Iterable[str]) -> tuple[str, ...]:
    return tuple(dict.fromkeys(paths))
