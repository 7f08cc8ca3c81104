"""The ``apply_patch`` tool: several file changes in one ``*** Begin Patch`` envelope.

All or nothing, in five steps:

1. **Resolve** every path (each file and each move target) through the workspace boundary;
   an outside path asks ``external_directory`` and a refusal ends the call.
2. **Verify** in memory: read every file (an open editor buffer wins over the disk, as in
   ``edit``), apply every hunk, check that Update/Delete targets are regular files and that
   Add/Move targets do not exist yet. Any problem → an error naming the file and the hunk
   (every problem at once), and nothing on disk has changed.
3. **Ask** one ``edit`` permission for the whole patch, with every touched path as a pattern,
   the combined diff as the subject and every file's text before and after as previews (a
   move has two: the destination, whose base is the source's text, and the source, which goes
   away).
4. **Write**, holding the locks of every touched path
   (:class:`~lsp_agent.workspace.files.FileLocks`, shared with ``write`` and ``edit``): verify
   again against the files as they are now (so an edit approved at the same time is not
   lost; a hunk that no longer fits, or a file to delete that changed, stops everything),
   then write every new content to a temp file beside its target, rename them all into
   place, and remove deleted files and move sources. If a step fails midway, what was
   already replaced or removed is put back from the original bytes kept in memory, so a
   patch never stays half applied.
5. **Edit open documents**: an Update (without a move) of a file whose base text came from an
   open editor buffer goes through the editor (``Editor.apply_document_edit``), after the
   disk writes. If the editor refuses one or the buffer changed meanwhile, the documents
   already edited are changed back (the reverse edit) and the disk writes are undone, and the
   model is told which file conflicted. Deletes and moves of an open document are done on
   disk; the editor notices the file change. An editor that writes files itself (ACP's
   ``fs/write_text_file``) also gets every new file — an Add, a Move's destination — before
   the disk writes; only removals (a Delete, a Move's source) then touch the disk, as ACP
   has no delete.

When the user edited the proposal of some files before allowing it, their texts replace the
patch's for those files (each must still be what the patch was verified against at the ask)
and the result shows the model the difference (``patch/user_edits.py``).

Then the errors the editor's language servers report for the changed files are appended to
the result, waiting for all of them together (``tools/diagnostics.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import stat
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.documents import FilePreview
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict
from lsp_agent.core.permission.subjects import EditedFileStat, EditSubject
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import PatchDetails, PatchedFile
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.patch.apply import HunkError, apply_hunks
from lsp_agent.patch.parse import (
    AddFile,
    DeleteFile,
    FileOperation,
    PatchFormatError,
    UpdateFile,
    parse_patch,
)
from lsp_agent.patch.user_edits import UserVersion, same_file, user_version, with_user_edits
from lsp_agent.system import beneath
from lsp_agent.tools.base import (
    ToolRunContext,
    load_description,
    one_line_title,
    refusal,
    shown_path,
)
from lsp_agent.tools.diagnostics import WatchedFile, watch_diagnostics, with_report
from lsp_agent.workspace.boundary import Resolved
from lsp_agent.workspace.files import (
    FileDiff,
    FileError,
    FileLocks,
    TextFile,
    editor_conflict,
    encode_text,
    file_preview,
    read_current,
    unified_diff,
    with_disk_note,
    write_temp,
)

__all__ = ["VERIFICATION_FAILED", "ApplyPatchParams", "ApplyPatchTool"]

Operation = Literal["add", "delete", "modify", "move"]

VERIFICATION_FAILED = "apply_patch verification failed"
_LETTER: dict[Operation, str] = {"add": "A", "delete": "D", "modify": "M", "move": "R"}
_BINARY_SAMPLE = 8192


class ApplyPatchParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    patch: str = Field(
        description="The whole patch, from '*** Begin Patch' to '*** End Patch', in the "
        "format the tool description gives."
    )


class ApplyPatchTool:
    """Implements ``Tool[ApplyPatchParams]``. ``locks`` is shared with every tool that writes
    files."""

    name = "apply_patch"
    kind: ToolKind = "edit"
    permission = PermissionKind.EDIT
    mutates = True
    Params = ApplyPatchParams

    def __init__(self, locks: FileLocks) -> None:
        self.description = load_description(self.name)
        self._locks = locks

    def describe(self, params: ApplyPatchParams, roots: Sequence[str]) -> str:
        try:
            operations = parse_patch(params.patch).operations
        except PatchFormatError:
            return "Apply a patch"
        paths = list(dict.fromkeys(shown_path(op.path, roots) for op in operations))
        if len(paths) == 1:
            return f"Edit {paths[0]}"
        return one_line_title(f"Edit {len(paths)} files: {', '.join(paths)}")

    async def run(self, params: ApplyPatchParams, ctx: ToolRunContext) -> ToolOutcome:
        try:
            patch = parse_patch(params.patch)
        except PatchFormatError as exc:
            return ToolOutcome(output=str(exc), is_error=True, title="apply_patch")
        targets: list[_Target] = []
        for operation in patch.operations:
            source = await ctx.resolve(operation.path, kind="file")
            if isinstance(source, ToolOutcome):
                return source
            destination: Resolved | None = None
            if isinstance(operation, UpdateFile) and operation.move_to is not None:
                moved = await ctx.resolve(operation.move_to, kind="file")
                if isinstance(moved, ToolOutcome):
                    return moved
                destination = moved if moved.path != source.path else None
            targets.append(_Target(operation=operation, source=source, destination=destination))
        clash = _clash(targets)
        if clash is not None:
            return _failed([clash])
        proposed = await _verify_all(targets, ctx.editor)
        if isinstance(proposed, _Problems):
            return _failed(proposed.messages)
        title = f"Apply patch to {len(proposed)} file{'s' if len(proposed) != 1 else ''}"
        verdict = await ctx.ask(_request(title, proposed))
        if not verdict.allowed:
            return refusal(verdict, title=title)
        theirs = _user_versions(verdict, proposed)
        if isinstance(theirs, str):
            return ToolOutcome(output=theirs, is_error=True, title=title)
        locked = [w.path for t in targets for w in (t.source, t.destination) if w is not None]
        async with self._locks.hold(*locked):
            changes = await _verify_all(targets, ctx.editor)
            if isinstance(changes, _Problems):
                return _stale("\n".join(changes.messages), title)
            for before, now in zip(proposed, changes, strict=True):
                if before.removed != now.removed:
                    return _stale(
                        f"{now.source.display} changed after its deletion was approved", title
                    )
                if now.final.path in theirs and not same_file(now.base, before.base):
                    why = f"{now.source.display} changed after the user's version was approved"
                    return _stale(why, title)
            changes = [_with_user_version(c, theirs.get(c.final.path)) for c in changes]
            watch = watch_diagnostics(ctx.editor, _changed_files(changes))
            # Shielded: a cancelled call still finishes (or rolls back) what it started.
            failure = await asyncio.shield(_write_all(changes, ctx.editor))  # or the notes
        if isinstance(failure, str):
            return ToolOutcome(output=failure, is_error=True, title=title)
        done = with_user_edits(_done(changes, title, failure), list(theirs.values()))
        return with_report(done, await watch.report())


def _user_versions(
    verdict: PermissionVerdict, changes: Sequence[_Change]
) -> dict[str, UserVersion] | str:
    """The user's versions of the files the patch writes, by final path; or the message."""
    found: dict[str, UserVersion] = {}
    for change in changes:
        if change.text is None:
            continue
        path = change.final.path
        bom = change.base.bom if change.base is not None else False
        mine = user_version(
            verdict, path, proposed=change.text, bom=bom, display=change.final.display
        )
        if isinstance(mine, str):
            return mine
        if mine is not None:
            found[path] = mine
    return found


def _with_user_version(change: _Change, mine: UserVersion | None) -> _Change:
    """``change`` writing the user's text (verified against the same base) instead."""
    if mine is None:
        return change
    base = change.base.text if change.base is not None else None
    diff = unified_diff(base, mine.text, change.source.display, new_label=change.final.display)
    return attrs.evolve(
        change,
        text=mine.text,
        data=mine.data,
        diff=_with_header(diff, change.source, change.final),
    )


def _done(changes: Sequence[_Change], title: str, notes: Mapping[str, str]) -> ToolOutcome:
    """``notes``: the editor's notes about the disk, by display path."""
    summary = "\n".join(change.summary() for change in changes)
    output = f"Success. Updated the following files:\n{summary}"
    for display, note in notes.items():
        output = with_disk_note(output, display, note)
    return ToolOutcome(
        output=output,
        title=changes[0].label() if len(changes) == 1 else title,
        details=PatchDetails(
            files=tuple(change.entry() for change in changes), patch=_combined(changes)
        ),
    )


def _changed_files(changes: Sequence[_Change]) -> list[WatchedFile]:
    """The files whose diagnostics are worth waiting for: all but the deleted ones."""
    return [
        WatchedFile(
            path=c.final.path,
            display=c.final.display,
            through_editor=c.in_editor,
            before=c.base.text if c.base is not None else None,
            after=c.text,
        )
        for c in changes
        if c.operation != "delete"
    ]


# --- what the patch will do -------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Target:
    operation: FileOperation
    source: Resolved
    destination: Resolved | None
    """Where an Update with ``*** Move to`` puts the file (None: it stays)."""


@attrs.frozen(kw_only=True)
class _Change:
    operation: Operation
    source: Resolved
    destination: Resolved | None
    data: bytes | None
    """The bytes to write (None for a Delete)."""
    removed: bytes | None
    """For a Delete: the file's bytes as verified (a changed file is not deleted)."""
    diff: FileDiff
    base: TextFile | None = None
    """For an Update: the source's text as verified (maybe an open editor buffer)."""
    text: str | None = None
    """The new text, without BOM (None for a Delete)."""

    @property
    def final(self) -> Resolved:
        return self.destination or self.source

    @property
    def in_editor(self) -> bool:
        """An Update in place of an open document: it goes through the editor."""
        return self.operation == "modify" and self.base is not None and self.base.source == "editor"

    def previews(self) -> list[FilePreview]:
        if self.removed is not None:
            text = self.removed.decode("utf-8", errors="surrogateescape")
            return [file_preview(self.source.path, text, None)]
        base = self.base.text if self.base is not None else None
        shown = [file_preview(self.final.path, base, self.text)]
        if self.destination is not None:
            shown.append(file_preview(self.source.path, base, None))
        return shown

    def label(self) -> str:
        if self.destination is not None:
            return f"{self.source.display} -> {self.destination.display}"
        return self.source.display

    def summary(self) -> str:
        return f"{_LETTER[self.operation]} {self.label()}"

    def stat(self) -> EditedFileStat:
        """The file as the permission subject names it."""
        return EditedFileStat(
            path=self.final.path,
            additions=self.diff.additions,
            deletions=self.diff.deletions,
            operation=self.operation,
            moved_from=self.source.path if self.destination is not None else None,
        )

    def entry(self) -> PatchedFile:
        """The file as the tool's details give it: the subject's, with the display paths."""
        moved = self.destination is not None
        return PatchedFile(
            path=self.final.path,
            display=self.final.display,
            operation=self.operation,
            additions=self.diff.additions,
            deletions=self.diff.deletions,
            moved_from=self.source.path if moved else None,
            moved_from_display=self.source.display if moved else None,
        )


@attrs.frozen
class _Problems:
    messages: list[str]


def _request(title: str, changes: Sequence[_Change]) -> PermissionRequest:
    patterns: list[str] = []
    for change in changes:
        patterns.append(change.source.display)
        if change.destination is not None:
            patterns.append(change.destination.display)
    return PermissionRequest(
        permission=PermissionKind.EDIT,
        patterns=tuple(dict.fromkeys(patterns)),
        always=("*",),
        title=title,
        subject=EditSubject(
            files=tuple(change.stat() for change in changes), patch=_combined(changes)
        ),
        previews=tuple(preview for change in changes for preview in change.previews()),
    )


def _combined(changes: Sequence[_Change]) -> str:
    return "".join(change.diff.patch for change in changes)


def _failed(problems: Sequence[str]) -> ToolOutcome:
    if len(problems) == 1:
        body = f"{VERIFICATION_FAILED}: {problems[0]}"
    else:
        listed = "\n".join(f"- {problem}" for problem in problems)
        body = f"{VERIFICATION_FAILED} ({len(problems)} problems):\n{listed}"
    return ToolOutcome(output=f"{body}\nNo file was changed.", is_error=True, title="apply_patch")


def _clash(targets: Sequence[_Target]) -> str | None:
    """Two sections touching one file (after symlinks): their order would be ambiguous."""
    seen: dict[str, _Target] = {}
    for target in targets:
        for where in (target.source, target.destination):
            if where is None:
                continue
            earlier = seen.get(where.path)
            if earlier is not None:
                return (
                    f"{where.display} is touched by two sections of this patch (patch lines "
                    f"{earlier.operation.line} and {target.operation.line}); put all changes "
                    "to one file in one section"
                )
            seen[where.path] = target
    return None


def _stale(problem: str, title: str) -> ToolOutcome:
    return ToolOutcome(
        output="apply_patch failed: files changed after the patch was approved, and it no "
        f"longer applies; no file was changed.\n{problem}\n"
        "Read the files again and make a new patch.",
        is_error=True,
        title=title,
    )


# --- verification -----------------------------------------------------------------------


async def _verify_all(targets: Sequence[_Target], editor: Editor) -> list[_Change] | _Problems:
    changes: list[_Change] = []
    problems: list[str] = []
    for target in targets:
        result = await _verify(target, editor)
        if isinstance(result, str):
            problems.append(result)
        else:
            changes.append(result)
    return _Problems(problems) if problems else changes


async def _verify(target: _Target, editor: Editor) -> _Change | str:
    operation, source = target.operation, target.source
    if isinstance(operation, AddFile):
        problem = await asyncio.to_thread(_free, source, "add")
        if problem is not None:
            return problem
        content = operation.content
        return _Change(
            operation="add",
            source=source,
            destination=None,
            data=content.encode("utf-8"),
            removed=None,
            diff=_with_header(unified_diff(None, content, source.display), source, source),
            text=content,
        )
    if isinstance(operation, DeleteFile):
        existing = await asyncio.to_thread(_read_existing, source, "delete")
        if isinstance(existing, str):
            return existing
        return _Change(
            operation="delete",
            source=source,
            destination=None,
            data=None,
            removed=existing,
            diff=_deletion_diff(existing, source),
        )
    return await _verify_update(operation, target, editor)


async def _verify_update(operation: UpdateFile, target: _Target, editor: Editor) -> _Change | str:
    source, destination = target.source, target.destination
    problem = await asyncio.to_thread(_regular_file, source, "update")
    if problem is not None:
        return problem
    try:
        base = await read_current(editor, source.path)
    except FileError as exc:
        return f"cannot update {source.display}: {exc}"
    if base is None:
        return f"cannot update {source.display}: file not found"
    try:
        text = await asyncio.to_thread(apply_hunks, base.text, operation.hunks)
    except HunkError as exc:
        return f"{source.display}: {exc}"
    if destination is not None:
        problem = await asyncio.to_thread(_free, destination, f"move {source.display} to")
        if problem is not None:
            return problem
    try:
        data = encode_text(text, bom=base.bom)
    except UnicodeEncodeError:
        return f"{source.display}: the patch is not valid Unicode text (it has a lone surrogate)"
    final = destination or source
    diff = unified_diff(base.text, text, source.display, new_label=final.display)
    return _Change(
        operation="modify" if destination is None else "move",
        source=source,
        destination=destination,
        data=data,
        removed=None,
        diff=_with_header(diff, source, final),
        base=base,
        text=text,
    )


def _with_header(diff: FileDiff, source: Resolved, final: Resolved) -> FileDiff:
    """An empty diff (a pure rename, an empty new file) still names its files."""
    if diff.patch:
        return diff
    return diff._replace(patch=f"--- {source.display}\n+++ {final.display}\n")


def _deletion_diff(data: bytes, source: Resolved) -> FileDiff:
    if b"\0" in data[:_BINARY_SAMPLE]:
        return FileDiff(patch=f"Binary file {source.display} deleted\n", additions=0, deletions=0)
    text = data.decode("utf-8", errors="surrogateescape")
    return _with_header(unified_diff(text, None, source.display), source, source)


def _free(where: Resolved, verb: str) -> str | None:
    """None when a new file can be created at ``where``; else why not."""
    if os.path.lexists(where.path):
        kind = "a directory" if os.path.isdir(where.path) else "a file"
        hint = " (use '*** Update File' to change it)" if verb == "add" and kind == "a file" else ""
        return f"cannot {verb} {where.display}: {kind} already exists there{hint}"
    parent = os.path.dirname(where.path)
    while not os.path.lexists(parent):
        parent = os.path.dirname(parent)
    if not os.path.isdir(parent):
        return f"cannot {verb} {where.display}: {parent} is not a directory"
    return None


def _regular_file(where: Resolved, verb: str) -> str | None:
    """None for an existing regular file; else why it cannot be changed."""
    try:
        info = beneath.lstat(where.path)
    except OSError as exc:
        return f"cannot {verb} {where.display}: {_reason(exc)}"
    if info is None:
        return f"cannot {verb} {where.display}: file not found"
    if stat.S_ISDIR(info.st_mode):
        return f"cannot {verb} {where.display}: it is a directory"
    if not stat.S_ISREG(info.st_mode):
        return f"cannot {verb} {where.display}: not a regular file"
    return None


def _read_existing(where: Resolved, verb: str) -> bytes | str:
    problem = _regular_file(where, verb)
    if problem is not None:
        return problem
    try:
        data = beneath.read_bytes(where.path)
    except OSError as exc:
        return f"cannot {verb} {where.display}: {_reason(exc)}"
    return data if data is not None else f"cannot {verb} {where.display}: file not found"


def _reason(exc: OSError) -> str:
    return exc.strerror or str(exc)


# --- writing ----------------------------------------------------------------------------


async def _write_all(changes: Sequence[_Change], editor: Editor) -> dict[str, str] | str:
    """The new files an editor writes itself (an Add, a Move's destination: ACP's
    ``fs/write_text_file``), then the disk changes (a worker thread), then the open
    documents' edits; all or nothing. On success the editor's notes about the disk (by
    display path), else the message for the model."""
    created, on_disk = await _create_in_editor(changes, editor)
    if isinstance(created, str):
        return created
    written = await asyncio.to_thread(_commit, [c for c in on_disk if not c.in_editor])
    if isinstance(written, str):
        problems = await _uncreate(created, editor)
        return "\n".join([written, *(f"- {problem}" for problem in problems)])
    edited: list[_Change] = []
    notes: dict[str, str] = {}
    for change in changes:
        if not change.in_editor:
            continue
        before, after = _buffer_texts(change)
        result = await editor.apply_document_edit(change.source.path, before, after)
        if result.status == "applied" and result.note:
            notes[change.source.display] = result.note
        if result.status != "applied":
            problems = await _unedit(edited, editor)
            problems += await asyncio.to_thread(_undo, written)
            problems += await _uncreate(created, editor)
            conflict = editor_conflict(change.source.display, result)
            return f"{_failure(conflict, problems)}\nRead the files again and make a new patch."
        edited.append(change)
    return notes


async def _create_in_editor(
    changes: Sequence[_Change], editor: Editor
) -> tuple[list[_Change] | str, list[_Change]]:
    """Offer each new file to the editor (from the empty text, as ``workspace.files.commit``
    does): one it writes itself is left out of the disk plan — a Move then only removes its
    source on disk (ACP has no delete). ``not_open`` keeps it on the disk. The created
    changes and the rest; a conflict undoes the created ones and is the message."""
    created: list[_Change] = []
    rest: list[_Change] = []
    for change in changes:
        if change.operation not in ("add", "move") or change.text is None:
            rest.append(change)
            continue
        result = await editor.apply_document_edit(change.final.path, "", _created_text(change))
        if result.status == "not_open":
            rest.append(change)
        elif result.status == "applied":
            created.append(change)
            if change.destination is not None:  # the source still goes away, on disk
                rest.append(attrs.evolve(change, destination=None, data=None))
        else:
            problems = await _uncreate(created, editor)
            conflict = editor_conflict(change.final.display, result)
            return f"{_failure(conflict, problems)}\nRead the files again and make a new patch.", []
    return created, rest


async def _uncreate(created: Sequence[_Change], editor: Editor) -> list[str]:
    """Empty again the files the editor created (it has no way to delete them)."""
    problems: list[str] = []
    for change in reversed(created):
        result = await editor.apply_document_edit(change.final.path, _created_text(change), "")
        if result.status != "applied":
            why = editor_conflict(change.final.display, result)
            problems.append(f"{why}, so the file the patch created could not be emptied")
        else:
            problems.append(f"{change.final.display} was created in the editor and is now empty")
    return problems


def _created_text(change: _Change) -> str:
    """A new file's text as the editor is given it (a Move keeps its source's form)."""
    assert change.text is not None
    return change.base.as_buffer(change.text) if change.base is not None else change.text


def _buffer_texts(change: _Change) -> tuple[str, str]:
    """An open document's text as read and as it should become, in the buffer's form."""
    assert change.base is not None
    assert change.text is not None
    return change.base.as_buffer(change.base.text), change.base.as_buffer(change.text)


async def _unedit(edited: Sequence[_Change], editor: Editor) -> list[str]:
    """Change the open documents of ``edited`` back (the reverse edits, last first)."""
    problems: list[str] = []
    for change in reversed(edited):
        before, after = _buffer_texts(change)
        result = await editor.apply_document_edit(change.source.path, after, before)
        if result.status != "applied":
            why = editor_conflict(change.source.display, result)
            problems.append(f"{why}, so the patch's change to it could not be undone")
    return problems


# --- writing the disk (a worker thread) -------------------------------------------------


@attrs.frozen(kw_only=True)
class _Write:
    path: str
    display: str
    data: bytes
    mode: int | None
    original: bytes | None
    """What was there before (None: nothing; the rollback removes the file)."""
    original_mode: int | None


@attrs.frozen(kw_only=True)
class _Removal:
    path: str
    display: str
    original: bytes
    mode: int | None


def _snapshot(path: str) -> tuple[bytes, int] | None:
    """The bytes and permission bits at ``path``, or None when nothing is there."""
    info = beneath.lstat(path)
    data = beneath.read_bytes(path) if info is not None else None
    if info is None or data is None:
        return None
    return data, stat.S_IMODE(info.st_mode)


def _plan(changes: Sequence[_Change]) -> tuple[list[_Write], list[_Removal]]:
    """What to write and remove, with the current bytes of everything touched as backups.

    Raises ``OSError`` when a file cannot be read (nothing has been changed yet)."""
    writes: list[_Write] = []
    removals: list[_Removal] = []
    for change in changes:
        source = _snapshot(change.source.path) if change.operation != "add" else None
        if change.operation != "add" and source is None:
            raise FileNotFoundError(2, "No such file or directory", change.source.path)
        if change.data is not None:
            original = _snapshot(change.final.path)
            writes.append(
                _Write(
                    path=change.final.path,
                    display=change.final.display,
                    data=change.data,
                    mode=source[1] if source is not None else None,
                    original=original[0] if original is not None else None,
                    original_mode=original[1] if original is not None else None,
                )
            )
        if source is not None and (change.data is None or change.destination is not None):
            removals.append(
                _Removal(
                    path=change.source.path,
                    display=change.source.display,
                    original=source[0],
                    mode=source[1],
                )
            )
    return writes, removals


@attrs.frozen(kw_only=True)
class _Written:
    """What :func:`_commit` changed, so :func:`_undo` can put it back."""

    replaced: list[_Write]
    removed: list[_Removal]
    created: list[str]


def _undo(written: _Written) -> list[str]:
    """Put back everything a successful :func:`_commit` changed; the problems, if any."""
    problems = _restore(written.replaced, written.removed)
    return problems + _discard((), written.created)


def _commit(changes: Sequence[_Change]) -> _Written | str:
    """Write every change, or none of them. What was changed, else the message for the
    model."""
    try:
        writes, removals = _plan(changes)
    except OSError as exc:
        where = exc.filename or "a file"
        return f"apply_patch failed: cannot read {where}: {_reason(exc)}. No file was changed."
    created: list[str] = []
    staged: list[tuple[str, _Write]] = []
    try:
        for write in writes:
            _make_parents(os.path.dirname(write.path), created)
            staged.append((write_temp(write.path, write.data, write.mode), write))
    except OSError as exc:
        failed = writes[len(staged)]
        problems = _discard([temp for temp, _ in staged], created)
        return _failure(f"could not write {failed.display}: {_reason(exc)}", problems)
    replaced: list[_Write] = []
    removed: list[_Removal] = []
    doing = ""
    try:
        for temp, write in staged:
            doing = f"could not write {write.display}"
            beneath.replace(temp, write.path)
            replaced.append(write)
        for removal in removals:
            doing = f"could not remove {removal.display}"
            beneath.unlink(removal.path)
            removed.append(removal)
    except OSError as exc:
        leftover = [temp for temp, _ in staged[len(replaced) :]]
        problems = _restore(replaced, removed)
        problems += _discard(leftover, created)
        return _failure(f"{doing}: {_reason(exc)}", problems)
    return _Written(replaced=replaced, removed=removed, created=created)


def _failure(what: str, problems: Sequence[str]) -> str:
    if not problems:
        return f"apply_patch failed: {what}. Every file was restored: no file was changed."
    listed = "\n".join(f"- {problem}" for problem in problems)
    return (
        f"apply_patch failed: {what}. Restoring the files touched so far failed too; "
        f"check them:\n{listed}"
    )


def _restore(replaced: Sequence[_Write], removed: Sequence[_Removal]) -> list[str]:
    problems: list[str] = []
    for removal in reversed(removed):
        try:
            temp = write_temp(removal.path, removal.original, removal.mode)
            beneath.replace(temp, removal.path)
        except OSError as exc:
            problems.append(
                f"{removal.display} was removed and could not be restored: {_reason(exc)}"
            )
    for write in reversed(replaced):
        try:
            if write.original is None:
                beneath.unlink(write.path)
            else:
                temp = write_temp(write.path, write.original, write.original_mode)
                beneath.replace(temp, write.path)
        except OSError as exc:
            problems.append(f"{write.display} could not be restored: {_reason(exc)}")
    return problems


def _discard(temps: Iterable[str], created: Sequence[str]) -> list[str]:
    problems: list[str] = []
    for temp in temps:
        try:
            beneath.unlink(temp)
        except FileNotFoundError:
            pass
        except OSError as exc:
            problems.append(f"temporary file {temp} could not be removed: {_reason(exc)}")
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            beneath.rmdir(folder)
    return problems


def _make_parents(folder: str, created: list[str]) -> None:
    """Create ``folder`` and its missing parents, adding each to ``created`` (outermost
    first) as soon as it exists, so a failure halfway still knows what to remove."""
    missing: list[str] = []
    while (found := beneath.lstat(folder)) is None or not stat.S_ISDIR(found.st_mode):
        if found is not None:
            raise NotADirectoryError(20, "Not a directory", folder)
        missing.append(folder)
        parent = os.path.dirname(folder)
        if parent == folder:
            break
        folder = parent
    for path in reversed(missing):
        beneath.mkdir(path)
        created.append(path)
