"""``lsp-agent run``'s side of the warm path: find (or start) the warm process, hand it the run
with this process's stdin, stdout and stderr, pass on Ctrl-C, and exit with the run's code.

Imported before anything else of the agent, so it imports only the standard library's basics
(``subprocess`` only to start the warm process the first time). Anything that goes wrong
before the run is handed over answers None: the caller then runs cold, as without a warm path.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import sys
import time
from collections.abc import Mapping, Sequence
from types import FrameType
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # imported only to start the warm process, the first time
    import subprocess

from lsp_agent.daemon import wire
from lsp_agent.daemon.choice import warm_choice
from lsp_agent.daemon.paths import DaemonPaths, UnsafeFolder, daemon_paths, installed_version

START_TIMEOUT = 60.0
"""How long a first run waits for the warm process it started to listen (it loads the agent's
modules first, which takes seconds on a busy machine)."""
STOP_WAIT = 10.0
"""Seconds a replaced warm process is given to remove its socket."""
FAILED = 1
LOG_LIMIT = 1024 * 1024
EXITED_GRACE = 5.0
SOCKET_PATH_LIMIT = 108
"""``sun_path``'s size on Linux: a longer runtime folder has no warm path."""
_FORWARDED = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


class _NoWarmProcess(Exception):
    pass


def run_warm(argv: Sequence[str], env: Mapping[str, str] | None = None) -> int | None:
    """The run's exit code when the warm process ran it; None when it was not handed over."""
    env = os.environ if env is None else env
    choice = warm_choice(argv, env)
    if not choice.enabled:
        return None
    try:
        for fd in (0, 1, 2):
            os.fstat(fd)
        cwd = os.getcwd()
        paths = daemon_paths(env)
        if len(os.fsencode(paths.socket)) >= SOCKET_PATH_LIMIT:
            return None
        sock = _connect_current(paths, installed_version(), choice.idle_seconds, env)
    except (OSError, UnsafeFolder, _NoWarmProcess, wire.WireError):
        return None
    with sock:
        request = {"op": "run", "argv": list(argv), "cwd": cwd, "env": dict(env)}
        try:
            wire.send(sock, request, fds=(0, 1, 2))
            started, _ = wire.receive(sock)
            child = int(started["child"])
        except (OSError, wire.WireError, KeyError, TypeError, ValueError):
            return None  # not started: the run is still to do
        return _wait(sock, child)


def _wait(sock: socket.socket, child: int) -> int:
    """Until the run ends; the signals a terminal sends its foreground job go to the run."""

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(OSError):
            os.killpg(child, signum)

    def suspend(_signum: int, _frame: FrameType | None) -> None:
        """Ctrl-Z: the run stops with this process and goes on when it does (``fg``)."""
        forward(signal.SIGSTOP, None)
        signal.signal(signal.SIGTSTP, signal.SIG_DFL)
        os.kill(os.getpid(), signal.SIGTSTP)  # stopped here until SIGCONT
        signal.signal(signal.SIGTSTP, suspend)
        forward(signal.SIGCONT, None)

    previous = {sig: signal.signal(sig, forward) for sig in _FORWARDED}
    previous[signal.SIGTSTP] = signal.signal(signal.SIGTSTP, suspend)
    try:
        while True:
            try:
                ended, _ = wire.receive(sock)
                return int(ended["exit"])
            except InterruptedError:  # pragma: no cover - PEP 475 retries
                continue
            except (OSError, wire.WireError, KeyError, TypeError, ValueError):
                sys.stderr.write("error: the warm lsp-agent process went away during the run\n")
                return FAILED
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def _connect_current(
    paths: DaemonPaths, version: str, idle_seconds: int, env: Mapping[str, str]
) -> socket.socket:
    """A connection to a warm process of this version: one of another version is asked to
    exit and a new one started."""
    for _attempt in range(3):
        sock = _connect(paths.socket)
        if sock is None:
            started = _start(paths, idle_seconds, env)
            sock = _wait_for_socket(paths.socket, started)
        try:
            wire.send(sock, {"op": "hello", "version": version, "idle_seconds": idle_seconds})
            reply, _ = wire.receive(sock)
        except (OSError, wire.WireError):
            sock.close()
            continue
        if reply.get("version") == version:
            return sock
        old_socket = _inode(paths.socket)
        try:  # an older (or newer) install's process: it stops taking runs and exits
            wire.send(sock, {"op": "stop"})
            wire.receive(sock)
        except (OSError, wire.WireError):
            pass
        sock.close()
        _wait_gone(paths.socket, old_socket)  # else the next attempt reaches it again
    raise _NoWarmProcess


def _inode(path: str) -> int | None:
    try:
        return os.stat(path).st_ino
    except OSError:
        return None


def _wait_gone(path: str, inode: int | None) -> None:
    """Until the stopped process has removed its socket (bounded: :data:`STOP_WAIT`); a
    process slow to exit would otherwise answer the next attempt with its old version."""
    deadline = time.monotonic() + STOP_WAIT
    while inode is not None and _inode(path) == inode and time.monotonic() < deadline:
        time.sleep(0.01)


def _connect(path: str) -> socket.socket | None:
    """A connection to the process listening at ``path`` if it runs as this user."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.connect(path)
    except OSError:
        sock.close()
        return None
    if wire.peer_uid(sock) != os.geteuid():
        sock.close()
        raise _NoWarmProcess
    return sock


def _wait_for_socket(path: str, started: subprocess.Popen[bytes]) -> socket.socket:
    """Until the warm process listens; one that exited (another one won the lock, or it
    cannot serve here) is given a moment for the winner's socket, not the whole wait."""
    deadline = time.monotonic() + START_TIMEOUT
    delay = 0.002
    while time.monotonic() < deadline:
        if started.poll() is not None:
            deadline = min(deadline, time.monotonic() + EXITED_GRACE)
        sock = _connect(path)
        if sock is not None:
            return sock
        time.sleep(delay)
        delay = min(delay * 2, 0.05)
    raise _NoWarmProcess


def _start(
    paths: DaemonPaths, idle_seconds: int, env: Mapping[str, str]
) -> subprocess.Popen[bytes]:
    """The warm process, detached: its own session, no terminal, its output in its log."""
    import subprocess

    idle = str(idle_seconds)
    try:  # each process appends; a log grown past LOG_LIMIT starts again
        fresh = os.stat(paths.log).st_size > LOG_LIMIT
    except FileNotFoundError:
        fresh = False
    flags = os.O_WRONLY | os.O_CREAT | os.O_APPEND | (os.O_TRUNC if fresh else 0)
    log = os.open(paths.log, flags, 0o600)
    try:
        return subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "daemon", "serve", "--idle-seconds", idle],
            env=dict(env),
            cwd="/",
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=log,
            close_fds=True,
            start_new_session=True,
        )
    finally:
        os.close(log)


def request(sock_path: str, message: dict[str, Any]) -> dict[str, Any] | None:
    """One question to the warm process at ``sock_path`` (``daemon status|stop``); None when
    none answers there."""
    try:
        sock = _connect(sock_path)
    except _NoWarmProcess:
        return None
    if sock is None:
        return None
    with sock:
        try:
            wire.send(sock, message)
            reply, _ = wire.receive(sock)
        except (OSError, wire.WireError):
            return None
    return reply
