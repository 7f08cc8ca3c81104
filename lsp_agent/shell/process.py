"""Commands in their own process group: spawned held at a gate, released, stopped as a group.

A command must never outlive the agent, so before it runs its process group is recorded (the
caller reports ``pgid`` and :meth:`ProcessGroup.start_ticks` to the loop, which persists them
for recovery after a crash). :meth:`ProcessGroup.spawn` therefore starts a tiny ``/bin/sh``
gate in a new session (so a new process group) that waits for one line on its standard input;
:meth:`ProcessGroup.release` writes it and the gate ``exec`` s the command with standard input
from ``/dev/null``. The command travels as an argument, never inside shell text. If the agent
dies before releasing, the gate reads end-of-file and exits without running anything.

On Linux the child also gets ``PR_SET_PDEATHSIG`` = ``SIGKILL``: it is killed when the thread
that spawned it (the event loop's) goes away, even by ``SIGKILL``. Its own children do not
inherit that; they are found again through the recorded process group.

:meth:`ProcessGroup.stop` sends ``SIGTERM`` (and ``SIGCONT``, so stopped members handle it) to
the whole group, then ``SIGKILL`` once ``grace`` seconds pass with any member left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Callable, Collection, Mapping, Sequence

from lsp_agent.system import procfs
from lsp_agent.system.prctl import PR_SET_PDEATHSIG, prctl_function
from lsp_agent.system.programs import find_program

__all__ = ["ProcessGroup", "group_alive", "shell_argv"]

_GATE = 'IFS= read -r go || exit 125\n[ "$go" = run ] || exit 125\nexec "$@" </dev/null\n'
_GATE_NAME = "lsp-agent-gate"
_RELEASE = b"run\n"
_POLL_SECONDS = 0.05
_STREAM_LIMIT = 2**16


def shell_argv(command: str, env: Mapping[str, str], avoid: Sequence[str] = ()) -> list[str]:
    """``bash -c COMMAND`` with bash found on the command's own ``PATH`` outside ``avoid``
    (the folders the command may write: a planted ``bash`` there would run outside the
    sandbox's checks next time), else ``/bin/sh``."""
    bash = find_program("bash", path=env.get("PATH", os.defpath), avoid=avoid)
    return [bash or "/bin/sh", "-c", command]


class _Protocol(asyncio.subprocess.SubprocessStreamProtocol):
    """asyncio's own protocol, plus: when the leader exited (``Process.wait`` also waits for
    the pipes, which a background child may hold open for ever)."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=_STREAM_LIMIT, loop=loop)
        self.exited = asyncio.Event()
        self.transport: asyncio.SubprocessTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        super().connection_made(transport)
        assert isinstance(transport, asyncio.SubprocessTransport)
        self.transport = transport

    def process_exited(self) -> None:
        super().process_exited()
        self.exited.set()


class ProcessGroup:
    """One command, the leader of its own process group; output is stdout and stderr merged."""

    def __init__(
        self,
        process: asyncio.subprocess.Process,
        transport: asyncio.SubprocessTransport,
        protocol: _Protocol,
    ) -> None:
        self._process = process
        self._transport = transport
        self._protocol = protocol

    @classmethod
    async def spawn(
        cls,
        argv: Sequence[str],
        *,
        cwd: str,
        env: Mapping[str, str],
        pass_fds: Collection[int] = (),
        preexec: Callable[[], None] | None = None,
    ) -> ProcessGroup:
        """Start ``argv`` held at the gate; nothing of it runs before :meth:`release`.
        ``pass_fds``: descriptors the command inherits (a supervisor's status pipe);
        ``preexec``: run in the child before the gate starts (the command's rlimits)."""
        loop = asyncio.get_running_loop()
        transport, protocol = await loop.subprocess_exec(
            lambda: _Protocol(loop),
            "/bin/sh",
            "-c",
            _GATE,
            _GATE_NAME,
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            preexec_fn=_before_exec(_die_with_parent(), preexec),
            pass_fds=tuple(pass_fds),
        )
        return cls(asyncio.subprocess.Process(transport, protocol, loop), transport, protocol)

    @property
    def pgid(self) -> int:
        """The process group id: the leader's pid (it started a new session)."""
        return self._process.pid

    @property
    def stdout(self) -> asyncio.StreamReader:
        stream = self._process.stdout
        assert stream is not None  # spawned with stdout=PIPE
        return stream

    @property
    def returncode(self) -> int | None:
        """The leader's exit status once it has exited (negative: killed by that signal)."""
        return self._transport.get_returncode()

    def start_ticks(self) -> int:
        """When the leader started, in clock ticks since boot (``system.procfs``): with the
        pid it names the process across pid reuse. 0 where that is unknown (no ``/proc``)."""
        return procfs.start_ticks(self._process.pid) or 0

    async def release(self) -> None:
        """Let the command run."""
        stdin = self._process.stdin
        assert stdin is not None  # spawned with stdin=PIPE
        try:
            stdin.write(_RELEASE)
            await stdin.drain()
        except (BrokenPipeError, ConnectionResetError):
            pass  # the gate is gone already; wait() tells how it ended
        finally:
            stdin.close()

    async def wait(self) -> int | None:
        """Until the leader exits (its output may go on: children can hold the pipe); its
        status."""
        await self._protocol.exited.wait()
        return self.returncode

    def alive(self) -> bool:
        """Whether any member of the group is still running (zombies do not count)."""
        return group_alive(self.pgid)

    async def stop(self, grace: float) -> None:
        """End the whole group: ``SIGTERM``, then ``SIGKILL`` after ``grace`` seconds if any
        member is left; returns once the leader has been reaped."""
        self._signal(signal.SIGTERM)
        self._signal(signal.SIGCONT)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + grace
        while self.alive():
            if loop.time() >= deadline:
                self._signal(signal.SIGKILL)
                break
            await asyncio.sleep(_POLL_SECONDS)
        await self.wait()

    def close(self) -> None:
        """Let go of the pipes (and kill the leader if it still runs). Call once done."""
        self._transport.close()

    def _signal(self, signum: int) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.pgid, signum)


def group_alive(pgid: int) -> bool:
    """Whether process group ``pgid`` has a member that is not a zombie."""
    try:
        os.killpg(pgid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    if not procfs.mounted():
        return True
    # kill(0) also succeeds for zombies nobody has reaped yet; look at the members' states.
    for pid in procfs.pids():
        stat = procfs.read_stat(pid)
        if stat is not None and stat.pgid == pgid and stat.state not in ("Z", "X"):
            return True
    return False


def _before_exec(*steps: Callable[[], None] | None) -> Callable[[], None] | None:
    """The steps (those given) as one ``preexec_fn``."""
    given = [step for step in steps if step is not None]
    if not given:
        return None

    def run() -> None:
        for step in given:
            step()

    return run


def _die_with_parent() -> Callable[[], None] | None:
    """What the child runs between fork and exec: ``PR_SET_PDEATHSIG`` on Linux."""
    prctl = prctl_function()
    if prctl is None:
        return None
    parent = os.getpid()

    def setup() -> None:
        prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0)
        if os.getppid() != parent:  # the parent died before the signal was armed
            os._exit(125)

    return setup
