"""A repository's own files (``.git/HEAD``, ``config``, ``index``…) read without ever blocking.

Anything in a work tree, ``.git`` included, may be written by a command the model ran: a FIFO
or a device where a regular file is expected would hang a plain ``open``/``read`` (or, for
``/dev/zero``, never end). Every read here opens with ``O_NONBLOCK``, checks on the open
descriptor that it is a regular file, and reads at most a limit.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable
from pathlib import Path

__all__ = [
    "GIT_FILES",
    "copy_regular_file",
    "git_dir_of",
    "included_files",
    "irregular_files",
    "read_regular_file",
    "unusable_repository_files",
]

GIT_FILES = ("HEAD", "config", "config.worktree", "index", "commondir", "info/exclude")
"""The files of a git dir that git opens on the way to any command of ours."""

_CHUNK = 1 << 20


def _open_regular(path: Path | str) -> int | None:
    """A descriptor on ``path`` if it is a regular file (opened non-blocking), else None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC | os.O_NOCTTY)
    except OSError:
        return None
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            return fd
    except OSError:
        pass
    os.close(fd)
    return None


def read_regular_file(path: Path | str, limit: int = 1 << 16) -> bytes | None:
    """The first ``limit`` bytes of the regular file ``path``; None when it is missing,
    unreadable or not a regular file (a FIFO, device, socket or folder)."""
    fd = _open_regular(path)
    if fd is None:
        return None
    try:
        with os.fdopen(fd, "rb", closefd=True) as f:
            return f.read(limit)
    except OSError:
        return None


def copy_regular_file(source: Path | str, target: Path | str, limit: int) -> bool:
    """Copy the regular file ``source`` (at most ``limit`` bytes, else nothing) to a new
    ``target``; whether it was copied."""
    fd = _open_regular(source)
    if fd is None:
        return False
    try:
        with os.fdopen(fd, "rb", closefd=True) as src:
            if os.fstat(src.fileno()).st_size > limit:
                return False
            with open(target, "xb") as out:
                copied = 0
                while chunk := src.read(_CHUNK):
                    copied += len(chunk)
                    if copied > limit:
                        break
                    out.write(chunk)
        if copied > limit:
            os.unlink(target)
            return False
        return True
    except OSError:
        return False


def git_dir_of(top: Path) -> Path | None:
    """The git dir of the work tree ``top``: ``.git`` itself, or where a ``.git`` file
    (worktree, submodule: ``gitdir: …``) points; None when there is neither."""
    dot_git = top / ".git"
    try:
        mode = os.stat(dot_git).st_mode
    except OSError:
        return None
    if stat.S_ISDIR(mode):
        return dot_git
    text = read_regular_file(dot_git, 4096) if stat.S_ISREG(mode) else None
    if text is None:
        return None
    line = text.decode("utf-8", errors="replace").strip()
    if not line.startswith("gitdir:"):
        return None
    target = Path(line[len("gitdir:") :].strip())
    return target if target.is_absolute() else top / target


_INCLUDE = re.compile(rb"^\s*path\s*=\s*(.*?)\s*$", re.IGNORECASE | re.MULTILINE)


def included_files(config: Path, home: str | None = None) -> list[Path]:
    """The files ``config`` includes (``include.path``, ``includeIf.*.path``), as git would
    find them (relative to the config's folder, ``~`` the user's home), nested ones too."""
    found: list[Path] = []
    pending = [config]
    while pending and len(found) < 64:
        data = read_regular_file(pending.pop(), 1 << 20)
        for raw in _INCLUDE.findall(data or b""):
            text = os.fsdecode(raw).strip().strip('"')
            if text.startswith("~/"):
                text = (home or os.path.expanduser("~")) + text[1:]
            target = Path(text) if os.path.isabs(text) else config.parent / text
            if target not in found:
                found.append(target)
                pending.append(target)
    return found


def irregular_files(git_dir: Path, names: Iterable[str] = GIT_FILES) -> list[str]:
    """Which of ``names`` in ``git_dir`` (and, for a linked worktree, in its common dir), and
    of the files their ``config`` includes, exist but are not regular files: git would block
    or misbehave opening them."""
    found: list[str] = []
    dirs = [git_dir]
    pointer = read_regular_file(git_dir / "commondir", 4096)
    if pointer is not None:
        common = Path(pointer.decode("utf-8", errors="replace").strip())
        dirs.append(common if common.is_absolute() else git_dir / common)
    paths = [folder / name for folder in dirs for name in names]
    for folder in dirs:
        paths += included_files(folder / "config")
    for path in paths:
        try:
            mode = os.stat(path).st_mode
        except FileNotFoundError:
            continue
        except OSError:
            found.append(str(path))
            continue
        if not stat.S_ISREG(mode):
            found.append(str(path))
    return found


def unusable_repository_files(folder: Path) -> list[str]:
    """For the repository ``folder`` is in (the nearest ``.git`` at or above it): the files
    git opens first that exist but are not regular files; [] when all are fine or there is
    no repository."""
    for parent in (folder, *folder.parents):
        if os.path.lexists(parent / ".git"):
            git_dir = git_dir_of(parent)
            return [str(parent / ".git")] if git_dir is None else irregular_files(git_dir)
    return []
