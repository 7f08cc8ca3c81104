"""Spill files: whole tool outputs too large for the model, kept under the data dir.

Layout: ``<spill_root>/<session>/<tool call>.txt`` with ``spill_root`` =
``<data_dir>/tool-output``. Folders are ``0700`` (tightened if found looser) and files
``0600``; a file appears whole or not at all (written and synced under a temporary name,
``system.atomic.write_temp``, then linked into place). Ids become file names only when they
are plainly safe; anything else is replaced by a safe name with a hash.
Each session may read its own folder (``ToolRunContext.extra_roots``); :func:`prune_spill_files`
removes files older than a week at start-up.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import os
import re
from pathlib import Path

from lsp_agent.system.atomic import write_temp
from lsp_agent.system.private_files import private_folder

__all__ = [
    "SPILL_MAX_AGE",
    "prune_spill_files",
    "session_spill_dir",
    "write_spill",
]

_log = logging.getLogger(__name__)

SPILL_MAX_AGE = 7 * 24 * 60 * 60.0
"""Seconds a spill file is kept: a week."""

_SAFE_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,99}")
_UNSAFE_CHARS = re.compile(r"[^A-Za-z0-9_.-]")
_SUFFIX = ".txt"
_MAX_TWINS = 100


def session_spill_dir(spill_root: Path, session_id: str) -> Path:
    """The folder holding ``session_id``'s spill files (it may not exist yet)."""
    return spill_root / _file_name(session_id)


def write_spill(spill_root: Path, session_id: str, tool_call_id: str, data: bytes) -> Path:
    """Save ``data`` as ``<session folder>/<tool_call_id>.txt``; answer its path.

    Blocking (call it in a thread). If that name is taken (a provider that reuses call ids),
    ``<tool_call_id>-2.txt`` and so on: a file, once written, never changes. Raises
    ``OSError`` when the file cannot be written; nothing half-written is left behind.
    """
    folder = session_spill_dir(spill_root, session_id)
    stem = _file_name(tool_call_id)

    def write_temp_file() -> str:
        private_folder(spill_root)  # tightened too, if an older version made it looser
        private_folder(folder)
        return write_temp(str(folder / stem), data)  # created 0600

    try:
        temp = write_temp_file()
    except FileNotFoundError:  # the folder was pruned (another process starting up) just now
        temp = write_temp_file()
    try:
        return _publish(temp, folder, stem)
    finally:
        _remove(temp)


def _publish(temp: str, folder: Path, stem: str) -> Path:
    """Give ``temp`` its final name, one not taken yet."""
    for n in range(1, _MAX_TWINS + 1):
        target = folder / (f"{stem}{_SUFFIX}" if n == 1 else f"{stem}-{n}{_SUFFIX}")
        try:
            os.link(temp, target)
        except FileExistsError:
            continue
        except OSError:
            # No hard links on this file system: a rename, checked first (a concurrent twin
            # could still slip in between; call ids are unique in practice).
            if os.path.lexists(target):
                continue
            os.replace(temp, target)
        return target
    raise FileExistsError(f"{_MAX_TWINS} spill files named {stem}* already exist in {folder}")


def _remove(path: str) -> None:
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass
    except OSError as exc:
        _log.warning("could not remove %s: %s", path, exc)


def _file_name(raw: str) -> str:
    """``raw`` when it is a plain, safe file name; otherwise a safe name with a hash."""
    if _SAFE_NAME.fullmatch(raw):
        return raw
    digest = hashlib.sha256(raw.encode("utf-8", errors="surrogatepass")).hexdigest()[:16]
    return f"x{_UNSAFE_CHARS.sub('_', raw)[:60]}-{digest}"


def prune_spill_files(spill_root: Path, *, now: float, max_age: float = SPILL_MAX_AGE) -> int:
    """Delete spill files last modified more than ``max_age`` seconds before ``now``.

    Only regular files directly inside a session folder directly inside ``spill_root`` are
    candidates; symlinks (to files or folders) are never followed nor removed. A session folder
    left empty is removed too. Answers how many files were deleted. Blocking; errors on single
    entries are logged and skipped; a missing ``spill_root`` is simply nothing to do.
    """
    cutoff = now - max_age
    try:
        sessions = list(os.scandir(spill_root))
    except FileNotFoundError:
        return 0
    deleted = 0
    for session in sessions:
        try:
            if not session.is_dir(follow_symlinks=False):
                continue
            folder_old = session.stat(follow_symlinks=False).st_mtime < cutoff
            removed, kept = _prune_folder(session.path, cutoff)
        except OSError as exc:
            _log.warning("could not prune %s: %s", session.path, exc)
            continue
        deleted += removed
        if not kept and (removed or folder_old):
            # Not empty after all (a new spill just arrived): then it stays.
            with contextlib.suppress(OSError):
                os.rmdir(session.path)
    return deleted


def _prune_folder(folder: str, cutoff: float) -> tuple[int, bool]:
    """Old regular files in ``folder`` deleted: (how many, whether anything is left)."""
    removed = 0
    kept = False
    with os.scandir(folder) as entries:
        for entry in entries:
            try:
                old = (
                    entry.is_file(follow_symlinks=False)
                    and entry.stat(follow_symlinks=False).st_mtime < cutoff
                )
                if old:
                    os.unlink(entry.path)
                    removed += 1
                    continue
            except FileNotFoundError:
                continue
            except OSError as exc:
                _log.warning("could not prune %s: %s", entry.path, exc)
            kept = True
    return removed, kept
