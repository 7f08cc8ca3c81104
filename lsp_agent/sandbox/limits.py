"""How much one command may take: processes, memory, in-memory files, output
(``sandbox.limits``, docs/configuration.md).

- **processes** (tasks: processes and threads at once): a ``pids`` cgroup per command where
  one can be made (``lsp_agent.sandbox.cgroup``; the only limit that holds for root), else
  ``RLIMIT_NPROC``. That limit counts *all* the user's tasks, so it is set to the number the
  user has now plus the limit: the command can add at most that many (root is exempt from it,
  so as root without a cgroup the count is watched only). A command that reaches the limit
  is stopped (a fork bomb keeps retrying, so waiting would only burn the timeout), with a
  message that says so.
- **memory**: ``RLIMIT_DATA`` per process (its writable private memory: heap, ``mmap``
  allocations; not the address space, so runtimes that reserve large ranges still start).
- **in-memory files**: each of the sandbox's writable ``tmpfs`` folders (``/tmp``, ``/run``,
  the empty ``$HOME``) gets this size (bubblewrap ``--size``); a write beyond it fails with
  "No space left on device".
- **output**: the command's output is read as it comes (only its tail is kept); past this
  many bytes the command is stopped, with a message that says so.
"""

from __future__ import annotations

import os
import resource
from collections.abc import Callable
from typing import Final

import attrs

from lsp_agent.sandbox.cgroup import CommandCgroup, PidsHierarchy
from lsp_agent.system import procfs

__all__ = ["MIB", "CommandLimits", "LimitWatch", "nproc_rlimit"]

MIB: Final = 1024 * 1024


@attrs.frozen(kw_only=True)
class CommandLimits:
    """``sandbox.limits``; None: not bounded."""

    processes: int | None = 1024
    memory_mb: int | None = 8192
    tmp_mb: int | None = 1024
    output_mb: int | None = 100

    @classmethod
    def configured(cls, **values: int) -> CommandLimits:
        """From ``sandbox.limits``, where ``0`` means not bounded."""
        return cls(**{name: value or None for name, value in values.items()})

    @property
    def tmp_bytes(self) -> int | None:
        return None if self.tmp_mb is None else self.tmp_mb * MIB

    @property
    def output_bytes(self) -> int | None:
        return None if self.output_mb is None else self.output_mb * MIB


def nproc_rlimit(processes: int, uid: int) -> int | None:
    """``RLIMIT_NPROC`` that lets a new command add ``processes`` tasks to the ``uid``'s
    current ones (None for root, which the kernel exempts)."""
    if uid == 0:
        return None
    return _tasks_of(uid) + processes


def _tasks_of(uid: int) -> int:
    count = 0
    for pid in procfs.pids():
        try:
            if os.stat(f"/proc/{pid}").st_uid != uid:
                continue
            count += len(os.listdir(f"/proc/{pid}/task"))
        except OSError:
            continue
    return count


class LimitWatch:
    """One command's limits at run time: what its first process gets before it runs, the
    cgroup it is put in, and whether a limit was reached."""

    def __init__(self, limits: CommandLimits, hierarchy: PidsHierarchy | None) -> None:
        self.limits = limits
        self._hierarchy = hierarchy
        self._cgroup: CommandCgroup | None = None
        self._rlimits: list[tuple[int, int]] = []
        self._root_pid: int | None = None
        self.reached: str | None = None
        """What was reached, for the message (set by :meth:`check`)."""
        if limits.memory_mb is not None:
            self._rlimits.append((resource.RLIMIT_DATA, limits.memory_mb * MIB))
        if limits.processes is not None and hierarchy is not None:
            self._cgroup = hierarchy.create(limits.processes)
        if limits.processes is not None and self._cgroup is None:
            nproc = nproc_rlimit(limits.processes, os.getuid())
            if nproc is not None:
                self._rlimits.append((resource.RLIMIT_NPROC, nproc))

    def preexec(self) -> Callable[[], None] | None:
        """What the command's first process runs before ``exec``: the rlimits (never above
        a hard limit already there)."""
        rlimits = list(self._rlimits)
        if not rlimits:
            return None

        def apply() -> None:
            for number, value in rlimits:
                soft, hard = resource.getrlimit(number)
                bound = value if hard == resource.RLIM_INFINITY else min(value, hard)
                if soft == resource.RLIM_INFINITY or soft > bound:
                    resource.setrlimit(number, (bound, bound))

        return apply

    def started(self, pid: int) -> None:
        """The command's first process exists (not yet running the command): put it in the
        cgroup."""
        self._root_pid = pid
        if self._cgroup is not None and not self._cgroup.attach(pid):
            self._release()

    def check(self) -> bool:
        """Whether a process limit was reached (then :attr:`reached` says which)."""
        processes = self.limits.processes
        if processes is None or self.reached is not None:
            return self.reached is not None
        if self._cgroup is not None:
            hit = self._cgroup.limit_hit()
        elif self._root_pid is not None:
            hit = _descendants(self._root_pid) >= processes * 9 // 10
        else:
            hit = False
        if hit:
            self.reached = (
                f"it reached the limit of {processes} processes (sandbox.limits.processes)"
            )
        return hit

    def output_exceeded(self, total: int) -> bool:
        """Whether ``total`` bytes of output are over the limit (then :attr:`reached` says
        so)."""
        limit = self.limits.output_bytes
        if limit is None or total <= limit:
            return False
        if self.reached is None:
            self.reached = (
                f"it wrote more than {self.limits.output_mb} MB of output "
                "(sandbox.limits.output_mb)"
            )
        return True

    def close(self) -> None:
        self._release()

    def _release(self) -> None:
        if self._cgroup is not None and self._hierarchy is not None:
            self._hierarchy.release(self._cgroup)
        self._cgroup = None


def _descendants(root: int) -> int:
    """How many live processes are below ``root`` (a fork bomb's are)."""
    children: dict[int, list[int]] = {}
    for pid in procfs.pids():
        stat = procfs.read_stat(pid)
        if stat is not None and stat.state not in ("Z", "X"):
            children.setdefault(stat.ppid, []).append(pid)
    count = 0
    todo = [root]
    while todo:
        for child in children.get(todo.pop(), []):
            count += 1
            todo.append(child)
    return count
