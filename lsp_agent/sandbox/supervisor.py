"""The supervisor of one unsandboxed command: nothing the command starts outlives it.

Run as ``python -I -S supervisor.py STATUS_FD GRACE -- COMMAND…`` (``STATUS_FD`` ``-``: no
report, for a launch another process starts; the standard library and
``lsp_agent.system`` only, no site-packages, so it starts in milliseconds). A process that calls
``setsid`` or double-forks leaves the command's process group, so stopping the group misses
it; this process is a *child subreaper* (``PR_SET_CHILD_SUBREAPER``), so every orphan below
it is re-parented to it instead of to init, and it can find them all again.

It starts the command as its child and waits. When the command exits, it writes
``leftovers N`` (the processes still running below it) to ``STATUS_FD``, ends them, and exits
the way the command did (same exit code, or killed by the same signal). ``SIGTERM``,
``SIGINT`` or ``SIGHUP`` — the agent stopping the group, or the agent dying
(``PR_SET_PDEATHSIG``) — end the command and everything below it the same way. Ending means
``SIGTERM`` (and ``SIGCONT``), then ``SIGKILL`` after ``GRACE`` seconds, until none is left.

As root, the command also loses ``CAP_SYS_PTRACE``, ``CAP_SYS_ADMIN`` and ``CAP_PERFMON``
(from its capability bounding set): each would let it read the non-dumpable agent's
``/proc/<pid>/environ``.
"""

from __future__ import annotations

import contextlib
import os
import resource
import signal
import sys
import time
from collections.abc import Callable, Sequence
from typing import NoReturn

if not __package__:  # run as a script (``-I -S``): lsp_agent is found after the standard library
    sys.path.append(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))

from lsp_agent.system import procfs
from lsp_agent.system.prctl import (
    PR_CAPBSET_DROP,
    PR_SET_CHILD_SUBREAPER,
    PR_SET_PDEATHSIG,
    prctl_function,
)

CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON = 19, 21, 38
_INSPECTING_CAPS = (CAP_SYS_PTRACE, CAP_SYS_ADMIN, CAP_PERFMON)
"""Each lets root read a non-dumpable process's ``/proc/<pid>/environ`` (measured on 6.18)."""

_STOP = frozenset({signal.SIGTERM, signal.SIGINT, signal.SIGHUP})
_WATCHED = frozenset({signal.SIGCHLD, *_STOP})
_POLL_SECONDS = 0.05
_USAGE = 2


class _Supervisor:
    def __init__(self, prctl: Callable[..., int] | None) -> None:
        self.prctl = prctl
        self.pid = os.getpid()
        self.main: int | None = None
        self.main_status: int | None = None

    def start(self, command: Sequence[str]) -> None:
        """Fork and exec ``command``; its signals and dispositions are ordinary again."""
        pid = os.fork()
        if pid == 0:  # pragma: no cover - runs in the child, which execs or exits
            try:
                self._become_command(command)
            finally:
                os._exit(127)
        self.main = pid

    def _become_command(self, command: Sequence[str]) -> None:  # pragma: no cover - child
        for number in (signal.SIGPIPE, signal.SIGXFSZ, *_STOP):
            with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
                signal.signal(number, signal.SIG_DFL)
        signal.pthread_sigmask(signal.SIG_SETMASK, set())
        if self.prctl is not None:
            self.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
            if os.geteuid() == 0:
                for capability in _INSPECTING_CAPS:  # unknown to an old kernel: EINVAL
                    self.prctl(PR_CAPBSET_DROP, capability, 0, 0, 0)
        if os.getppid() != self.pid:
            os._exit(125)  # the supervisor died before the signal was armed
        try:
            os.execv(command[0], list(command))
        except OSError as error:
            os.write(2, f"{command[0]}: {error.strerror}\n".encode())
            os._exit(127)

    def wait_for_main(self) -> bool:
        """Until the command exits (True) or a stop signal arrives (False)."""
        while True:
            self.reap()
            if self.main_status is not None:
                return True
            info = signal.sigwaitinfo(_WATCHED)
            if info.si_signo in _STOP:
                return False

    def reap(self) -> None:
        """Collect every child that has exited (orphans re-parented here included)."""
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == 0:
                return
            if pid == self.main:
                self.main_status = status

    def descendants(self) -> list[int]:
        """Every live process below this one."""
        children: dict[int, list[int]] = {}
        for pid in procfs.pids():
            stat = procfs.read_stat(pid)
            if stat is not None and stat.state not in ("Z", "X"):
                children.setdefault(stat.ppid, []).append(pid)
        found: list[int] = []
        todo = [self.pid]
        while todo:
            for child in children.get(todo.pop(), []):
                found.append(child)
                todo.append(child)
        return found

    def end_all(self, grace: float) -> None:
        """``SIGTERM`` + ``SIGCONT`` to everything below, ``SIGKILL`` after ``grace``."""
        signalled: set[int] = set()
        deadline = time.monotonic() + grace
        while True:
            self.reap()
            alive = self.descendants()
            if not alive:
                return
            if time.monotonic() >= deadline:
                break
            for pid in alive:
                if pid not in signalled:
                    _kill(pid, signal.SIGTERM)
                    _kill(pid, signal.SIGCONT)
                    signalled.add(pid)
            signal.sigtimedwait({signal.SIGCHLD}, _POLL_SECONDS)
        while alive:
            for pid in alive:
                _kill(pid, signal.SIGKILL)
            signal.sigtimedwait({signal.SIGCHLD}, _POLL_SECONDS)
            self.reap()
            alive = self.descendants()

    def exit_like_main(self) -> NoReturn:
        status = self.main_status
        if status is None:
            os._exit(125)
        if os.WIFSIGNALED(status):
            number = os.WTERMSIG(status)
            resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
            with contextlib.suppress(OSError, ValueError):  # SIGKILL has no handler to reset
                signal.signal(number, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {number})
            os.kill(self.pid, number)
            os._exit(128 + number)  # not reached unless the signal does not kill
        os._exit(os.waitstatus_to_exitcode(status))


def _kill(pid: int, number: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.kill(pid, number)


def _report(fd: int, leftovers: int) -> None:
    try:
        os.write(fd, f"leftovers {leftovers}\n".encode())
        os.close(fd)
    except OSError:
        pass  # the agent stopped listening; ending the processes is what matters


def main(argv: Sequence[str]) -> NoReturn:
    if len(argv) < 5 or argv[3] != "--":
        os.write(2, b"usage: supervisor.py STATUS_FD GRACE -- COMMAND...\n")
        os._exit(_USAGE)
    status_fd = -1 if argv[1] == "-" else int(argv[1])  # "-": nobody to report to
    grace, command = float(argv[2]), argv[4:]
    if status_fd >= 0:
        os.set_inheritable(status_fd, False)
    prctl = prctl_function()
    if prctl is not None:
        prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
        prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)  # the agent died: clean up
    signal.pthread_sigmask(signal.SIG_BLOCK, _WATCHED)
    supervisor = _Supervisor(prctl)
    supervisor.start(command)
    if supervisor.wait_for_main() and status_fd >= 0:
        _report(status_fd, len(supervisor.descendants()))
    supervisor.end_all(grace)
    supervisor.exit_like_main()


if __name__ == "__main__":
    main(sys.argv)
