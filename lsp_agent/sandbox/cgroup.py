"""A process-count limit that holds for root too: a ``pids`` cgroup per command, where one
can be made.

``RLIMIT_NPROC`` is never enforced for uid 0 (the kernel exempts root's user), and a user
namespace does not change that (root's sandbox is still uid 0 outside). A cgroup's
``pids.max`` holds whoever the process is. So where this process may create a child cgroup
under a ``pids`` controller — cgroup v1's ``pids`` hierarchy, or a v2 cgroup whose
``cgroup.subtree_control`` enables ``pids`` (root in a container, a delegated subtree) — each
command gets its own, ``lsp-agent-<pid>-<n>``, with ``pids.max`` set, the command's process
moved in before it is released, the ``max`` event counter read to tell the limit was hit,
and the folder removed when the command has ended (one left behind by a killed agent is
removed by the next agent that finds its owner dead).
"""

from __future__ import annotations

import contextlib
import itertools
import logging
import os
import re
from collections.abc import Iterator
from typing import Final

__all__ = ["CommandCgroup", "PidsHierarchy", "find_pids_hierarchy"]

_PREFIX: Final = "lsp-agent-"
_NAME = re.compile(r"lsp-agent-(\d+)-\d+")

_log = logging.getLogger(__name__)


class CommandCgroup:
    """One command's ``pids`` cgroup (see the module docstring)."""

    def __init__(self, path: str) -> None:
        self.path = path

    def attach(self, pid: int) -> bool:
        """Move ``pid`` (and so everything it starts) in; whether that worked."""
        try:
            _write(os.path.join(self.path, "cgroup.procs"), str(pid))
        except OSError as error:
            _log.warning("could not move the command into %s: %s", self.path, error)
            return False
        return True

    def limit_hit(self) -> bool:
        """Whether a fork was refused because of ``pids.max``."""
        try:
            with open(os.path.join(self.path, "pids.events"), encoding="ascii") as f:
                for line in f:
                    key, _, value = line.partition(" ")
                    if key == "max" and value.strip() not in ("", "0"):
                        return True
        except OSError:
            pass
        return False

    def remove(self) -> bool:
        """Remove the (empty) cgroup; False while processes are still in it."""
        try:
            os.rmdir(self.path)
        except FileNotFoundError:
            return True
        except OSError:
            return False
        return True


class PidsHierarchy:
    """A folder where per-command ``pids`` cgroups can be made."""

    def __init__(self, parent: str) -> None:
        self.parent = parent
        self._numbers: Iterator[int] = itertools.count(1)
        self._leftover: list[CommandCgroup] = []
        self._swept = False

    def create(self, max_pids: int) -> CommandCgroup | None:
        """A new cgroup with ``pids.max`` = ``max_pids``; None when that fails."""
        self._tidy()
        path = os.path.join(self.parent, f"{_PREFIX}{os.getpid()}-{next(self._numbers)}")
        try:
            os.mkdir(path)
        except OSError as error:
            _log.warning("could not create the command's cgroup %s: %s", path, error)
            return None
        group = CommandCgroup(path)
        try:
            _write(os.path.join(path, "pids.max"), str(max_pids))
        except OSError as error:
            _log.warning("could not limit the command's cgroup %s: %s", path, error)
            group.remove()
            return None
        return group

    def release(self, group: CommandCgroup) -> None:
        """Remove ``group`` now, or at the next :meth:`create` if processes remain in it."""
        if not group.remove():
            self._leftover.append(group)

    def _tidy(self) -> None:
        self._leftover = [group for group in self._leftover if not group.remove()]
        if self._swept:
            return
        self._swept = True
        with contextlib.suppress(OSError):
            for name in os.listdir(self.parent):
                match = _NAME.fullmatch(name)
                if match and not _alive(int(match[1])):
                    CommandCgroup(os.path.join(self.parent, name)).remove()


def find_pids_hierarchy() -> PidsHierarchy | None:
    """Where this process may create ``pids`` cgroups, or None (checked by making one)."""
    for parent in _candidates():
        probe = os.path.join(parent, f"{_PREFIX}{os.getpid()}-0")
        try:
            os.mkdir(probe)
        except FileExistsError:
            pass
        except OSError:
            continue
        ok = os.path.exists(os.path.join(probe, "pids.max"))
        with contextlib.suppress(OSError):
            os.rmdir(probe)
        if ok:
            return PidsHierarchy(parent)
    return None


def _candidates() -> list[str]:
    """This process's cgroup folder in each hierarchy with a ``pids`` controller."""
    try:
        with open("/proc/self/cgroup", encoding="utf-8") as f:
            own = [line.rstrip("\n").split(":", 2) for line in f]
        with open("/proc/self/mountinfo", encoding="utf-8") as f:
            mounts = [line.split() for line in f]
    except OSError:
        return []
    found: list[str] = []
    for fields in mounts:
        if "-" not in fields:
            continue
        dash = fields.index("-")
        fstype, options = fields[dash + 1], fields[dash + 3].split(",")
        root, point = fields[3], fields[4]
        if fstype == "cgroup" and "pids" in options:
            path = next((p for _, c, p in own if "pids" in c.split(",")), None)
        elif fstype == "cgroup2":
            path = next((p for h, c, p in own if h == "0" and c == ""), None)
        else:
            continue
        if path is None:
            continue
        relative = os.path.relpath(path, root) if path.startswith(root) else None
        if relative is None or relative.startswith(".."):
            continue
        folder = os.path.normpath(os.path.join(point, relative))
        if fstype == "cgroup2" and "pids" not in _read(folder, "cgroup.subtree_control"):
            continue
        found.append(folder)
    return found


def _read(folder: str, name: str) -> str:
    try:
        with open(os.path.join(folder, name), encoding="ascii") as f:
            return f.read()
    except OSError:
        return ""


def _write(path: str, value: str) -> None:
    with open(path, "w", encoding="ascii") as f:
        f.write(value)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
