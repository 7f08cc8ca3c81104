"""What one sandboxed command may see: the folders it may write, read, and must not see.

Built per command from the workspace folders (plus the folders the user approved for it),
``sandbox.allow_read``, the agent's data folder, the user's credential stores
(``lsp_agent.system.credentials``) and — when the agent runs as root — the system's
root-only files (``lsp_agent.sandbox.root_only``). Paths are resolved (symlinks followed)
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
    """Invisible whatever else says: the agent's data folder, the credential stores (those
    that contain no writable folder)."""
    network: bool
    """Whether the command shares the network (else it has only its own loopback)."""
    masked: tuple[str, ...] = ()
    """Hidden, but a writable or readable folder deeper inside stays visible: root's home
    and the system's root-only files when the agent runs as root."""
    tmp_bytes: int | None = None
    """The size of each writable in-memory folder (``/tmp``, ``/run``, the empty ``$HOME``);
    None: the kernel's default (half the RAM)."""


def policy_for(
    *,
    writable: Iterable[str],
    allow_read: Iterable[str],
    home: str | None,
    hidden: Iterable[str],
    network: bool,
    credentials: Iterable[str] = (),
    masked: Iterable[str] = (),
    other_homes: Iterable[str] = (),
    tmp_bytes: int | None = None,
) -> SandboxPolicy:
    """The policy for one command; ``allow_read`` entries may start with ``~`` (``home``).
    ``credentials``: hidden last, unless one contains a writable folder (hiding it would
    hide the workspace); ``masked``: hidden below more specific mounts; ``other_homes``:
    hidden like ``home``, with ``allow_read``'s ``~`` entries shown in each too (root's home
    when ``HOME`` is elsewhere)."""
    home_real = _existing(home) if home else None
    if home_real == "/":
        home_real = None  # hiding / would hide everything
    writable_real = _unique(p for p in map(_existing, writable) if p is not None)
    stores = [p for p in map(_existing, credentials) if p is not None and p != "/"]
    stores = [p for p in stores if not any(_within(root, p) for root in writable_real)]
    extra = [p for p in map(_existing, other_homes) if p is not None and p not in ("/", home_real)]
    readable: list[str] = []
    for entry in allow_read:
        for base in (home, *extra):
            path = _existing(_expand(entry, base))
            if path is not None and not any(_within(path, root) for root in writable_real):
                readable.append(path)  # inside a writable folder it is readable already
    return SandboxPolicy(
        writable=writable_real,
        readable=_unique(readable),
        home=home_real,
        hidden=_unique(
            [*(p for p in map(_existing, hidden) if p is not None and p != "/"), *stores]
        ),
        network=network,
        masked=_unique(
            p
            for p in [*map(_existing, masked), *extra]
            # what lies in a writable folder is the command's to read (and a mount there
            # would turn the folder read-only again)
            if p is not None and p != "/" and not any(_within(p, r) for r in writable_real)
        ),
        tmp_bytes=tmp_bytes,
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
