"""A run forked from the warm process becomes what a cold ``lsp-agent run`` would have been:
the client's stdin, stdout and stderr on descriptors 0–2 (so terminals, pipes, ``isatty``,
colour, prompts and a reader that goes away behave as they do cold), its folder, its whole
environment (keys, base URLs, ``LSP_AGENT_*``, ``HOME``/``XDG_*``, ``PATH``: read by this run's
configuration, providers and tools), its argv, and the signals' usual handling. Nothing of the
warm process stays open in it."""

from __future__ import annotations

import contextlib
import io
import os
import signal
import socket
import sys
import tempfile
import traceback
from collections.abc import Callable, Sequence
from typing import Any, NoReturn, TextIO

from lsp_agent.system.fast_exit import exit_now

_FAILED = 1
_INTERRUPTED = 130


def become_run(
    message: dict[str, Any],
    fds: Sequence[int],
    run_main: Callable[[Sequence[str]], int],
    *,
    forget: Sequence[socket.socket],
    close: Sequence[int],
    report: int,
) -> NoReturn:
    """Never returns: the child ends with the run's exit code, after naming on ``report`` the
    modules it imported that the warm process had not loaded."""
    known = set(sys.modules)
    code = _FAILED
    kept: list[TextIO] = []  # the warm process's streams must not close 0–2 when collected
    try:
        os.setpgid(0, 0)  # the client signals this group, as a terminal signals its job
        for sock in forget:
            os.close(sock.detach())
        for fd in close:
            os.close(fd)
        for target, fd in enumerate(fds):
            os.dup2(fd, target)
        for fd in fds:
            if fd > 2:
                os.close(fd)
        for signum in (signal.SIGTERM, signal.SIGHUP, signal.SIGCHLD):
            signal.signal(signum, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.default_int_handler)
        kept += [sys.stdin, sys.stdout, sys.stderr]
        _own_stdio()
        argv = [str(arg) for arg in message["argv"]]
        env = {str(k): str(v) for k, v in dict(message["env"]).items()}
        os.environ.clear()
        os.environ.update(env)
        tempfile.tempdir = None  # found again from this run's TMPDIR
        try:
            os.chdir(str(message["cwd"]))
        except OSError as error:
            sys.stderr.write(f"error: cannot enter {message['cwd']}: {error.strerror}\n")
            raise SystemExit(_FAILED) from None
        sys.argv = ["lsp-agent", *argv]
        code = run_main(argv)
    except SystemExit as exit_:
        code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
    except KeyboardInterrupt:
        code = _INTERRUPTED
    except BaseException:  # what an uncaught error does cold: a traceback, 1
        traceback.print_exc()
        code = _FAILED
    finally:
        _finish(code, report, known)


def _finish(code: int, report: int, known: set[str]) -> NoReturn:
    """Name the new modules, then end as a cold ``lsp-agent`` process ends (``fast_exit``:
    threads joined, ``atexit``, the last flush's status)."""
    with contextlib.suppress(OSError):
        new = "\n".join(sorted(set(sys.modules) - known))
        os.write(report, new.encode("utf-8", "replace")[:60000])  # within a pipe's buffer
        os.close(report)
    exit_now(code)


def _own_stdio() -> None:
    """New ``sys.stdin/stdout/stderr`` over descriptors 0–2, set up as the interpreter sets
    them at start (line-buffered on a terminal; stderr always; the same encoding)."""
    encoding = sys.stdout.encoding
    sys.stdin = _text(0, "rb", encoding, sys.stdin.errors, line=os.isatty(0))
    sys.stdout = _text(1, "wb", encoding, sys.stdout.errors, line=os.isatty(1))
    sys.stderr = _text(2, "wb", encoding, "backslashreplace", line=True)
    for name in ("stdin", "stdout", "stderr"):  # what a late error message falls back to
        setattr(sys, f"__{name}__", getattr(sys, name))


def _text(fd: int, mode: str, encoding: str, errors: str | None, *, line: bool) -> TextIO:
    binary = io.open(fd, mode, closefd=False)  # noqa: UP020, SIM115 - a descriptor, kept open
    return io.TextIOWrapper(
        binary, encoding=encoding, errors=errors, newline="\n", line_buffering=line
    )
