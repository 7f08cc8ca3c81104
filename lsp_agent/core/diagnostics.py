"""The editor's diagnostics: what its language servers report about each file.

The language-server adapter feeds a :class:`DiagnosticsCache` with every report the editor
forwards — one file's whole list at a time (a full replacement; an empty list means "no
problems", which is news too). The ``diagnostics`` tool reads it, and the tools that change
files wait on it (:meth:`DiagnosticsCache.wait_newer`) for the report that follows their
change, so the model reads the errors it just introduced. A report may carry the document
version it describes; given the open document's current version (``document_version``), a
report for an older version is not current (:meth:`DiagnosticsCache.is_current`): it predates
an edit and is never taken for that edit's diagnostics.

Paths are compared as given: the adapter passes absolute, realpath-ed paths, as the tools'
workspace boundary produces. The cache is used from the event loop only. Positions are
0-based, as LSP gives them (characters in the client's position encoding, usually UTF-16);
:func:`format_diagnostics` shows them 1-based.
"""

from __future__ import annotations

import asyncio
import itertools
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence

import attrs

__all__ = [
    "ERROR",
    "HINT",
    "INFORMATION",
    "MAX_PATHS",
    "MAX_PER_PATH",
    "WARNING",
    "Diagnostic",
    "DiagnosticsCache",
    "count_by_severity",
    "format_diagnostics",
    "severity_summary",
]

ERROR = 1
WARNING = 2
INFORMATION = 3
HINT = 4
_WORDS = {ERROR: "ERROR", WARNING: "WARNING", INFORMATION: "INFO", HINT: "HINT"}
_PLURALS = {ERROR: "error", WARNING: "warning", INFORMATION: "info", HINT: "hint"}

MAX_PATHS = 10_000
"""Files the cache remembers; the one updated longest ago is forgotten first."""
MAX_PER_PATH = 1_000
"""Diagnostics kept per file (the most severe first, then by position)."""
MAX_MESSAGE_CHARS = 1_000
"""A message longer than this is cut when formatted."""


@attrs.frozen
class Diagnostic:
    """One problem a language server reported, LSP's fields with 0-based positions."""

    line: int
    character: int
    end_line: int
    end_character: int
    message: str
    severity: int | None = None
    """LSP's: 1 error, 2 warning, 3 information, 4 hint; None (unset) counts as an error,
    as editors show it."""
    source: str | None = None
    """Who reported it, e.g. ``pyright``, ``ruff``."""
    code: str | None = None
    """The server's code for it, e.g. ``F401``."""

    @property
    def level(self) -> int:
        """The severity, 1 (error) … 4 (hint); unset or out of range counts as an error."""
        return self.severity if self.severity in _WORDS else ERROR

    def position_key(self) -> tuple[int, int, int, int]:
        return (self.line, self.character, self.end_line, self.end_character)


def _priority(diagnostic: Diagnostic) -> tuple[int, tuple[int, int, int, int]]:
    return (diagnostic.level, diagnostic.position_key())


@attrs.define
class _Entry:
    diagnostics: tuple[Diagnostic, ...]
    generation: int
    version: int | None = None


class DiagnosticsCache:
    """The latest report per file, and a way to wait for the next one.

    Generations come from one counter shared by every path, so a path's generation only
    ever grows — also after the path was forgotten and reported again.
    """

    def __init__(
        self,
        *,
        max_paths: int = MAX_PATHS,
        max_per_path: int = MAX_PER_PATH,
        document_version: Callable[[str], int | None] | None = None,
    ) -> None:
        """``document_version``: the open document's version at a path now (None: not open,
        or unknown), to tell a report for an older version from a current one."""
        if max_paths < 1 or max_per_path < 1:
            raise ValueError("the cache must keep at least one path and one diagnostic")
        self._max_paths = max_paths
        self._max_per_path = max_per_path
        self._entries: OrderedDict[str, _Entry] = OrderedDict()  # oldest update first
        self._counter = itertools.count(1)
        self._waiters: dict[str, set[asyncio.Future[None]]] = {}
        self._document_version = document_version

    def update(
        self, path: str, diagnostics: Sequence[Diagnostic], version: int | None = None
    ) -> None:
        """``path``'s whole list of diagnostics now (replacing what was there); an empty
        list means no problems; ``version``: the document version it describes, when the
        client says. Wakes whoever waits for news of ``path``."""
        kept = tuple(diagnostics)
        if len(kept) > self._max_per_path:
            kept = tuple(sorted(kept, key=_priority)[: self._max_per_path])
        self._entries[path] = _Entry(
            diagnostics=kept, generation=next(self._counter), version=version
        )
        self._entries.move_to_end(path)
        while len(self._entries) > self._max_paths:
            self._entries.popitem(last=False)
        for waiter in self._waiters.pop(path, ()):
            if not waiter.done():
                waiter.set_result(None)

    def get(self, path: str) -> tuple[Diagnostic, ...]:
        """``path``'s diagnostics as last reported (empty: none, or never reported)."""
        entry = self._entries.get(path)
        return entry.diagnostics if entry is not None else ()

    def all(self) -> dict[str, tuple[Diagnostic, ...]]:
        """Every path with at least one diagnostic."""
        return {path: e.diagnostics for path, e in self._entries.items() if e.diagnostics}

    def generation(self, path: str) -> int:
        """Grows with every update of ``path``; 0 when it was never reported (or forgotten)."""
        entry = self._entries.get(path)
        return entry.generation if entry is not None else 0

    def is_current(self, path: str) -> bool:
        """The last report on ``path`` is not known to describe an older version of the open
        document (no version either side counts as current: the first report after a change
        is taken for it)."""
        entry = self._entries.get(path)
        if entry is None or entry.version is None or self._document_version is None:
            return True
        now = self._document_version(path)
        return now is None or entry.version >= now

    def known(self, path: str) -> bool:
        """A language server has reported on ``path`` (and the cache still remembers it)."""
        return path in self._entries

    async def wait_newer(self, path: str, generation: int, timeout: float) -> bool:
        """Wait until ``path`` has a generation above ``generation``; False when ``timeout``
        seconds pass first. Returns at once when it already has one."""
        if self.generation(path) > generation:
            return True
        if timeout <= 0:
            return False
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        waiters = self._waiters.setdefault(path, set())
        waiters.add(waiter)
        try:
            await asyncio.wait_for(waiter, timeout)
        except TimeoutError:
            return self.generation(path) > generation
        finally:
            waiters.discard(waiter)
            if not waiters and self._waiters.get(path) is waiters:
                del self._waiters[path]
        return True


def format_diagnostics(
    path_display: str,
    diagnostics: Iterable[Diagnostic],
    *,
    limit: int = 20,
    min_severity: int = HINT,
) -> str:
    """A ``<diagnostics file="…">`` block, one line per diagnostic at least as severe as
    ``min_severity`` (``ERROR`` = errors only), e.g. ``ERROR [12:5] message (ruff F401)``
    with a 1-based line and column, sorted by position. Above ``limit`` the most severe are
    kept and a last line says how many more there are. An empty string when none qualify.
    """
    shown = [d for d in diagnostics if d.level <= min_severity]
    if not shown:
        return ""
    more = max(0, len(shown) - limit)
    if more:
        shown = sorted(shown, key=_priority)[:limit]
    lines = [_line(d) for d in sorted(shown, key=Diagnostic.position_key)]
    if more:
        lines.append(f"… and {more} more")
    body = "\n".join(lines)
    return f'<diagnostics file="{path_display}">\n{body}\n</diagnostics>'


def _line(diagnostic: Diagnostic) -> str:
    message = diagnostic.message.strip()
    if len(message) > MAX_MESSAGE_CHARS:
        message = message[:MAX_MESSAGE_CHARS] + "…"
    message = "\n  ".join(line.rstrip() for line in message.splitlines()) or "(no message)"
    origin = " ".join(part for part in (diagnostic.source, diagnostic.code) if part)
    where = f"[{diagnostic.line + 1}:{diagnostic.character + 1}]"
    suffix = f" ({origin})" if origin else ""
    return f"{_WORDS[diagnostic.level]} {where} {message}{suffix}"


def count_by_severity(diagnostics: Iterable[Diagnostic]) -> dict[int, int]:
    """How many diagnostics of each level (1…4) there are; levels with none are left out."""
    counts: dict[int, int] = {}
    for diagnostic in diagnostics:
        counts[diagnostic.level] = counts.get(diagnostic.level, 0) + 1
    return dict(sorted(counts.items()))


def severity_summary(counts: dict[int, int]) -> str:
    """``2 errors, 1 warning`` (most severe first); empty when there is nothing."""
    parts = []
    for level, count in sorted(counts.items()):
        word = _PLURALS[level]
        parts.append(f"{count} {word}{'' if count == 1 or word == 'info' else 's'}")
    return ", ".join(parts)
