"""How one command is started: in the bubblewrap sandbox, or under the supervisor.

:class:`CommandSandbox` holds the configured mode (``auto``, ``required``, ``off``), the
``allow_read`` list and the folders to hide, and turns a command's argv into a
:class:`Launch`: ``bwrap … -- argv`` where bubblewrap works (and the mode is not ``off``),
else ``python supervisor.py … -- argv`` (Linux) so nothing the command starts outlives it —
or :class:`SandboxUnavailable` when the mode is ``required`` and bubblewrap does not work.
In ``auto`` mode the first unsandboxed launch is logged as a warning (stderr for ``run``, the
server log for ``serve``) and each launch carries a notice for the tool result.
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from collections.abc import Callable, Collection, Mapping, Sequence
from pathlib import Path
from typing import Final, Literal

import attrs

from lsp_agent.sandbox import protected
from lsp_agent.sandbox.availability import Availability, availability
from lsp_agent.sandbox.bwrap import bwrap_argv
from lsp_agent.sandbox.policy import policy_for

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
    ) -> None:
        self.argv = argv
        self.sandboxed = sandboxed
        self._on_close = on_close
        self.notice = notice
        self._status = status
        self.pass_fds: tuple[int, ...] = (status[1],) if status is not None else ()

    @property
    def stop_margin(self) -> float:
        """Extra seconds before ``SIGKILL``: a supervisor ends its descendants itself."""
        return SUPERVISOR_MARGIN_SECONDS if self._status is not None else 0.0

    def spawned(self) -> None:
        """Drop this process's copy of the status pipe's write end (so end of file comes)."""
        if self._status is not None and self._status[1] >= 0:
            os.close(self._status[1])
            self._status = (self._status[0], -1)

    def left_behind(self) -> bool:
        """Whether the supervisor reported processes still running when the command ended."""
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
        if self._status is not None and self._status[0] >= 0:
            os.close(self._status[0])
            self._status = (-1, -1)


class CommandSandbox:
    """The sandbox settings of one agent, applied to each command.

    ``hidden``: folders no command may see (the data folder). ``check``: how availability is
    found (default: bubblewrap tried once per process).
    """

    def __init__(
        self,
        mode: SandboxMode = "off",
        *,
        allow_read: Sequence[str] = (),
        hidden: Sequence[str] = (),
        check: Callable[[Mapping[str, str], Sequence[str]], Availability] = availability,
    ) -> None:
        self.mode = mode
        self._read_only = protected.ReadOnlyPlaces()
        self._allow_read = tuple(allow_read)
        self._hidden = tuple(hidden)
        self._check = check
        self._warned = False

    async def availability(self, env: Mapping[str, str], avoid: Sequence[str] = ()) -> Availability:
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
                policy = policy_for(
                    writable=[*writable, workdir],
                    allow_read=self._allow_read,
                    home=env.get("HOME"),
                    hidden=self._hidden,
                    network=network,
                )
                read_only, release = self._read_only.claim(policy.writable)
                policy = attrs.evolve(policy, read_only=read_only)
                command = bwrap_argv(found.bwrap, policy, workdir=workdir, command=argv, env=env)
                return Launch(command, sandboxed=True, on_close=release)
            if self.mode == "required":
                return SandboxUnavailable(found.reason)
            notice = f"Not sandboxed: {found.reason}."
            if not self._warned:
                self._warned = True
                _log.warning("commands run without the sandbox: %s", found.reason)
            return _supervised(argv, grace, notice, report)
        return _supervised(argv, grace, None, report)


def _supervised(argv: Sequence[str], grace: float, notice: str | None, report: bool) -> Launch:
    if not sys.platform.startswith("linux"):
        return Launch(list(argv), sandboxed=False, notice=notice)
    if not report:
        command = [sys.executable, "-I", "-S", _SUPERVISOR, "-", f"{grace:g}", "--"]
        return Launch([*command, *argv], sandboxed=False, notice=notice)
    read_end, write_end = os.pipe()
    os.set_inheritable(read_end, False)
    command = [sys.executable, "-I", "-S", _SUPERVISOR, str(write_end), f"{grace:g}", "--"]
    return Launch([*command, *argv], sandboxed=False, notice=notice, status=(read_end, write_end))
