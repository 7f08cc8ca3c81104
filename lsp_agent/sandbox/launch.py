"""How one command is started: in the bubblewrap sandbox, or under the supervisor.

:class:`CommandSandbox` holds the configured mode (``auto``, ``required``, ``off``), the
``allow_read`` list and the folders to hide, and turns a command's argv into a
:class:`Launch`: ``bwrap … -- argv`` where bubblewrap works (and the mode is not ``off``),
else ``python supervisor.py … -- argv`` (Linux) so nothing the command starts outlives it —
or :class:`SandboxUnavailable` when the mode is ``required`` and bubblewrap does not work.
In ``auto`` mode the first unsandboxed launch is logged as a warning (stderr for ``run``, the
server log for ``serve``) and each launch carries a notice for the tool result.

Either way the launch carries the command's limits (:class:`~lsp_agent.sandbox.limits.LimitWatch`)
and, when it can report, whether the command left processes running: the supervisor says
so, and in the sandbox a small ``/bin/sh`` reporter between the sandbox's own init and the
command counts what is still running in the sandbox once the command exits (the sandbox's
own processes never count; they are the reason a bare process-group check was wrong).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import time
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from lsp_agent.sandbox import protected
from lsp_agent.sandbox.availability import Availability, availability
from lsp_agent.sandbox.bwrap import bwrap_argv
from lsp_agent.sandbox.cgroup import PidsHierarchy, find_pids_hierarchy
from lsp_agent.sandbox.limits import CommandLimits, LimitWatch
from lsp_agent.sandbox.policy import policy_for
from lsp_agent.sandbox.root_only import ROOT_HOME, root_only_paths
from lsp_agent.system.credentials import credential_paths

__all__ = [
    "SUPERVISOR_MARGIN_SECONDS",
    "CommandSandbox",
    "Launch",
    "SandboxMode",
    "SandboxUnavailable",
]

SandboxMode = Literal["auto", "required", "off"]

SUPERVISOR_MARGIN_SECONDS: Final = 2.0
"""How much longer than its grace the supervisor gets before its group is killed."""

_SUPERVISOR: Final = str(Path(__file__).with_name("supervisor.py"))

_REPORTER: Final = """fd=$1; shift
"$@"
status=$?
n=0
for entry in /proc/[0-9]*; do
  pid=${entry#/proc/}
  if [ "$pid" = 1 ] || [ "$pid" = $$ ]; then continue; fi
  { IFS= read -r line < "$entry/stat"; } 2>/dev/null || continue
  state=${line##*) }
  case $state in Z*|X*) continue;; esac
  n=$((n+1))
done
echo "leftovers $n" 2>/dev/null >"/proc/self/fd/$fd"
exit $status
"""
"""Runs the command inside the sandbox (pid 2, below bubblewrap's init, pid 1), then writes
``leftovers N`` — every live process in the sandbox but init and itself — to the status
pipe and exits with the command's status (bubblewrap reports a signal as 128 + N either
way). Only shell built-ins after the command, so it starts nothing it would count; the pipe
is reopened through ``/proc`` because ``dash`` redirects only descriptors 0 to 9."""

_ROOT_ONLY_SECONDS: Final = 60.0
"""How long a scan of the root-only system files is reused."""

_log = logging.getLogger(__name__)


@attrs.frozen
class SandboxUnavailable:
    """``required`` and bubblewrap does not work here: the command must not run."""

    reason: str

    def message(self) -> str:
        return (
            f"The command was not run: the sandbox is required (sandbox.mode) but does not "
            f"work here: {self.reason}. Ask the user to fix that, or to set sandbox.mode to "
            '"auto" or "off".'
        )


class Launch:
    """One command's argv and what it needs around ``spawn``.

    ``pass_fds``: descriptors the child must inherit (the supervisor's status pipe). Call
    :meth:`spawned` once the child started (or failed to), :meth:`left_behind` after it
    exited, :meth:`close` at the end.
    """

    def __init__(
        self,
        argv: list[str],
        *,
        sandboxed: bool,
        on_close: Callable[[], None] | None = None,
        notice: str | None = None,
        status: tuple[int, int] | None = None,
        watch: LimitWatch | None = None,
    ) -> None:
        self.argv = argv
        self.sandboxed = sandboxed
        self._on_close = on_close
        self.notice = notice
        self._status = status
        self.pass_fds: tuple[int, ...] = (status[1],) if status is not None else ()
        self.watch = watch or LimitWatch(CommandLimits(processes=None, memory_mb=None), None)
        """The command's limits at run time (none given: none but the output's)."""

    @property
    def reports(self) -> bool:
        """Whether :meth:`left_behind` can tell (a status pipe was made for it)."""
        return self._status is not None

    @property
    def stop_margin(self) -> float:
        """Extra seconds before ``SIGKILL``: a supervisor ends its descendants itself."""
        return SUPERVISOR_MARGIN_SECONDS if self._status is not None and not self.sandboxed else 0.0

    def spawned(self) -> None:
        """Drop this process's copy of the status pipe's write end (so end of file comes)."""
        if self._status is not None and self._status[1] >= 0:
            os.close(self._status[1])
            self._status = (self._status[0], -1)

    def left_behind(self) -> bool:
        """Whether the supervisor (or the sandbox's reporter) said processes were still
        running when the command ended."""
        if self._status is None or self._status[0] < 0:
            return False
        os.set_blocking(self._status[0], False)
        try:
            report = os.read(self._status[0], 256).decode("ascii", "replace")
        except (BlockingIOError, OSError):
            return False
        words = report.split()
        return len(words) == 2 and words[0] == "leftovers" and words[1] != "0"

    def close(self) -> None:
        if self._on_close is not None:  # the sandbox's placeholders, once it has ended
            self._on_close()
        self.spawned()
        self.watch.close()
        if self._status is not None and self._status[0] >= 0:
            os.close(self._status[0])
            self._status = (-1, -1)


class CommandSandbox:
    """The sandbox settings of one agent, applied to each command.

    ``hidden``: folders no command may see (the data folder); the credential stores of the
    command's environment are hidden too. ``check``: how availability is found (default:
    bubblewrap tried once per process). ``limits``: ``sandbox.limits``; ``cgroups``: where
    per-command ``pids`` cgroups are made (looked for once; None where none can be).
    """

    def __init__(
        self,
        mode: SandboxMode = "off",
        *,
        allow_read: Sequence[str] = (),
        hidden: Sequence[str] = (),
        check: Callable[[Mapping[str, str], Sequence[str]], Availability] = availability,
        limits: CommandLimits | None = None,
        cgroups: Callable[[], PidsHierarchy | None] = find_pids_hierarchy,
    ) -> None:
        self.mode = mode
        self._read_only = protected.ReadOnlyPlaces()
        self._allow_read = tuple(allow_read)
        self._hidden = tuple(hidden)
        self._check = check
        self._warned = False
        self.limits = limits or CommandLimits()
        self._find_cgroups = cgroups
        self._cgroups: PidsHierarchy | None = None
        self._cgroups_looked = False
        self._root_only: tuple[float, tuple[str, ...]] | None = None

    async def availability(self, env: Mapping[str, str], avoid: Sequence[str]) -> Availability:
        """Whether bubblewrap works, taken from outside ``avoid`` (the folders a command may
        write)."""
        return await asyncio.to_thread(self._check, env, tuple(avoid))

    async def prepare(
        self,
        argv: Sequence[str],
        *,
        workdir: str,
        writable: Collection[str],
        env: Mapping[str, str],
        network: bool,
        grace: float,
        report: bool = True,
    ) -> Launch | SandboxUnavailable:
        """The launch of ``argv`` in ``workdir``; ``writable``: the folders it may change.
        ``report=False``: the launch is started by another process (an ACP client's
        terminal), which cannot inherit the supervisor's status pipe; it then has none."""
        if self.mode != "off":
            found = await self.availability(env, (*writable, workdir))
            if found.works and found.bwrap is not None:
                masked = await self._masked_as_root()
                home = env.get("HOME")
                homes = (ROOT_HOME,) if os.geteuid() == 0 and home != ROOT_HOME else ()
                policy = policy_for(
                    writable=[*writable, workdir],
                    allow_read=self._allow_read,
                    home=env.get("HOME"),
                    hidden=self._hidden,
                    network=network,
                    credentials=credential_paths(env),
                    masked=masked,
                    other_homes=homes,
                    tmp_bytes=self.limits.tmp_bytes if found.sizes else None,
                )
                read_only, release = self._read_only.claim(policy.writable)
                policy = attrs.evolve(policy, read_only=read_only)
                watch = await self._watch(report)
                if not report:
                    command = bwrap_argv(
                        found.bwrap, policy, workdir=workdir, command=argv, env=env
                    )
                    return Launch(command, sandboxed=True, on_close=release, watch=watch)
                read_end, write_end = os.pipe()
                os.set_inheritable(read_end, False)
                reported = ["/bin/sh", "-c", _REPORTER, "lsp-agent-sandbox", str(write_end)]
                command = bwrap_argv(
                    found.bwrap, policy, workdir=workdir, command=[*reported, *argv], env=env
                )
                return Launch(
                    command,
                    sandboxed=True,
                    on_close=release,
                    status=(read_end, write_end),
                    watch=watch,
                )
            if self.mode == "required":
                return SandboxUnavailable(found.reason)
            notice = f"Not sandboxed: {found.reason}."
            if not self._warned:
                self._warned = True
                _log.warning("commands run without the sandbox: %s", found.reason)
            return _supervised(argv, grace, notice, report, await self._watch(report))
        return _supervised(argv, grace, None, report, await self._watch(report))

    async def _watch(self, here: bool) -> LimitWatch:
        """The limits of one command, with its cgroup made where one can be. ``here``: this
        process starts it (else an ACP client does, and only the output limit applies)."""
        if not here:
            return LimitWatch(attrs.evolve(self.limits, processes=None, memory_mb=None), None)
        if not self._cgroups_looked and self.limits.processes is not None:
            self._cgroups_looked = True
            self._cgroups = await asyncio.to_thread(self._find_cgroups)
        return await asyncio.to_thread(LimitWatch, self.limits, self._cgroups)

    async def _masked_as_root(self) -> tuple[str, ...]:
        """The root-only system files, when the agent runs as root (a scan reused for a
        minute)."""
        if os.geteuid() != 0:
            return ()
        now = time.monotonic()
        if self._root_only is None or now - self._root_only[0] > _ROOT_ONLY_SECONDS:
            self._root_only = (now, await asyncio.to_thread(root_only_paths))
        return self._root_only[1]


def _supervised(
    argv: Sequence[str], grace: float, notice: str | None, report: bool, watch: LimitWatch
) -> Launch:
    if not sys.platform.startswith("linux"):
        return Launch(list(argv), sandboxed=False, notice=notice, watch=watch)
    if not report:
        command = [sys.executable, "-I", "-S", _SUPERVISOR, "-", f"{grace:g}", "--"]
        return Launch([*command, *argv], sandboxed=False, notice=notice, watch=watch)
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, False)
    command = [sys.executable, "-I", "-S", _SUPERVISOR, str(write_end), f"{grace:g}", "--"]
    return Launch(
        [*command, *argv],
        sandboxed=False,
        notice=notice,
        status=(read_end, write_end),
        watch=watch,
    )
