"""The editor's diagnostics, for the model: the ``diagnostics`` tool, and the errors a change
brought, appended to the result of the tool that made it.

**The tool** reads the editor's :class:`~lsp_agent.core.diagnostics.DiagnosticsCache` (every
language server the editor runs): one file's diagnostics (the path goes through the
workspace boundary like ``read``), or the problems of the whole workspace, errors first. It
is offered only when the host is an editor (``default_registry(editor_diagnostics=True)``).

**After a change** (``write``, ``edit``, ``apply_patch``): :func:`watch_diagnostics`, called
before the change is committed, notes each file's generation and diagnostics; after the commit
:meth:`DiagnosticsWatch.report` waits — at most :data:`WAIT_SECONDS` for all files together —
for the language servers' next report on each that is current (for the edited version when
the client says which version a report describes; else the first report after the change),
and returns the errors the change INTRODUCED (at most :data:`ERRORS_PER_FILE` per file) as
text to append to the tool's output: an error of the report before the change, with the same
message, code and range moved along with its lines through the change, is an older one,
only counted ("N older errors in this file unchanged"), so the model fixes what it broke,
not the file's backlog. Warnings, infos and hints are left to the ``diagnostics`` tool.
Nothing is waited for when the client does not forward diagnostics as they change, for a
file no language server ever reported on, or for a file written on disk (not open in the
editor) that has no diagnostics now — no report may ever come for it. Once a fresh report
arrived, reports that follow within :data:`SETTLE_SECONDS` are taken too (a second
language server, a second analysis phase). Diagnostics never make the tool fail.
"""

from __future__ import annotations

import asyncio
import difflib
import logging
import os
from collections import Counter
from collections.abc import Iterable, Sequence

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.diagnostics import (
    ERROR,
    INFORMATION,
    Diagnostic,
    DiagnosticsCache,
    count_by_severity,
    format_diagnostics,
    severity_summary,
)
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import DiagnosticsDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, refusal, shown_path
from lsp_agent.workspace.boundary import Resolved, WorkspaceBoundary
from lsp_agent.workspace.files import TextFile

__all__ = [
    "ERRORS_PER_FILE",
    "NO_WATCH",
    "SETTLE_SECONDS",
    "WAIT_SECONDS",
    "DiagnosticsParams",
    "DiagnosticsTool",
    "DiagnosticsWatch",
    "WatchedFile",
    "watch_diagnostics",
    "with_report",
]

_log = logging.getLogger(__name__)

WAIT_SECONDS = 3.0
"""How long a change waits, at most, for the language servers' next report."""
SETTLE_SECONDS = 0.2
"""After a fresh report, how long a quiet spell must be before the report is final."""
ERRORS_PER_FILE = 20
PER_FILE = 100
"""Diagnostics the tool shows for one file."""
FILES = 20
"""Files the tool shows for the whole workspace."""
PER_FILE_IN_WORKSPACE = 20


# --- the tool ---------------------------------------------------------------------------


class DiagnosticsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str | None = Field(
        default=None,
        description="The file whose diagnostics to show: absolute, or relative to the first "
        "workspace folder. Leave it out for the problems of the whole workspace.",
    )


class DiagnosticsTool:
    """Implements ``Tool[DiagnosticsParams]``."""

    name = "diagnostics"
    kind: ToolKind = "other"
    permission = PermissionKind.DIAGNOSTICS
    mutates = False
    Params = DiagnosticsParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: DiagnosticsParams, roots: Sequence[str]) -> str:
        if params.file_path is None:
            return "Diagnostics of the workspace"
        return f"Diagnostics of {shown_path(params.file_path, roots)}"

    async def run(self, params: DiagnosticsParams, ctx: ToolRunContext) -> ToolOutcome:
        cache = ctx.editor.diagnostics
        if params.file_path is None:
            return await self._workspace(cache, ctx)
        where = await ctx.resolve(params.file_path, kind="file")
        if isinstance(where, ToolOutcome):
            return where
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission,
                patterns=(where.display,),
                title=f"Diagnostics of {where.display}",
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=where.display)
        if cache is None:
            return _unavailable(where.display)
        return _one_file(cache, where)

    async def _workspace(self, cache: DiagnosticsCache | None, ctx: ToolRunContext) -> ToolOutcome:
        title = "workspace"
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission, patterns=("*",), title="Diagnostics of the workspace"
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
        if cache is None:
            return _unavailable(title)
        reported = cache.all()
        inside = await asyncio.to_thread(_inside, ctx.boundary, reported)
        files = [
            (display, shown)
            for display, diagnostics in inside
            if (shown := tuple(d for d in diagnostics if d.level <= INFORMATION))
        ]
        if not files:
            return ToolOutcome(
                output="No errors, warnings or info messages are reported for any file in the "
                "workspace. (Only files a language server has analyzed are covered: usually "
                "the ones open in the editor.)",
                title=title,
                details=DiagnosticsDetails(files=0),
            )
        # Errors first: files by their most severe diagnostic, then how many of those.
        files.sort(key=lambda f: (_worst(f[1]), -_count(f[1], _worst(f[1])), f[0]))
        counts = count_by_severity(d for _, shown in files for d in shown)
        blocks = [
            format_diagnostics(display, shown, limit=PER_FILE_IN_WORKSPACE)
            for display, shown in files[:FILES]
        ]
        body = "\n\n".join(blocks)
        rest = files[FILES:]
        if rest:
            left = severity_summary(count_by_severity(d for _, shown in rest for d in shown))
            body += f"\n\n… and {len(rest)} more files with problems ({left})"
        noun = "file" if len(files) == 1 else "files"
        return ToolOutcome(
            output=f"Problems in {len(files)} {noun}: {severity_summary(counts)}\n\n{body}",
            title=title,
            details=DiagnosticsDetails(files=len(files), counts=_counts_by_name(counts)),
        )


def _one_file(cache: DiagnosticsCache, where: Resolved) -> ToolOutcome:
    if not cache.known(where.path):
        return ToolOutcome(
            output=f"No language server has reported on {where.display}: it may not be open "
            "in the editor, no language server may cover this kind of file, or its language "
            "server has not finished yet.",
            title=where.display,
            details=DiagnosticsDetails(path=where.path, known=False),
        )
    diagnostics = cache.get(where.path)
    if not diagnostics:
        return ToolOutcome(
            output=f"No problems reported in {where.display}.",
            title=where.display,
            details=DiagnosticsDetails(path=where.path),
        )
    counts = count_by_severity(diagnostics)
    block = format_diagnostics(where.display, diagnostics, limit=PER_FILE)
    return ToolOutcome(
        output=f"{where.display}: {severity_summary(counts)}\n{block}",
        title=where.display,
        details=DiagnosticsDetails(path=where.path, counts=_counts_by_name(counts)),
    )


def _unavailable(title: str) -> ToolOutcome:
    return ToolOutcome(
        output="This host has no language servers: no diagnostics are available.",
        is_error=True,
        title=title,
    )


def _inside(
    boundary: WorkspaceBoundary, reported: dict[str, tuple[Diagnostic, ...]]
) -> list[tuple[str, tuple[Diagnostic, ...]]]:
    """The reported files inside the workspace, by their display path (a worker thread)."""
    found: list[tuple[str, tuple[Diagnostic, ...]]] = []
    for path, diagnostics in reported.items():
        if not os.path.isabs(path):
            continue
        where = boundary.resolve(path)
        if isinstance(where, Resolved):
            found.append((where.display, diagnostics))
    return found


def _worst(diagnostics: Sequence[Diagnostic]) -> int:
    return min(d.level for d in diagnostics)


def _count(diagnostics: Sequence[Diagnostic], level: int) -> int:
    return sum(1 for d in diagnostics if d.level == level)


_LEVEL_NAMES = {1: "error", 2: "warning", 3: "information", 4: "hint"}


def _counts_by_name(counts: dict[int, int]) -> dict[str, int]:
    return {_LEVEL_NAMES[level]: count for level, count in counts.items()}


# --- after a change ---------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class WatchedFile:
    """A file a tool is about to change, whose diagnostics are watched across the change
    (its final path, for a move)."""

    path: str
    """Absolute, realpath-ed."""
    display: str
    through_editor: bool
    """The change goes to an open editor document (not to the disk)."""
    before: str | None = None
    """The text the change was made against, and the text it wrote (None: unknown): the
    older diagnostics are moved through this change to be told from the new ones."""
    after: str | None = None

    @classmethod
    def at(cls, where: Resolved, base: TextFile | None, text: str | None = None) -> WatchedFile:
        """``where``, changed from ``base`` (the text the change was made against) to
        ``text``."""
        through_editor = base is not None and base.source == "editor"
        return cls(
            path=where.path,
            display=where.display,
            through_editor=through_editor,
            before=base.text if base is not None else None,
            after=text,
        )


@attrs.frozen(kw_only=True)
class _Mark:
    file: WatchedFile
    generation: int
    before: tuple[Diagnostic, ...] = ()
    """The file's diagnostics before the change."""


class DiagnosticsWatch:
    """The files of one change worth waiting for, with their generation before it.

    Made by :func:`watch_diagnostics` before the change is committed; :meth:`report` after.
    """

    def __init__(self, cache: DiagnosticsCache | None, marks: Sequence[_Mark]) -> None:
        self._cache = cache
        self._marks = tuple(marks)

    async def report(self, *, timeout: float | None = None, settle: float | None = None) -> str:
        """The errors the language servers report after the change, as text to append to the
        tool's output (empty when there are none). Waits at most ``timeout`` seconds
        (:data:`WAIT_SECONDS`) for all the files together, and ``settle`` seconds
        (:data:`SETTLE_SECONDS`) for reports that follow a fresh one. Never raises (but
        cancellation propagates)."""
        if self._cache is None or not self._marks:
            return ""
        timeout = WAIT_SECONDS if timeout is None else timeout
        settle = SETTLE_SECONDS if settle is None else settle
        try:
            return await self._report(self._cache, timeout, settle)
        except Exception:
            _log.warning("could not report diagnostics after a change", exc_info=True)
            return ""

    async def _report(self, cache: DiagnosticsCache, timeout: float, settle: float) -> str:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        fresh = await asyncio.gather(
            *(_wait_fresh(cache, mark, deadline, settle) for mark in self._marks)
        )
        new_blocks: list[str] = []
        old_blocks: list[str] = []
        unchanged: list[str] = []
        for mark, is_fresh in zip(self._marks, fresh, strict=True):
            now = cache.get(mark.file.path)
            if not is_fresh:
                block = format_diagnostics(
                    mark.file.display, now, limit=ERRORS_PER_FILE, min_severity=ERROR
                )
                if block:
                    old_blocks.append(block)
                continue
            errors = [d for d in now if d.level <= ERROR]
            older = [d for d in mark.before if d.level <= ERROR]
            introduced, kept = await asyncio.to_thread(split_introduced, older, errors, mark.file)
            block = format_diagnostics(mark.file.display, introduced, limit=ERRORS_PER_FILE)
            if kept:
                noun = "error" if kept == 1 else "errors"
                note = f"{kept} older {noun} in {mark.file.display} unchanged by this change"
                if block:
                    block += f"\n({note})"
                else:
                    unchanged.append(f"{note}.")
            if block:
                new_blocks.append(block)
        parts: list[str] = []
        if new_blocks:
            lead = (
                "This file has errors, please fix them:"
                if len(new_blocks) == 1
                else "These files have errors, please fix them:"
            )
            parts.append("\n".join([lead, *new_blocks]))
        if unchanged:
            parts.append("No new errors; " + " ".join(unchanged))
        if old_blocks:
            lead = (
                "Errors reported before this change (no language server reported again "
                f"within {timeout:g} s, so they may be out of date):"
            )
            parts.append("\n".join([lead, *old_blocks]))
        return "".join(f"\n\n{part}" for part in parts)


async def _wait_fresh(cache: DiagnosticsCache, mark: _Mark, deadline: float, settle: float) -> bool:
    """Wait for a current report newer than ``mark`` (one for an older version of the
    document is passed over); then for the reports that follow it closely."""
    loop = asyncio.get_running_loop()
    path = mark.file.path
    seen = mark.generation
    while True:
        if not await cache.wait_newer(path, seen, deadline - loop.time()):
            return False
        if cache.is_current(path):
            break
        seen = cache.generation(path)
    while True:
        quiet = min(settle, deadline - loop.time())
        if quiet <= 0 or not await cache.wait_newer(path, cache.generation(path), quiet):
            return cache.is_current(path)


def split_introduced(
    before: Sequence[Diagnostic], after: Sequence[Diagnostic], file: WatchedFile
) -> tuple[list[Diagnostic], int]:
    """The diagnostics of ``after`` that the change of ``file`` introduced, and how many
    others were there before it: same message, code, source and severity, at the range of
    one before the change moved with its lines (a diagnostic on a changed line is new)."""
    lines = (
        None
        if file.before is None or file.after is None
        else _unchanged_lines(file.before, file.after)
    )
    moved = Counter(key for d in before if (key := _moved_key(d, lines)) is not None)
    introduced: list[Diagnostic] = []
    kept = 0
    for diagnostic in after:
        key = _key(diagnostic)
        if moved[key] > 0:
            moved[key] -= 1
            kept += 1
        else:
            introduced.append(diagnostic)
    return introduced, kept


_Key = tuple[str, str | None, str | None, int, int, int, int, int]


def _key(d: Diagnostic) -> _Key:
    return (d.message, d.code, d.source, d.level, d.line, d.character, d.end_line, d.end_character)


def _moved_key(d: Diagnostic, lines: dict[int, int] | None) -> _Key | None:
    """``d``'s key with its lines where the change moved them (``lines``: old line → new
    line of the lines left alone; None: unknown, nothing moved); None when a line it
    spans was changed."""
    if lines is None:
        return _key(d)
    start, end = lines.get(d.line), lines.get(d.end_line)
    if start is None or end is None or end - start != d.end_line - d.line:
        return None
    return _key(attrs.evolve(d, line=start, end_line=end))


def _unchanged_lines(before: str, after: str) -> dict[int, int]:
    old, new = before.splitlines(), after.splitlines()
    matcher = difflib.SequenceMatcher(None, old, new, autojunk=False)
    mapping: dict[int, int] = {}
    for tag, i1, i2, j1, _ in matcher.get_opcodes():
        if tag == "equal":
            for offset in range(i2 - i1):
                mapping[i1 + offset] = j1 + offset
    # A diagnostic may sit on the line just past the end (an "expected newline" at EOF).
    mapping.setdefault(len(old), len(new))
    return mapping


def watch_diagnostics(editor: Editor, files: Iterable[WatchedFile]) -> DiagnosticsWatch:
    """Call before committing a change of ``files``; ``report()`` after it succeeded."""
    try:
        cache = editor.diagnostics
        if cache is None or not editor.forwards_diagnostics:
            return NO_WATCH
        marks = [
            _Mark(file=f, generation=cache.generation(f.path), before=cache.get(f.path))
            for f in files
            if cache.known(f.path) and (f.through_editor or cache.get(f.path))
        ]
    except Exception:
        _log.warning("could not read the diagnostics before a change", exc_info=True)
        return NO_WATCH
    return DiagnosticsWatch(cache, marks)


NO_WATCH = DiagnosticsWatch(None, ())
"""Nothing to wait for: ``report()`` returns an empty string at once."""


def with_report(outcome: ToolOutcome, report: str) -> ToolOutcome:
    """``outcome`` with ``report`` (from :meth:`DiagnosticsWatch.report`) appended."""
    if not report:
        return outcome
    return attrs.evolve(outcome, output=outcome.output + report)
