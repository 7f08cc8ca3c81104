"""The temporary files of atomic writes, named and recorded so recovery can remove what a
killed process left behind — and nothing else.

A file tool writes ``.<name>.lsp-agent-<pid>-<ticks>-<8 hex>.tmp`` beside the target, then
renames it into place. ``pid`` and ``ticks`` (its start time, ``system.owner``) identify the
writing process, so a live writer's file is never mistaken for a dead one's, and a user's
own ``*.tmp`` never matches. Before the first temporary file in a folder, the folder is
appended (and ``fsync``-ed) to this process's journal, ``<data>/temp-files/<pid>-<ticks>``,
so recovery knows where to look without scanning the disk. A process opening the database
(``recovery.recover``) sweeps the journals of dead owners: in each folder named, only the
regular files whose name carries that dead owner's identity are removed, then the journal.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import secrets
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

from lsp_agent.system import beneath
from lsp_agent.system.atomic import fsync_folder
from lsp_agent.system.owner import owner_alive
from lsp_agent.system.private_files import private_folder
from lsp_agent.system.procfs import start_ticks

__all__ = [
    "TempJournal",
    "create_temp",
    "create_temp_at",
    "current_journal",
    "parse_temp_name",
    "temp_name",
    "use_journal",
]

_TEMP_NAME = re.compile(r"\..*\.lsp-agent-(\d+)-(\d+)-[0-9a-f]{8}\.tmp", re.DOTALL)
_JOURNAL_NAME = re.compile(r"(\d+)-(\d+)")
_MAX_STEM_BYTES = 160
"""Room for the suffix (about 45 bytes) within a 255-byte file name."""
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_CLOEXEC", 0)

_log = logging.getLogger(__name__)


def _identity() -> tuple[int, int]:
    """This process: its pid and start ticks (0 where ``/proc`` cannot tell)."""
    pid = os.getpid()
    return pid, start_ticks(pid) or 0


def temp_name(name: str) -> str:
    """A fresh temporary name for a file called ``name``, carrying this process's identity."""
    pid, ticks = _identity()
    stem = os.fsencode(name)[:_MAX_STEM_BYTES].decode("utf-8", "ignore") or "file"
    return f".{stem}.lsp-agent-{pid}-{ticks}-{secrets.token_hex(4)}.tmp"


def parse_temp_name(name: str) -> tuple[int, int] | None:
    """The (pid, ticks) a temporary name carries; None for any other name."""
    match = _TEMP_NAME.fullmatch(name)
    return (int(match.group(1)), int(match.group(2))) if match else None


def create_temp(folder: str, name: str) -> tuple[str, int]:
    """Create a new temporary file for ``name`` in ``folder``: its path and an open ``fd``.

    The folder is recorded in the journal first (when one is in use). Created with mode
    ``0o666``, so a new file gets exactly the umask's bits, as ``open()`` would.
    """
    journal = current_journal()
    if journal is not None:
        journal.note(folder)
    while True:
        temp = os.path.join(folder, temp_name(name))
        try:
            return temp, os.open(temp, _CREATE_FLAGS, 0o666)
        except FileExistsError:
            continue


def create_temp_at(folder_fd: int, folder: str, name: str) -> tuple[str, int]:
    """:func:`create_temp` in the folder open as ``folder_fd`` (``folder``: its path, for the
    journal): the temporary file's name in that folder and an open ``fd``. The file is
    created ``O_NOFOLLOW`` relative to the descriptor (``system.beneath``)."""
    journal = current_journal()
    if journal is not None:
        journal.note(folder)
    while True:
        temp = temp_name(name)
        try:
            return temp, os.open(temp, _CREATE_FLAGS | os.O_NOFOLLOW, 0o666, dir_fd=folder_fd)
        except FileExistsError:
            continue


class TempJournal:
    """The folders each process wrote temporary files in (one journal file per process)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._lock = threading.Lock()
        self._noted: set[str] = set()
        self._noted_by = 0

    def note(self, target: str) -> None:
        """Record ``target`` durably, once per process; a failure is logged, never raised:
        the write goes on, only its cleanup after a crash is lost."""
        folder = os.path.abspath(target)
        with self._lock:
            pid, ticks = _identity()
            if self._noted_by != pid:  # a forked child keeps its own journal
                self._noted, self._noted_by = set(), pid
            if folder in self._noted:
                return
            try:
                self._append(f"{pid}-{ticks}", folder)
            except OSError as error:
                _log.warning("could not record temporary files in %s: %s", folder, error)
                return
            self._noted.add(folder)

    def _append(self, journal_name: str, folder: str) -> None:
        private_folder(self.folder)
        path = self.folder / journal_name
        new = not path.exists()
        line = json.dumps(folder) + "\n"
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.write(fd, line.encode("utf-8", "surrogateescape"))
            os.fsync(fd)
        finally:
            os.close(fd)
        if new:
            fsync_folder(self.folder)

    def sweep(self, alive: Callable[[dict[str, Any]], bool] = owner_alive) -> list[str]:
        """Remove the temporary files of every dead owner, then its journal; the paths
        removed. Blocking (call it in a thread)."""
        try:
            entries = sorted(os.listdir(self.folder))
        except FileNotFoundError:
            return []
        removed: list[str] = []
        for entry in entries:
            match = _JOURNAL_NAME.fullmatch(entry)
            if match is None:
                continue
            pid, ticks = int(match.group(1)), int(match.group(2))
            if (pid, ticks) == _identity() or alive({"pid": pid, "startTicks": ticks or None}):
                continue
            journal = self.folder / entry
            removed += _remove_temps(journal, pid, ticks)
            with contextlib.suppress(FileNotFoundError):
                journal.unlink()
        return removed


def _remove_temps(journal: Path, pid: int, ticks: int) -> list[str]:
    try:
        lines = journal.read_bytes().decode("utf-8", "surrogateescape").splitlines()
    except OSError as error:
        _log.warning("could not read %s: %s", journal, error)
        return []
    removed: list[str] = []
    for line in dict.fromkeys(lines):
        try:
            folder = json.loads(line)
        except ValueError:
            continue  # a line cut short by the crash
        if not isinstance(folder, str):
            continue
        try:
            removed += _remove_in(folder, pid, ticks)
        except (OSError, ValueError):
            continue  # the folder is gone, unreadable, or a link now: nothing to do there
    return removed


def _remove_in(folder: str, pid: int, ticks: int) -> list[str]:
    """Remove the dead owner's temporary files in ``folder``, reached without following a
    link (``system.beneath``): a folder swapped for a link is never swept."""
    removed: list[str] = []
    with beneath.folder_fd(folder) as fd:
        listing = os.open(".", os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC, dir_fd=fd)
        try:
            with os.scandir(listing) as found:  # scandir works on its own copy of it
                mine = [
                    e.name
                    for e in found
                    if parse_temp_name(e.name) == (pid, ticks) and e.is_file(follow_symlinks=False)
                ]
        finally:
            os.close(listing)
        for name in mine:
            path = os.path.join(folder, name)
            try:
                os.unlink(name, dir_fd=fd)
            except FileNotFoundError:
                continue
            except OSError as error:
                _log.warning("could not remove the temporary file %s: %s", path, error)
                continue
            removed.append(path)
    return removed


_current: TempJournal | None = None


def use_journal(journal: TempJournal | None) -> None:
    """Make ``journal`` the one this process records its temporary files in. One per
    process, like the identity it records: set where the process opens its data folder."""
    global _current
    _current = journal


def current_journal() -> TempJournal | None:
    return _current
