"""The warm process: the agent's modules loaded once, one forked child per run.

Started by the first ``run`` that finds none (detached: its own session, no terminal, its output
in its log). It holds ``<key>.lock`` while it lives, so two first runs start one process; it
listens on ``<key>.sock`` (0600 in a 0700 folder) and answers only peers of its own user id
(``SO_PEERCRED``). Each run is a child forked from it that takes the client's stdin, stdout,
stderr, folder, environment and argv and runs ``run`` exactly as a cold process would
(``child.py``); its exit code goes back to the client. It stays single-threaded and runs no
event loop, so forking it is safe; it exits after ``idle_seconds`` without a run, when asked to
stop, or when a client of another version asks it to.
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import importlib
import os
import select
import signal
import socket
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from lsp_agent.daemon import wire
from lsp_agent.daemon.child import become_run
from lsp_agent.daemon.paths import VERSION_OVERRIDE, DaemonPaths, installed_version

PRELOAD = (
    "lsp_agent.runtime.host",
    "lsp_agent.app",
    "lsp_agent.headless",
    "lsp_agent.attachments",
    "lsp_agent.closed_pipe",
    "lsp_agent.terminal_report",
    "lsp_agent.providers.anthropic",
    "lsp_agent.providers.openai",
    "anthropic",
    "openai",
)
"""What a run imports before its first request; loaded once, here, instead of in every run.
Imported by name so the warm path stays below the modules it warms in the layers."""
_READ_TIMEOUT = 10.0
_POLL_IN = select.POLLIN | select.POLLHUP | select.POLLERR

RunMain = Callable[[Sequence[str]], int]


@dataclass
class _Run:
    pid: int
    pidfd: int
    conn: socket.socket
    imports: int  # the read end of the pipe the run names the modules it imported on
    client_here: bool = True


@dataclass
class _State:
    idle_seconds: int
    version: str
    runs: dict[int, _Run] = field(default_factory=dict)  # by pidfd
    last_active: float = field(default_factory=time.monotonic)
    stopping: bool = False
    socket_inode: int = 0  # the socket file this process bound (a newer one may replace it)


def serve(paths: DaemonPaths, *, idle_seconds: int, run_main: RunMain) -> int:
    """Until idle, stopped or replaced. Returns 0 (1 where runs cannot be watched: no pidfd);
    a second process for the same key (two first runs at once) finds the lock taken and exits
    at once, the first one serves them both."""
    try:  # each run is watched through a pidfd (Linux 5.3)
        os.close(os.pidfd_open(os.getpid()))
    except (AttributeError, OSError) as error:
        _log(f"cannot serve here: no pidfd ({error})")
        return 1
    lock = os.open(paths.lock, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(lock)
        return 0
    listener = _listen(paths.socket)
    _log(f"pid {os.getpid()} listening on {paths.socket}")
    state = _State(
        idle_seconds=idle_seconds,
        version=os.environ.get(VERSION_OVERRIDE) or installed_version(),
        socket_inode=os.stat(paths.socket).st_ino,
    )
    _preload()
    state.last_active = time.monotonic()  # idle from now, not from before the loading
    _log(f"version {state.version}, ready")
    try:
        _loop(listener, paths, state, run_main)
    finally:
        _close_listener(listener, paths.socket, state.socket_inode)
        os.close(lock)  # a new process may start while the last runs finish
        for run in list(state.runs.values()):
            _reap(state, run, block=True)
    _log("exit")
    return 0


def _listen(path: str) -> socket.socket:
    """Bound 0600 from the start (umask), replacing a socket left by a process that died."""
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    mask = os.umask(0o177)
    try:
        listener.bind(path)
    finally:
        os.umask(mask)
    os.chmod(path, 0o600)
    listener.listen(16)
    return listener


def _close_listener(listener: socket.socket, path: str, inode: int) -> None:
    """Remove the socket file only while it is still ours (a new process may have bound one)."""
    if listener.fileno() == -1:
        return
    with contextlib.suppress(OSError):
        if os.stat(path).st_ino == inode:
            os.unlink(path)
    listener.close()


def _preload() -> None:
    started = time.monotonic()
    for name in PRELOAD:
        try:
            importlib.import_module(name)
        except ImportError as error:
            _log(f"preload {name}: {error}")
    gc.collect()
    gc.freeze()  # the loaded modules stay shared with every child instead of being copied
    _log(f"preloaded in {time.monotonic() - started:.2f}s, {len(sys.modules)} modules")


def _loop(listener: socket.socket, paths: DaemonPaths, state: _State, run_main: RunMain) -> None:
    while True:
        if not state.runs:
            if state.stopping:
                return
            idle = time.monotonic() - state.last_active
            if idle >= state.idle_seconds:
                _log(f"idle for {idle:.0f}s")
                return
        poller = select.poll()
        if not state.stopping:
            poller.register(listener.fileno(), select.POLLIN)
        for pidfd, run in state.runs.items():
            poller.register(pidfd, select.POLLIN)
            if run.client_here:
                poller.register(run.conn.fileno(), _POLL_IN)
        wait = max(0.0, state.idle_seconds - (time.monotonic() - state.last_active))
        ready = dict(poller.poll(None if state.runs else wait * 1000 + 1))
        if listener.fileno() in ready and not state.stopping:
            _accept(listener, paths, state, run_main)
        for pidfd, run in list(state.runs.items()):
            if pidfd in ready:
                _reap(state, run, block=True)
            elif run.client_here and run.conn.fileno() in ready:
                _client_gone(run)
        if state.stopping and listener.fileno() != -1:
            _close_listener(listener, paths.socket, state.socket_inode)


def _accept(listener: socket.socket, paths: DaemonPaths, state: _State, run_main: RunMain) -> None:
    try:
        conn, _ = listener.accept()
    except OSError:
        return
    uid = wire.peer_uid(conn)
    if uid != os.geteuid():
        _log(f"refused a connection from user id {uid}")
        conn.close()
        return
    conn.settimeout(_READ_TIMEOUT)
    try:
        _converse(conn, listener, paths, state, run_main)
    except (OSError, wire.WireError) as error:
        _log(f"a client left: {error}")
        conn.close()


def _converse(
    conn: socket.socket,
    listener: socket.socket,
    paths: DaemonPaths,
    state: _State,
    run_main: RunMain,
) -> None:
    """hello → run (or stop, or status); the connection stays open while its run runs."""
    while True:
        message, fds = wire.receive(conn, max_fds=3)
        op = message.get("op")
        if op != "run":
            wire.close_all(fds)
        if op == "hello":
            seconds = message.get("idle_seconds")
            if isinstance(seconds, int) and seconds > 0:
                state.idle_seconds = seconds
            wire.send(conn, {"version": state.version, "pid": os.getpid()})
        elif op == "status":
            wire.send(conn, _status(paths, state))
            conn.close()
            return
        elif op == "stop":
            state.stopping = True
            _log("asked to stop")
            wire.send(conn, {"stopping": True, "pid": os.getpid(), "runs": len(state.runs)})
            conn.close()
            return
        elif op == "run" and len(fds) == 3:
            _start_run(conn, message, fds, listener, state, run_main)
            return
        else:
            wire.close_all(fds)
            conn.close()
            return


def _status(paths: DaemonPaths, state: _State) -> dict[str, Any]:
    idle = time.monotonic() - state.last_active
    return {
        "pid": os.getpid(),
        "version": state.version,
        "socket": paths.socket,
        "log": paths.log,
        "runs": len(state.runs),
        "idle_seconds": state.idle_seconds,
        "exits_in": None if state.runs else max(0, round(state.idle_seconds - idle)),
    }


def _start_run(
    conn: socket.socket,
    message: dict[str, Any],
    fds: list[int],
    listener: socket.socket,
    state: _State,
    run_main: RunMain,
) -> None:
    sys.stdout.flush()
    sys.stderr.flush()
    others = [listener, conn, *(run.conn for run in state.runs.values())]
    raw = [fd for run in state.runs.values() for fd in (run.pidfd, run.imports)]
    imports, report = os.pipe()
    pid = os.fork()
    if pid == 0:  # the run: never returns
        become_run(message, fds, run_main, forget=others, close=[*raw, imports], report=report)
    wire.close_all([*fds, report])
    pidfd = os.pidfd_open(pid)
    state.runs[pidfd] = _Run(pid=pid, pidfd=pidfd, conn=conn, imports=imports)
    state.last_active = time.monotonic()
    _log(f"run {pid}: {' '.join(str(a) for a in message.get('argv', [])[:1])}")
    try:
        wire.send(conn, {"child": pid})
    except OSError:
        _client_gone(state.runs[pidfd])


def _reap(state: _State, run: _Run, *, block: bool) -> None:
    _, status = os.waitpid(run.pid, 0 if block else os.WNOHANG)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:  # killed by a signal: what a shell reports
        code = 128 - code
    with contextlib.suppress(OSError):
        wire.send(run.conn, {"exit": code})
    run.conn.close()
    os.close(run.pidfd)
    del state.runs[run.pidfd]
    _log(f"run {run.pid} exited {code}")
    _learn(run.imports)
    state.last_active = time.monotonic()


def _learn(imports: int) -> None:
    """Load what the run imported beyond :data:`PRELOAD` (a provider's transport, a tool's
    modules), after its client has its exit code: the next run finds them loaded."""
    with os.fdopen(imports, "rb") as pipe:
        names = pipe.read().decode("utf-8", "replace").split()
    learned = 0
    for name in names:
        if name in sys.modules or name.startswith(("__", "lsp_agent.testing")):
            continue
        try:
            importlib.import_module(name)
            learned += 1
        except Exception as error:  # a module that loads only inside a run
            _log(f"learn {name}: {type(error).__name__}")
    if learned:
        gc.collect()
        gc.freeze()
        _log(f"loaded {learned} more modules the run used, {len(sys.modules)} in all")


def _client_gone(run: _Run) -> None:
    """The client went away mid-run (killed, its terminal closed): the run is interrupted
    the way Ctrl-C does it, so its log ends consistently. A client says nothing after
    ``run``, so anything it sends is ignored."""
    try:
        data = run.conn.recv(4096, socket.MSG_DONTWAIT)
    except BlockingIOError:
        return
    except OSError:
        data = b""
    if data:
        return
    run.client_here = False
    with contextlib.suppress(OSError):
        os.killpg(run.pid, signal.SIGINT)


def _log(line: str) -> None:
    stamp = time.strftime("%Y-%m-%dT%H:%M:%S")
    sys.stderr.write(f"{stamp} lsp-agent daemon: {line}\n")
    sys.stderr.flush()
