"""File operations that never follow a link on the way: the write path's last wall.

A path is checked (``realpath``-ed, found inside a workspace folder) before a tool acts, but
between that check and the write a folder on the way can be swapped for a symlink — by the
model's own ``bash`` or by another session — and a plain ``open(path)`` would then write
wherever the link points. So every write, removal and rename here takes an absolute, real
path and walks it one component at a time from ``/`` (or from a given folder), each folder
opened relative to the previous one's descriptor with ``O_NOFOLLOW | O_DIRECTORY``; the
final operation is the ``*at`` call (``openat``, ``renameat``, ``unlinkat``, ``mkdirat``)
on the last folder's descriptor. A link (or anything that is not a folder) where a folder
should be raises :class:`LinkInTheWay` and nothing is changed; a link *as the last
component* is never followed either: a file is opened ``O_NOFOLLOW``, a rename or removal
acts on the link itself.

The paths are taken as they are: they must be real (``os.path.realpath``), since a link
anywhere in them — also one that was there all along — is refused.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator

from lsp_agent.system.atomic import write_synced

__all__ = [
    "LinkInTheWay",
    "TempMakerAt",
    "folder_fd",
    "lstat",
    "makedirs",
    "mkdir",
    "private_temp_at",
    "read_bytes",
    "replace",
    "rmdir",
    "symlink",
    "unlink",
    "write_atomic",
    "write_temp",
]

_DIR_FLAGS = (
    getattr(os, "O_PATH", os.O_RDONLY)
    | os.O_DIRECTORY
    | os.O_NOFOLLOW
    | getattr(os, "O_CLOEXEC", 0)
)
_READ_FLAGS = (
    os.O_RDONLY
    | os.O_NOFOLLOW
    | getattr(os, "O_NONBLOCK", 0)
    | getattr(os, "O_NOCTTY", 0)
    | getattr(os, "O_CLOEXEC", 0)
)
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0)

TempMakerAt = Callable[[int, str, str], tuple[str, int]]
"""``(folder_fd, folder, name)`` → a new temporary file for ``name`` in the folder open as
``folder_fd`` (``folder``: its path, for records and messages): the temporary file's name in
that folder and an open descriptor (which the writer closes)."""


class LinkInTheWay(OSError):
    """A folder on the path is a symbolic link (or not a folder) now: nothing was done."""

    def __init__(self, path: str, component: str) -> None:
        super().__init__(
            errno.ELOOP,
            f"{component} is a symbolic link or not a folder (it changed after the path was "
            "checked); nothing was written through it",
            path,
        )
        self.component = component


def private_temp_at(folder_fd: int, folder: str, name: str) -> tuple[str, int]:
    """A new ``.<name>.<random>.tmp`` in the folder, readable by its owner only."""
    while True:
        temp = f".{name}.{os.urandom(6).hex()}.tmp"
        try:
            return temp, os.open(temp, _CREATE_FLAGS, 0o600, dir_fd=folder_fd)
        except FileExistsError:
            continue


def _parts(path: str, start: str) -> list[str]:
    if not os.path.isabs(path):
        raise ValueError(f"not an absolute path: {path!r}")
    relative = os.path.relpath(os.path.normpath(path), start)
    if relative == ".":
        return []
    parts = relative.split(os.sep)
    if parts[0] == "..":
        raise ValueError(f"{path!r} is not inside {start!r}")
    return parts


@contextlib.contextmanager
def folder_fd(folder: str, *, start: str = "/", create: bool = False) -> Iterator[int]:
    """A descriptor of ``folder`` (absolute, real), reached from ``start`` without following
    a link; ``create``: missing folders are made (mode ``0o777`` less the umask).

    ``start`` itself is opened as it is (it is trusted: a workspace folder or ``/``). Raises
    :class:`LinkInTheWay`, ``FileNotFoundError`` or another ``OSError``.
    """
    fd = os.open(start, _DIR_FLAGS & ~os.O_NOFOLLOW)
    try:
        walked = start
        for part in _parts(folder, start):
            walked = os.path.join(walked, part)
            try:
                next_fd = os.open(part, _DIR_FLAGS, dir_fd=fd)
            except FileNotFoundError:
                if not create:
                    raise
                with contextlib.suppress(FileExistsError):
                    os.mkdir(part, dir_fd=fd)
                next_fd = _open_dir(part, fd, folder, walked)
            except OSError as error:
                _refuse(error, part, fd, folder, walked)
                raise
            os.close(fd)
            fd = next_fd
        yield fd
    finally:
        os.close(fd)


def _open_dir(part: str, parent: int, folder: str, walked: str) -> int:
    try:
        return os.open(part, _DIR_FLAGS, dir_fd=parent)
    except OSError as error:
        _refuse(error, part, parent, folder, walked)
        raise


def _refuse(error: OSError, part: str, parent: int, folder: str, walked: str) -> None:
    """Raise :class:`LinkInTheWay` when ``part`` is a link; ``NotADirectoryError`` when it is
    some other non-folder; nothing for other errors (the caller re-raises them)."""
    if error.errno not in (errno.ELOOP, errno.ENOTDIR):
        return
    try:
        found = os.stat(part, dir_fd=parent, follow_symlinks=False)
    except OSError:
        raise LinkInTheWay(folder, walked) from None
    if stat.S_ISLNK(found.st_mode):
        raise LinkInTheWay(folder, walked) from None
    raise NotADirectoryError(errno.ENOTDIR, "Not a directory", walked) from None


def _split(path: str) -> tuple[str, str]:
    folder, name = os.path.split(os.path.normpath(path))
    if not name:
        raise ValueError(f"not a file path: {path!r}")
    return folder, name


def read_bytes(path: str, *, start: str = "/") -> bytes | None:
    """The bytes of the regular file ``path``; None when there is nothing there.

    Raises :class:`LinkInTheWay` (a link on the way or as the file itself), ``IsADirectoryError``,
    ``OSError`` for anything else that is not a regular file, or the system's error.
    """
    folder, name = _split(path)
    try:
        with folder_fd(folder, start=start) as parent:
            try:
                fd = os.open(name, _READ_FLAGS, dir_fd=parent)
            except OSError as error:
                if error.errno == errno.ELOOP:
                    raise LinkInTheWay(path, path) from None
                raise
    except (FileNotFoundError, NotADirectoryError):
        return None
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "Is a directory", path)
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "Not a regular file", path)
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read()
    finally:
        os.close(fd)


def lstat(path: str, *, start: str = "/") -> os.stat_result | None:
    """``lstat`` of ``path`` reached without following a link; None when it is missing."""
    folder, name = _split(path)
    try:
        with folder_fd(folder, start=start) as parent:
            return os.stat(name, dir_fd=parent, follow_symlinks=False)
    except (FileNotFoundError, NotADirectoryError):
        return None


def mkdir(path: str, mode: int = 0o777, *, start: str = "/") -> None:
    folder, name = _split(path)
    with folder_fd(folder, start=start) as parent:
        os.mkdir(name, mode, dir_fd=parent)


def makedirs(path: str, *, start: str = "/") -> list[str]:
    """Make ``path`` and its missing parents (no link followed); the folders made, outermost
    first. A failure halfway raises with the made ones still in place."""
    made: list[str] = []
    walked = os.path.normpath(start)
    for part in _parts(path, start):
        walked = os.path.join(walked, part)
        try:
            mkdir(walked, start=start)
        except FileExistsError:
            continue
        made.append(walked)
    with folder_fd(path, start=start):  # what is there now must be a real folder
        pass
    return made


def unlink(path: str, *, start: str = "/") -> None:
    """Remove the file (a link itself, never what it points to). Raises ``OSError``."""
    folder, name = _split(path)
    with folder_fd(folder, start=start) as parent:
        os.unlink(name, dir_fd=parent)


def rmdir(path: str, *, start: str = "/") -> None:
    folder, name = _split(path)
    with folder_fd(folder, start=start) as parent:
        os.rmdir(name, dir_fd=parent)


def symlink(target: str, path: str, *, start: str = "/") -> None:
    """Make the link ``path`` → ``target`` (``target`` is stored, never followed here)."""
    folder, name = _split(path)
    with folder_fd(folder, start=start) as parent:
        os.symlink(target, name, dir_fd=parent)


def replace(source: str, target: str, *, start: str = "/") -> None:
    """Rename ``source`` onto ``target`` (a link at either end is renamed, not followed)."""
    source_folder, source_name = _split(source)
    target_folder, target_name = _split(target)
    with (
        folder_fd(source_folder, start=start) as src,
        folder_fd(target_folder, start=start) as dst,
    ):
        os.replace(source_name, target_name, src_dir_fd=src, dst_dir_fd=dst)


def write_temp(
    final: str,
    data: bytes,
    *,
    mode: int | None = None,
    make: TempMakerAt = private_temp_at,
    start: str = "/",
) -> str:
    """``data``, synced, in a new temporary file beside ``final``; the temporary file's path.

    The caller renames it into place with :func:`replace` (or removes it). Raises ``OSError``;
    on failure nothing is left behind.
    """
    folder, name = _split(final)
    with folder_fd(folder, start=start) as parent:
        temp, fd = make(parent, folder, name)
        try:
            write_synced(fd, data, mode=mode)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise
    return os.path.join(folder, temp)


def write_atomic(
    path: str,
    data: bytes,
    *,
    mode: int | None = None,
    make: TempMakerAt = private_temp_at,
    start: str = "/",
    executable: bool | None = None,
) -> None:
    """Replace ``path`` with ``data`` atomically and durably, every folder on the way reached
    without following a link (missing ones made). ``mode`` None keeps the bits of the file
    replaced (a link in its place is replaced, not followed); ``executable`` then sets or
    clears the execute bits (given where the read bits are). Raises ``OSError``.
    """
    folder, name = _split(path)
    with folder_fd(folder, start=start, create=True) as parent:
        if mode is None:
            with contextlib.suppress(FileNotFoundError):
                found = os.stat(name, dir_fd=parent, follow_symlinks=False)
                if stat.S_ISREG(found.st_mode):
                    mode = stat.S_IMODE(found.st_mode)
        temp, fd = make(parent, folder, name)
        try:
            write_synced(fd, data, mode=mode, executable=executable)
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=parent)
            raise
        _fsync_at(parent)


def _fsync_at(parent: int) -> None:
    """Make the folder's entries durable; best effort (an ``O_PATH`` descriptor cannot be
    synced, so the folder is opened for reading through it)."""
    try:
        fd = os.open(".", os.O_RDONLY | os.O_DIRECTORY | getattr(os, "O_CLOEXEC", 0), dir_fd=parent)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
