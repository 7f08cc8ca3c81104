"""Reading a file for the model's context with no tool call and no ask (instruction files,
``SKILL.md``): it goes through the same wall as the ``read`` tool.

- **Confined**: the path is ``realpath``-ed and must land inside one of the given roots; the
  file opened must be that one (``O_NOFOLLOW`` on the resolved path, the descriptor's
  device and inode compared with what was checked, and on Linux the descriptor's own path
  checked again), so a link swapped in meanwhile is refused, not followed.
- **Regular files only**: a FIFO, device, socket or folder is refused without being opened;
  the open itself is ``O_NONBLOCK``, so nothing swapped in can make it wait.
- **Bounded**: at most ``limit`` bytes are read; the caller is told the file was longer.
- **No credentials**: a file in one of the user's credential stores (``~/.ssh``,
  ``~/.netrc``…, ``lsp_agent.system.credentials``) is refused, wherever the roots are.

The answer is a value: :class:`FileBytes`, :class:`Refused` (a wall said no: the message
never names where a link points) or :class:`Unreadable` (the system said no).
"""

from __future__ import annotations

import errno
import os
import stat
import sys
from collections.abc import Sequence

import attrs

from lsp_agent.system.credentials import real_credential_paths

__all__ = ["FileBytes", "Refused", "Unreadable", "read_confined", "read_regular"]

_OPEN_FLAGS = (
    os.O_RDONLY
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOFOLLOW", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CHUNK = 64 * 1024


@attrs.frozen(kw_only=True)
class FileBytes:
    real_path: str
    data: bytes
    """At most ``limit`` bytes."""
    truncated: bool
    """The file holds more than ``limit`` bytes."""


@attrs.frozen(kw_only=True)
class Refused:
    """Not read on purpose; ``reason`` is written for the model and the user."""

    reason: str


@attrs.frozen(kw_only=True)
class Unreadable:
    """The system refused (missing, no permission); ``reason`` is its message."""

    reason: str
    missing: bool = False


def read_confined(
    path: str, roots: Sequence[str], *, limit: int
) -> FileBytes | Refused | Unreadable:
    """``path`` read as context if it really lies inside one of ``roots``."""
    real = os.path.realpath(path)
    inside = [os.path.realpath(root) for root in roots]
    if not any(_contains(root, real) for root in inside):
        return Refused(reason="it resolves to a file outside the folders it may be read from")
    return _read(real, limit, inside)


def read_regular(path: str, *, limit: int) -> FileBytes | Refused | Unreadable:
    """``path`` read if it is a regular file (links followed; no confinement)."""
    return _read(os.path.realpath(path), limit, None)


def _read(real: str, limit: int, roots: list[str] | None) -> FileBytes | Refused | Unreadable:
    if _in_credentials(real):
        return Refused(reason="it resolves to a file in a credential store")
    try:
        checked = os.stat(real)
    except OSError as error:
        return _unreadable(error)
    kind = _kind(checked.st_mode)
    if kind is not None:
        return Refused(reason=f"it is {kind}, not a regular file")
    try:
        fd = os.open(real, _OPEN_FLAGS)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return Refused(reason="it was replaced by a link while being read")
        return _unreadable(error)
    try:
        opened = os.fstat(fd)
        if (opened.st_dev, opened.st_ino) != (checked.st_dev, checked.st_ino):
            return Refused(reason="it was replaced while being read")
        if not stat.S_ISREG(opened.st_mode):
            return Refused(reason="it is not a regular file")
        where = _descriptor_path(fd)
        if roots is not None and where is not None and not any(_contains(r, where) for r in roots):
            return Refused(reason="it resolves to a file outside the folders it may be read from")
        if where is not None and _in_credentials(where):
            return Refused(reason="it resolves to a file in a credential store")
        data = _read_up_to(fd, limit + 1)
    except OSError as error:
        return _unreadable(error)
    finally:
        os.close(fd)
    return FileBytes(real_path=real, data=data[:limit], truncated=len(data) > limit)


def _in_credentials(real: str) -> bool:
    return any(_contains(store, real) for store in real_credential_paths(os.environ))


def _read_up_to(fd: int, count: int) -> bytes:
    parts: list[bytes] = []
    left = count
    while left > 0:
        chunk = os.read(fd, min(left, _CHUNK))
        if not chunk:
            break
        parts.append(chunk)
        left -= len(chunk)
    return b"".join(parts)


def _kind(mode: int) -> str | None:
    """What a non-regular file is, in words (None for a regular file)."""
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    return "a special file"


def _descriptor_path(fd: int) -> str | None:
    """Where the open descriptor really is (Linux ``/proc``); None where that is unknown."""
    if not sys.platform.startswith("linux"):
        return None
    try:
        return os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        return None


def _unreadable(error: OSError) -> Unreadable:
    missing = isinstance(error, (FileNotFoundError, NotADirectoryError))
    return Unreadable(reason=error.strerror or str(error), missing=missing)


def _contains(root: str, path: str) -> bool:
    # commonpath compares whole components, so /ws-other is not inside /ws.
    try:
        return os.path.commonpath([root, path]) == root
    except ValueError:  # different drives (Windows)
        return False
