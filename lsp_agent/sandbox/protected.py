"""Protected files read-only inside the sandbox, including the ones that do not exist yet.

At the top of each writable folder, the protected names (``SANDBOX_READ_ONLY`` in
``core/permission/protected.py``) are mounted read-only over the read-write workspace, so a
command cannot plant a git hook, an ``.envrc`` or a ``.vscode/tasks.json`` that something
runs later:

- an existing file or folder is bound read-only onto itself (a symlink is left alone: the
  link itself cannot be mounted);
- in a real ``.git`` folder only ``config``, ``hooks`` and ``info`` are read-only (missing
  ``hooks``/``info`` folders are made first, empty, as ``git init`` would), so ``git add`` and
  ``git commit`` from ``bash`` still write the index, objects and refs; a ``.git`` *file* (a
  worktree's pointer) is read-only whole;
- a missing name (but ``.lsp-agent.json``) gets an empty placeholder folder for the
  command's lifetime, bound read-only: nothing can be created under it or in its place. The
  placeholder is made by the agent before the command and removed after it (only while
  empty); commands running at the same time share it, the last one removes it. An empty
  folder under a protected *file* name found at the start (left by a crash) is adopted and
  removed the same way.
"""

from __future__ import annotations

import contextlib
import os
import stat
import threading
from collections.abc import Callable, Sequence

from lsp_agent.core.permission.protected import PROTECTED_FOLDERS, SANDBOX_READ_ONLY

__all__ = ["ReadOnlyPlaces"]

_GIT_PARTS = {".git/config", ".git/hooks", ".git/info"}
_GIT_FOLDERS = (".git/hooks", ".git/info")
_NO_PLACEHOLDER = frozenset({".lsp-agent.json"})
"""Read-only when present, no placeholder when missing: the agent (another session) reads
it at start and a folder in its place would be a configuration error; an untrusted project
file may only tighten anyway (docs/configuration.md)."""


class ReadOnlyPlaces:
    """The protected places of one agent's commands, and the placeholders in use."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._placeholders: dict[str, int] = {}

    def claim(self, folders: Sequence[str]) -> tuple[tuple[str, ...], Callable[[], None]]:
        """The paths to mount read-only for a command writing ``folders`` (real paths), and
        the call that gives the placeholders back once it ended (call it exactly once)."""
        found: list[str] = []
        claimed: list[str] = []
        with self._lock:
            for folder in dict.fromkeys(folders):
                if folder == "/" or not os.path.isdir(folder):
                    continue
                found += _git_places(folder)
                for name in SANDBOX_READ_ONLY:
                    if name in _GIT_PARTS:
                        continue
                    path = os.path.join(folder, name)
                    place = self._place(
                        path,
                        file_name=name not in PROTECTED_FOLDERS,
                        placeholder=name not in _NO_PLACEHOLDER,
                    )
                    if place == "placeholder":
                        claimed.append(path)
                    if place is not None:
                        found.append(path)
        released = threading.Event()

        def release() -> None:
            if released.is_set():
                return
            released.set()
            self._release(claimed)

        return tuple(dict.fromkeys(found)), release

    def _place(self, path: str, *, file_name: bool, placeholder: bool) -> str | None:
        """``existing``, ``placeholder`` (counted) or None (a link, or missing and no
        placeholder wanted: left alone)."""
        if path in self._placeholders:
            self._placeholders[path] += 1
            return "placeholder"
        try:
            found = os.lstat(path)
        except FileNotFoundError:
            if not placeholder:
                return None
            try:
                os.mkdir(path, 0o755)
            except OSError:
                return None
            self._placeholders[path] = 1
            return "placeholder"
        except OSError:
            return None
        if stat.S_ISLNK(found.st_mode):
            return None
        if file_name and stat.S_ISDIR(found.st_mode) and not os.listdir(path):
            self._placeholders[path] = 1  # an empty folder under a file's name: ours, left over
            return "placeholder"
        return "existing"

    def _release(self, paths: Sequence[str]) -> None:
        with self._lock:
            for path in paths:
                left = self._placeholders.get(path, 0) - 1
                if left > 0:
                    self._placeholders[path] = left
                    continue
                self._placeholders.pop(path, None)
                with contextlib.suppress(OSError):
                    os.rmdir(path)  # only while empty: whatever someone put there stays


def _git_places(folder: str) -> list[str]:
    git = os.path.join(folder, ".git")
    try:
        found = os.lstat(git)
    except OSError:
        return []
    if stat.S_ISREG(found.st_mode):
        return [git]
    if not stat.S_ISDIR(found.st_mode):
        return []
    places: list[str] = []
    for name in _GIT_FOLDERS:
        path = os.path.join(folder, name)
        with contextlib.suppress(FileExistsError, OSError):
            os.mkdir(path, 0o755)
        with contextlib.suppress(OSError):
            if stat.S_ISDIR(os.lstat(path).st_mode):
                places.append(path)
    config = os.path.join(folder, ".git/config")
    with contextlib.suppress(OSError):
        if stat.S_ISREG(os.lstat(config).st_mode):
            places.append(config)
    return places
