"""A file replaced whole or not at all, and durably.

:func:`write_atomic` writes the new bytes to a temporary file in the same folder (the same
file system, so the rename is atomic), ``fsync`` s it, ``os.replace`` s it onto the target and
``fsync`` s the folder, so after a crash the path holds the old bytes or the new ones, never a
mix, and the rename itself survives. A failure leaves the old file and no temporary file.
(``os.replace`` gives the path a new inode: hard links to the old one keep the old content —
the usual price of atomic writes.)

Who makes the temporary file is a parameter (:data:`TempMaker`): by default a private
``.<name>.<random>.tmp`` (``0600``); the workspace passes its journaled maker
(``workspace.temp_files.create_temp``) so recovery can remove what a killed writer left.
"""

from __future__ import annotations

import contextlib
import os
import stat
import tempfile
from collections.abc import Callable
from pathlib import Path

__all__ = [
    "TempMaker",
    "fsync_folder",
    "private_temp",
    "write_atomic",
    "write_synced",
    "write_temp",
]

TempMaker = Callable[[str, str], tuple[str, int]]
"""``(folder, name)`` → a new temporary file for ``name`` in ``folder``: its path and an
open descriptor (which the writer closes)."""


def private_temp(folder: str, name: str) -> tuple[str, int]:
    """A new ``.<name>.<random>.tmp`` in ``folder``, readable by its owner only."""
    fd, path = tempfile.mkstemp(dir=folder, prefix=f".{name}.", suffix=".tmp")
    return path, fd


def write_atomic(
    path: str | Path, data: bytes, *, mode: int | None = None, make: TempMaker = private_temp
) -> None:
    """Replace ``path`` with ``data`` atomically and durably (blocking: use a thread).

    Parent folders are created. ``mode``: the file's permission bits; None keeps those of the
    file replaced (a new file gets what ``make`` created). Raises ``OSError``.
    """
    target = os.fspath(path)
    folder = os.path.dirname(target) or "."
    os.makedirs(folder, exist_ok=True)
    if mode is None:
        with contextlib.suppress(FileNotFoundError):
            mode = stat.S_IMODE(os.stat(target).st_mode)
    temp = write_temp(target, data, mode=mode, make=make)
    try:
        os.replace(temp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    fsync_folder(folder)


def write_temp(
    final: str, data: bytes, *, mode: int | None = None, make: TempMaker = private_temp
) -> str:
    """``data``, synced, in a new temporary file beside ``final``; its path.

    The caller renames it into place (or removes it). ``mode``: its permission bits (None:
    as ``make`` created it). On failure nothing is left behind. Raises ``OSError``.
    """
    folder, name = os.path.split(final)
    temp, fd = make(folder or ".", name)
    try:
        write_synced(fd, data, mode=mode)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise
    return temp


def write_synced(
    fd: int, data: bytes, *, mode: int | None = None, executable: bool | None = None
) -> None:
    """Write ``data`` to the new file open as ``fd``, ``fsync`` it and close ``fd``.

    ``mode``: its permission bits (None: as it was created); ``executable`` then sets or
    clears the execute bits (given where the read bits are). Raises ``OSError``.
    """
    with os.fdopen(fd, "wb") as f:
        if executable is not None:
            bits = stat.S_IMODE(os.fstat(f.fileno()).st_mode) if mode is None else mode
            mode = bits | (bits & 0o444) >> 2 if executable else bits & ~0o111
        if mode is not None:
            os.fchmod(f.fileno(), mode)
        f.write(data)
        f.flush()
        os.fsync(f.fileno())


def fsync_folder(folder: str | Path) -> None:
    """Make a folder's entries (a rename, a new file) durable; best effort (not every system
    can open a folder)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
