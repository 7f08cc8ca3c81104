"""The ``edit`` tool: replace ``old_string`` with ``new_string`` in one file.

Flow: resolve the path (outside the workspace → the ``external_directory`` ask), read the base
text (the editor's unsaved buffer when open, else the disk), find ``old_string`` with the
matcher chain (``edit_match``), show the diff in the ``edit`` ask, then — holding the file's
lock — read the file again and apply the edit to that fresh text before writing it: through
the editor when the file is open there (into the buffer and its undo history; a buffer that
changed or closed since, or an edit the editor refused, is a conflict and nothing is
written), else atomically on disk. So two edits of one file that were approved at the same
time both land, and a file that changed under an approved edit is never silently overwritten:
if the edit no longer applies, the model is told so and nothing is written.

Line endings: matching runs on LF-normalized text; the spans found are mapped back onto the
file as stored and only the replaced text is written with the file's (dominant) ending, so
untouched lines keep their bytes, mixed endings included. The BOM is kept.

When the user edited the proposal before allowing it, their text is what lands — only if the
file is still what the proposal was made against — and the result shows the model the
difference (``patch/user_edits.py``).

After the edit, the errors the editor's language servers then report for the file are
appended to the result (``tools/diagnostics.py``).
"""

from __future__ import annotations

import asyncio
from bisect import bisect_left
from collections.abc import Sequence

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import FileChangeDetails, PathDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.patch.edit_match import EditFailure, EditPlan, plan_edit
from lsp_agent.patch.user_edits import UserVersion, same_file, user_version, with_user_edits
from lsp_agent.tools.base import ToolRunContext, load_description, refusal, shown_path
from lsp_agent.tools.diagnostics import WatchedFile, watch_diagnostics, with_report
from lsp_agent.workspace.boundary import Resolved
from lsp_agent.workspace.files import (
    EditedFile,
    FileDiff,
    FileError,
    FileLocks,
    TextFile,
    commit,
    count_lines,
    detect_newline,
    edit_request,
    encode_text,
    not_found_message,
    read_current,
    unified_diff,
    with_disk_note,
)

__all__ = ["EditParams", "EditTool"]

IDENTICAL = "No changes to apply: old_string and new_string are identical."
EMPTY_OLD = (
    "old_string cannot be empty when editing an existing file. Provide the exact text to "
    "replace, or use the write tool to replace the whole file."
)
NO_EFFECT = (
    "No changes to apply: the text found for old_string already reads like new_string. "
    "Read the file again."
)


class EditParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        description="The file to change: absolute, or relative to the first workspace folder."
    )
    old_string: str = Field(
        description="The exact text to replace, copied from the file without the line-number "
        "prefixes of the read output. Empty only to create a new file."
    )
    new_string: str = Field(
        description="The text to put in its place (must differ from old_string)."
    )
    replace_all: bool = Field(
        default=False,
        description="Replace every occurrence of old_string. Default false: old_string must "
        "then occur exactly once.",
    )


@attrs.frozen(kw_only=True)
class _Change:
    base: TextFile | None
    text: str
    data: bytes
    diff: FileDiff
    replacements: int
    matcher: str | None


class EditTool:
    """Implements ``Tool[EditParams]``. ``locks`` is shared with every tool that writes files."""

    name = "edit"
    kind: ToolKind = "edit"
    permission = PermissionKind.EDIT
    mutates = True
    Params = EditParams

    def __init__(self, locks: FileLocks) -> None:
        self.description = load_description(self.name)
        self._locks = locks

    def describe(self, params: EditParams, roots: Sequence[str]) -> str:
        return f"Edit {shown_path(params.file_path, roots)}"

    async def run(self, params: EditParams, ctx: ToolRunContext) -> ToolOutcome:
        if params.old_string == params.new_string:
            return ToolOutcome(output=IDENTICAL, is_error=True, title=params.file_path)
        where = await ctx.resolve(params.file_path, kind="file")
        if isinstance(where, ToolOutcome):
            return where
        proposed = await _prepare(params, where, ctx)
        if isinstance(proposed, str):
            return _error(where, proposed)
        request = edit_request(
            title=f"Edit {where.display}",
            patterns=(where.display,),
            files=[
                EditedFile(
                    path=where.path,
                    diff=proposed.diff,
                    base=proposed.base.text if proposed.base else None,
                    proposed=proposed.text,
                )
            ],
        )
        verdict = await ctx.ask(request)
        if not verdict.allowed:
            return refusal(verdict, title=where.display)
        bom = proposed.base.bom if proposed.base else False
        mine = user_version(
            verdict, where.path, proposed=proposed.text, bom=bom, display=where.display
        )
        if isinstance(mine, str):
            return _error(where, mine)
        async with self._locks.hold(where.path):
            if mine is None:
                change = await _prepare(params, where, ctx)
                if isinstance(change, str):
                    return _error(where, _changed(where, change))
            else:
                change = await _theirs(proposed, mine, where, ctx)
                if isinstance(change, str):
                    return _error(where, change)
            watch = watch_diagnostics(ctx.editor, [WatchedFile.at(where, change.base, change.text)])
            committed = await commit(
                ctx.editor,
                where.path,
                change.base,
                change.text,
                change.data,
                display=where.display,
            )
            if isinstance(committed, str):
                return _error(where, committed)
        done = with_user_edits(_done(where, change, committed.note), [mine] if mine else [])
        return with_report(done, await watch.report())


async def _prepare(params: EditParams, where: Resolved, ctx: ToolRunContext) -> _Change | str:
    """The change against the file as it is now, or what the model reads instead."""
    try:
        base = await read_current(ctx.editor, where.path)
    except FileError as exc:
        return str(exc)
    if base is None or (base.text == "" and params.old_string == ""):
        if params.old_string:
            return not_found_message(where.path)
        text, count, matcher = params.new_string, 1, None
    elif params.old_string == "":
        return EMPTY_OLD
    else:
        planned = await asyncio.to_thread(_apply, base.text, params)
        if isinstance(planned, str):
            return planned
        text, count, matcher = planned
        if text == base.text:
            return NO_EFFECT
    try:
        data = encode_text(text, bom=base.bom if base else False)
    except UnicodeEncodeError:
        return "new_string is not valid Unicode text (it has a lone surrogate)."
    diff = unified_diff(base.text if base else None, text, where.display)
    return _Change(base=base, text=text, data=data, diff=diff, replacements=count, matcher=matcher)


async def _theirs(
    proposed: _Change, mine: UserVersion, where: Resolved, ctx: ToolRunContext
) -> _Change | str:
    """The user's version as the change, if the file is still what the proposal (and so
    the user's version) was made from; else what the model reads instead."""
    try:
        now = await read_current(ctx.editor, where.path)
    except FileError as exc:
        return str(exc)
    if not same_file(now, proposed.base):
        return (
            f"{where.display} changed after the edit was approved; the user's version of "
            "the edit was not applied and nothing was written. Read it again."
        )
    diff = unified_diff(now.text if now else None, mine.text, where.display)
    return attrs.evolve(proposed, base=now, text=mine.text, data=mine.data, diff=diff)


def _apply(stored: str, params: EditParams) -> tuple[str, int, str] | str:
    """Match on LF text, replace in the stored text; (new text, replacements, matcher)."""
    normalized = stored.replace("\r\n", "\n")
    plan = plan_edit(
        normalized,
        params.old_string.replace("\r\n", "\n"),
        params.new_string.replace("\r\n", "\n"),
        replace_all=params.replace_all,
    )
    if isinstance(plan, EditFailure):
        return plan.message
    return _apply_stored(stored, normalized, plan), len(plan.replacements), plan.matcher


def _apply_stored(stored: str, normalized: str, plan: EditPlan) -> str:
    """``plan`` (spans of ``normalized``) applied to ``stored``, which may have CRLF."""
    if stored == normalized:
        return plan.apply(stored)
    # Where each "\n" of the normalized text was a "\r\n": a normalized offset moves right
    # by the number of those before it (an end offset on such a "\n" lands on its "\r").
    crlf_at: list[int] = []
    at = stored.find("\r\n")
    while at != -1:
        crlf_at.append(at - len(crlf_at))
        at = stored.find("\r\n", at + 2)
    newline = detect_newline(stored)
    parts: list[str] = []
    done = 0
    for r in plan.replacements:
        start = r.start + bisect_left(crlf_at, r.start)
        end = r.end + bisect_left(crlf_at, r.end)
        parts += [stored[done:start], r.text.replace("\n", newline)]
        done = end
    parts.append(stored[done:])
    return "".join(parts)


def _changed(where: Resolved, message: str) -> str:
    return (
        f"{where.display} changed after the edit was approved, and the edit no longer "
        f"applies; nothing was written. {message}"
    )


def _done(where: Resolved, change: _Change, note: str = "") -> ToolOutcome:
    created = change.base is None or not change.base.on_disk
    count = change.replacements
    if change.matcher is None:
        lines = count_lines(change.text)
        verb = "Created" if change.base is None else "Wrote"
        head = f"{verb} {where.display} ({lines} line{'' if lines == 1 else 's'})."
    else:
        head = f"Edited {where.display}: {count} replacement{'' if count == 1 else 's'}."
    return ToolOutcome(
        output=with_disk_note(
            f"{head}\nDiff: +{change.diff.additions} -{change.diff.deletions} lines",
            where.display,
            note,
        ),
        title=where.display,
        details=FileChangeDetails(
            path=where.path,
            additions=change.diff.additions,
            deletions=change.diff.deletions,
            patch=change.diff.patch,
            replacements=count,
            matcher=change.matcher,
            created=created,
        ),
    )


def _error(where: Resolved, message: str) -> ToolOutcome:
    return ToolOutcome(
        output=message, is_error=True, title=where.display, details=PathDetails(path=where.path)
    )
