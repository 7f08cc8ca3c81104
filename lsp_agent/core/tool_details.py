"""What a tool records about one call beyond its output: one frozen class per shape, read by
field (``outcome.details.count``), never by string key.

A tool builds one of :data:`ToolDetails`; the wrappers around every call add their own parts
to the :class:`~lsp_agent.core.tooling.ToolOutcome` beside it (:class:`Spill` when the output
was cut). Nothing here is serialized: the core reads none of it (what it needs, such as a
command's exit code, is a field of the outcome), so the details serve the tools' tests and a
debugger. A field stays only while something reads it.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs


@attrs.frozen(kw_only=True)
class PathDetails:
    """A call about one path that ended before it did anything (an error, a refusal)."""

    path: str
    outside: bool = False
    """The path is outside the workspace and the person or a rule refused it."""


@attrs.frozen(kw_only=True)
class ReadDetails:
    """The page of a file (``lines``) or folder (``entries``) that ``read`` returned."""

    path: str
    unit: Literal["lines", "entries"]
    first: int
    last: int
    total: int
    truncated: bool
    source: Literal["disk", "editor"]


@attrs.frozen(kw_only=True)
class FileChangeDetails:
    """One file ``write`` or ``edit`` changed; ``replacements`` and ``matcher`` are ``edit``'s."""

    path: str
    additions: int
    deletions: int
    patch: str
    created: bool
    replacements: int | None = None
    matcher: str | None = None
    modified: tuple[str, ...] = ()
    """The files the person changed before the edit was applied (their display paths)."""


@attrs.frozen(kw_only=True)
class PatchedFile:
    """One file of an ``apply_patch`` call."""

    path: str
    display: str
    operation: Literal["add", "modify", "delete", "move"]
    additions: int
    deletions: int
    moved_from: str | None = None
    moved_from_display: str | None = None


@attrs.frozen(kw_only=True)
class PatchDetails:
    """The files of an ``apply_patch`` call and their combined diff."""

    files: tuple[PatchedFile, ...]
    patch: str
    modified: tuple[str, ...] = ()
    """The files the person changed before the patch was applied (their display paths)."""


@attrs.frozen(kw_only=True)
class SearchDetails:
    """What ``glob``, ``grep`` and ``list`` found: files or matches shown, and whether the
    list was cut; ``path`` is the folder ``list`` listed."""

    count: int
    truncated: bool
    path: str | None = None


@attrs.frozen(kw_only=True)
class DiagnosticsDetails:
    """The problems ``diagnostics`` reported, by severity name: of one file (``path``; not
    ``known`` when no language server has it open) or of every file it knows (``files``)."""

    counts: dict[str, int] = attrs.field(factory=dict)
    path: str | None = None
    files: int | None = None
    known: bool = True


@attrs.frozen(kw_only=True)
class CommandDetails:
    """Where and how a ``bash`` command ran: its folder, whether it was stopped for time or
    a limit, its process group (run here) or the editor's terminal (run there), and whether
    the sandbox held it (None: it did not start)."""

    workdir: str
    timed_out: bool = False
    limit: str | None = None
    pgid: int | None = None
    terminal_id: str | None = None
    sandboxed: bool | None = None


@attrs.frozen(kw_only=True)
class FetchDetails:
    """A ``webfetch``: where the redirects led, and what came back (or that the address was
    refused before any request: ``blocked``)."""

    final_url: str
    redirects: tuple[str, ...] = ()
    status: int | None = None
    content_type: str | None = None
    bytes: int | None = None
    kind: Literal["html", "text", "image", "binary"] | None = None
    blocked: bool = False


@attrs.frozen(kw_only=True)
class QuestionDetails:
    """How the person met ``question``; their answers, by question, when they answered."""

    outcome: Literal["answered", "declined", "cancelled"]
    answers: dict[str, Any] | None = None


@attrs.frozen(kw_only=True)
class TodoDetails:
    """The plan ``todowrite`` recorded and how many entries are still open."""

    todos: tuple[dict[str, Any], ...]
    open: int


@attrs.frozen(kw_only=True)
class SkillDetails:
    """The files a ``skill`` load listed beside its instructions."""

    files: tuple[str, ...]


ToolDetails = (
    PathDetails
    | ReadDetails
    | FileChangeDetails
    | PatchDetails
    | SearchDetails
    | DiagnosticsDetails
    | CommandDetails
    | FetchDetails
    | QuestionDetails
    | TodoDetails
    | SkillDetails
)
"""What one tool call records: one shape per kind of work."""


@attrs.frozen(kw_only=True)
class Spill:
    """The output was too long and was cut to a preview: where the whole of it was saved
    (None: saving failed, ``error`` says why) and how long it was."""

    path: str | None
    total_lines: int
    total_bytes: int
    error: str | None = None
