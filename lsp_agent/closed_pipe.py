"""The reader of the CLI's output went away (``lsp-agent … | head``): stop quietly.

Python ignores SIGPIPE, so a write to a pipe nobody reads raises :class:`BrokenPipeError`.
The CLI handles it once, at its entry (``cli.main``): no traceback, standard output pointed
at ``/dev/null`` so the interpreter's last flush is quiet too, and exit status
:data:`EXIT_CLOSED_PIPE` — what a shell reports for a program ended by SIGPIPE (``git log |
head`` gives the same). During ``run`` the error must not break the turn half-way through
recording an event, so the run's streams are wrapped in :class:`PipeGuard`: the first failed
write stops the turn (as Ctrl-C does, so the session's log ends consistently) and the
``BrokenPipeError`` is raised again once the turn has stopped.
"""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from typing import TextIO

__all__ = ["EXIT_CLOSED_PIPE", "PipeGuard", "silence_stdout"]

EXIT_CLOSED_PIPE = 141
"""128 + SIGPIPE."""


class PipeGuard(io.TextIOBase):
    """``stream`` whose first :class:`BrokenPipeError` calls ``on_close`` once; writes after
    it are dropped (:attr:`closed_by_reader` tells)."""

    def __init__(self, stream: TextIO, on_close: Callable[[], object]) -> None:
        super().__init__()
        self._stream = stream
        self._on_close = on_close
        self.closed_by_reader = False

    def write(self, text: str) -> int:
        if not self.closed_by_reader:
            try:
                self._stream.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.closed_by_reader:
            try:
                self._stream.flush()
            except BrokenPipeError:
                self._gone()

    def isatty(self) -> bool:
        return self._stream.isatty()

    def _gone(self) -> None:
        self.closed_by_reader = True
        self._on_close()


def silence_stdout(stdout: TextIO) -> None:
    """Point ``stdout``'s descriptor at ``/dev/null``: what is still buffered goes nowhere
    instead of raising again when the interpreter flushes it at exit."""
    try:
        fd = stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return
    devnull = os.open(os.devnull, os.O_WRONLY)
    try:
        os.dup2(devnull, fd)
    finally:
        os.close(devnull)
