"""End the process at once once its work is done, without the interpreter's teardown.

A short ``lsp-agent run`` loads thousands of modules (a provider SDK alone is most of them);
the interpreter's normal exit then frees each of them and runs every finalizer, which costs
more than the answer took to print. By the time the command returns, everything that matters
is already closed: the store committed and closed, the spill files written, the child
processes reaped, the event loop and its worker threads shut down. What the normal exit
still does that can matter is done here explicitly, in its order: the threads that are not
daemons are waited for, the ``atexit`` functions run (``logging`` flushes its handlers
there), standard output and error are flushed; then ``os._exit`` with the command's status.

Used only by the real process entry (``cli.entry``, ``python -m lsp_agent``): a test that
calls ``cli.main`` in-process keeps its interpreter.
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from typing import NoReturn, TextIO

__all__ = ["EXIT_FLUSH_FAILED", "exit_now"]

EXIT_FLUSH_FAILED = 120
"""The interpreter's own status when its last flush of standard output fails."""


def exit_now(code: int) -> NoReturn:
    """Finish what the interpreter's exit would (threads, ``atexit``, the last flush) and
    end the process with ``code`` without tearing the interpreter down."""
    _join_threads()
    atexit._run_exitfuncs()
    if not _flushed(sys.stdout):
        code = EXIT_FLUSH_FAILED
    _flushed(sys.stderr)
    os._exit(code)


def _join_threads() -> None:
    """Wait for the threads that are not daemons, as the interpreter does before it exits."""
    current = threading.current_thread()
    for thread in threading.enumerate():
        if thread is not current and not thread.daemon and thread.is_alive():
            thread.join()


def _flushed(stream: TextIO | None) -> bool:
    """Flush ``stream``; False when its reader went away (what is buffered is lost, as at a
    normal exit)."""
    if stream is None:
        return True
    try:
        if not stream.closed:
            stream.flush()
    except BrokenPipeError:
        return False
    except (OSError, ValueError):
        return True
    return True
