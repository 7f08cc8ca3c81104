"""The ``write`` tool: create a file, or replace all of one, with the given content.

Flow: resolve the path (outside the workspace → the ``external_directory`` ask), read what is
there now (the editor's unsaved buffer when open, else the disk), show the diff in the
``edit`` ask, then — holding the file's lock — check the file is still what the user approved
the change of, and write it: through the editor when the file is open there (the change
lands in the buffer and its undo history; a buffer that changed or closed, or an edit the
editor refused, is a conflict), else atomically on disk, creating parent folders. A file that
changed meanwhile (another tool call, the user) is not overwritten: the model is told to read
it again.

An existing file keeps its encoding facts: its BOM (a BOM at the start of ``content`` also
asks for one), and its CRLF line endings when ``content`` uses plain LF. Content that already
has CRLF is written as given. (An open document's encoding is the editor's: a BOM asked for
in ``content`` is not put into its buffer.)

When the user edited the proposal before allowing it, their text is written instead of
``content`` and the result shows the model the difference (``patch/user_edits.py``).

After the write, the errors the editor's language servers then report for the file are
appended to the result (``tools/diagnostics.py``).
"""

from __future__ import annotations

from collections.abc import Sequence

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import FileChangeDetails, PathDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.patch.user_edits import UserVersion, same_file, user_version, with_user_edits
from lsp_agent.tools.base import ToolRunContext, load_description, refusal, shown_path
from lsp_agent.tools.diagnostics import WatchedFile, watch_diagnostics, with_report
from lsp_agent.workspace.boundary import Resolved
from lsp_agent.workspace.files import (
    BOM,
    EditedFile,
    FileDiff,
    FileError,
    FileLocks,
    TextFile,
    commit,
    count_lines,
    edit_request,
    encode_text,
    read_current,
    unified_diff,
    with_disk_note,
)

__all__ = ["WriteParams", "WriteTool"]


class WriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        description="The file to write: absolute, or relative to the first workspace folder. "
        "Missing parent folders are created."
    )
    content: str = Field(description="The whole new content of the file.")


@attrs.frozen(kw_only=True)
class _Change:
    base: TextFile | None
    text: str
    data: bytes
    diff: FileDiff
    bom: bool


class WriteTool:
    """Implements ``Tool[WriteParams]``. ``locks`` is shared with every tool that writes files."""

    name = "write"
    kind: ToolKind = "edit"
    permission = PermissionKind.EDIT
    mutates = True
    Params = WriteParams

    def __init__(self, locks: FileLocks) -> None:
        self.description = load_description(self.name)
        self._locks = locks

    def describe(self, params: WriteParams, roots: Sequence[str]) -> str:
        return f"Write {shown_path(params.file_path, roots)}"

    async def run(self, params: WriteParams, ctx: ToolRunContext) -> ToolOutcome:
        where = await ctx.resolve(params.file_path, kind="file")
        if isinstance(where, ToolOutcome):
            return where
        change = await _prepare(params.content, where, ctx)
        if isinstance(change, str):
            return _error(where, change)
        request = edit_request(
            title=f"Write {where.display}",
            patterns=(where.display,),
            files=[
                EditedFile(
                    path=where.path,
                    diff=change.diff,
                    base=change.base.text if change.base else None,
                    proposed=change.text,
                )
            ],
        )
        verdict = await ctx.ask(request)
        if not verdict.allowed:
            return refusal(verdict, title=where.display)
        mine = user_version(
            verdict, where.path, proposed=change.text, bom=change.bom, display=where.display
        )
        if isinstance(mine, str):
            return _error(where, mine)
        if mine is not None:
            change = _theirs(change, mine, where)
        async with self._locks.hold(where.path):
            try:
                now = await read_current(ctx.editor, where.path)
            except FileError as exc:
                return _error(where, str(exc))
            if not same_file(now, change.base):
                return _error(
                    where,
                    f"{where.display} changed after the write was approved; nothing was "
                    "written. Read it again, then write it.",
                )
            watch = watch_diagnostics(ctx.editor, [WatchedFile.at(where, now, change.text)])
            committed = await commit(
                ctx.editor, where.path, now, change.text, change.data, display=where.display
            )
            if isinstance(committed, str):
                return _error(where, committed)
        done = with_user_edits(_done(where, change, committed.note), [mine] if mine else [])
        return with_report(done, await watch.report())


async def _prepare(content: str, where: Resolved, ctx: ToolRunContext) -> _Change | str:
    try:
        base = await read_current(ctx.editor, where.path)
    except FileError as exc:
        return str(exc)
    text = content.removeprefix(BOM)
    bom = content.startswith(BOM) or (base is not None and base.bom)
    if base is not None and base.newline == "\r\n" and "\r\n" not in text:
        text = text.replace("\n", "\r\n")
    try:
        data = encode_text(text, bom=bom)
    except UnicodeEncodeError:
        return "content is not valid Unicode text (it has a lone surrogate)."
    diff = unified_diff(base.text if base else None, text, where.display)
    return _Change(base=base, text=text, data=data, diff=diff, bom=bom)


def _theirs(change: _Change, mine: UserVersion, where: Resolved) -> _Change:
    """The change with the user's text in place of the model's."""
    diff = unified_diff(change.base.text if change.base else None, mine.text, where.display)
    return attrs.evolve(change, text=mine.text, data=mine.data, diff=diff)


def _done(where: Resolved, change: _Change, note: str = "") -> ToolOutcome:
    lines = count_lines(change.text)
    diff = change.diff
    return ToolOutcome(
        output=with_disk_note(
            f"Wrote {where.display} ({lines} line{'' if lines == 1 else 's'}).\n"
            f"Diff: +{diff.additions} -{diff.deletions} lines",
            where.display,
            note,
        ),
        title=where.display,
        details=FileChangeDetails(
            path=where.path,
            additions=diff.additions,
            deletions=diff.deletions,
            patch=diff.patch,
            created=change.base is None or not change.base.on_disk,
        ),
    )


def _error(where: Resolved, message: str) -> ToolOutcome:
    return ToolOutcome(
        output=message, is_error=True, title=where.display, details=PathDetails(path=where.path)
    )
