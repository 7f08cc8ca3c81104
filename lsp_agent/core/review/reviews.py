"""The review list and its two answers, keep and undo (``SessionService`` calls these).

The list is the session's ledger (``ledger``) with each hunk located (``locate``) in the
file's current text: the buffer when the editor has the file open, else the disk.

Undo writes, per file, ONE change that puts each chosen hunk's old lines back in place of its
new ones: an open document through the editor (``Editor.apply_document_edit``, so the user's
editor can undo the undo), any other file through the :class:`FileTexts` port (an atomic
write; the app plugs in ``workspace.disk_texts.DiskTexts``). Undoing a created file deletes it
(empties its buffer when open); undoing a deletion writes the file again. A hunk that is not
found (its text changed since) is a conflict and its file is not touched for it; an editor
that refuses the change makes every hunk of that file a conflict, and nothing is written
instead. Keep only marks hunks kept.
"""

from __future__ import annotations

import logging
import posixpath
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Literal, Protocol

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.checkpoints import BOM, SnapshotStore
from lsp_agent.core.errors import InvalidParams, LspAgentError, SessionNotFound
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.interfaces import Editor, EventStore
from lsp_agent.core.review.hunks import split_lines
from lsp_agent.core.review.ledger import (
    STATUSES,
    Comment,
    FileStatus,
    Hunk,
    HunkStatus,
    Ledger,
    file_status,
    fold,
)
from lsp_agent.core.review.locate import Span, locate_step
from lsp_agent.core.uris import local_path

_log = logging.getLogger(__name__)

ReviewAction = Literal["keep", "undo"]
CommentAction = Literal["comment", "keep", "undo"]
KEPT_AFTER_TEXTS = 256
"""Step texts kept in memory between ``list`` calls (a tree's text never changes)."""
NOT_FOUND = "its text is no longer in the file (changed by you or by a later step)"


class FileTexts(Protocol):
    """Files on disk as text (``surrogateescape`` for bytes that are not UTF-8, a BOM kept
    as U+FEFF)."""

    async def read_text(self, path: str) -> str | None:
        """The file's text; None when there is no such regular file."""
        ...

    async def write_text(self, path: str, text: str) -> None:
        """Replace (or create) the file atomically. Raises ``OSError``."""
        ...

    async def remove(self, path: str) -> None:
        """Delete the file (nothing when it is gone already). Raises ``OSError``."""
        ...


@attrs.frozen(kw_only=True)
class HunkView:
    hunk_id: str
    status: HunkStatus
    message_id: str
    place: Span | None
    """Where its new text (undone: its old text) is in the current text; None: not found."""
    old_text: str
    new_text: str
    comments: tuple[tuple[Comment, bool], ...] = ()
    """The user's comments on it, each with whether it was sent to the model."""


@attrs.frozen(kw_only=True)
class FileView:
    path: str
    """Absolute."""
    status: FileStatus
    hunks: tuple[HunkView, ...]


@attrs.frozen(kw_only=True)
class Conflict:
    hunk_id: str
    reason: str


@attrs.frozen(kw_only=True)
class ResolveResult:
    resolved: tuple[str, ...]
    conflicts: tuple[Conflict, ...]
    lines: Mapping[str, int] = attrs.field(factory=dict)
    """Where each undone hunk's old text now starts."""


@attrs.frozen(kw_only=True)
class _Current:
    text: str | None
    """Without a BOM; None: the file does not exist on disk."""
    raw: str | None
    """As the buffer or the disk holds it."""
    in_editor: bool


class Reviews:
    def __init__(
        self,
        *,
        store: EventStore,
        editor: Editor,
        events: EventWriter,
        snapshots: SnapshotStore | None,
        files: FileTexts | None,
    ) -> None:
        """Without ``snapshots`` no hunk is ever recorded; without ``files`` a file that is
        not open in the editor reads as absent and cannot be undone."""
        self._store = store
        self._editor = editor
        self._events = events
        self._snapshots = snapshots
        self._files = files
        self._after: dict[tuple[str, str], str | None] = {}

    async def files(self, session_id: str) -> list[FileView]:
        """Every listed file, in the order first changed; hunks in file order (by place,
        the ones not found last)."""
        root = await self._folder(session_id)
        ledger = fold(await self._store.events(session_id))
        views = []
        for path in ledger.files():
            hunks = [h for h in ledger.hunks() if h.path == path]
            current = await self._current(posixpath.join(root, path))
            places = await self._locate(Path(root), ledger, hunks, current.text)
            shown = [
                HunkView(
                    hunk_id=h.hunk_id,
                    status=ledger.status(h.hunk_id),
                    message_id=h.message_id,
                    place=places[h.hunk_id],
                    old_text=h.old_text,
                    new_text=h.new_text,
                    comments=tuple(ledger.comments_of(h.hunk_id)),
                )
                for h in hunks
            ]
            shown.sort(key=_file_order)
            views.append(
                FileView(
                    path=posixpath.join(root, path),
                    status=file_status(_counts(ledger, hunks)),
                    hunks=tuple(shown),
                )
            )
        return views

    async def resolve(
        self,
        session_id: str,
        action: ReviewAction,
        hunk_ids: Sequence[str] | None = None,
        paths: Sequence[str] | None = None,
    ) -> ResolveResult:
        """Keep or undo the pending hunks chosen by ``hunk_ids`` and ``paths`` (absolute;
        the union), or every pending hunk when neither is given. Hunks that are not pending
        are ignored."""
        root = await self._folder(session_id)
        ledger = fold(await self._store.events(session_id))
        chosen = _chosen(ledger, root, hunk_ids, paths)
        if action == "keep":
            resolved: list[str] = [h.hunk_id for h in chosen]
            conflicts: list[Conflict] = []
            lines: dict[str, int] = {}
        else:
            resolved, conflicts, lines = await self._undo(Path(root), ledger, chosen)
        if resolved:
            status: HunkStatus = "kept" if action == "keep" else "undone"
            event = ev.ReviewResolved(
                action=action,
                resolved=resolved,
                conflicts=[{"hunkId": c.hunk_id, "reason": c.reason} for c in conflicts],
                files=ledger.summary(root, resolved=dict.fromkeys(resolved, status)),
                lines=lines or None,
            )
            await self._events.emit(session_id, event)
        return ResolveResult(resolved=tuple(resolved), conflicts=tuple(conflicts), lines=lines)

    # -- comments ----------------------------------------------------------------------------

    async def unsent_comments(self, session_id: str) -> int:
        """How many comments wait for the next prompt."""
        return len(fold(await self._store.events(session_id)).unsent_comments())

    async def comment(
        self,
        session_id: str,
        comment_id: str,
        hunk_ids: Sequence[str],
        text: str,
        action: CommentAction = "comment",
        lines: Mapping[str, int] | None = None,
    ) -> None:
        """Record the user's ``text`` on listed hunks (any status); ``lines``: where the hunks
        are when known (else they are located now). Raises ``InvalidParams`` for a hunk that
        is not listed."""
        root = await self._folder(session_id)
        ledger = fold(await self._store.events(session_id))
        hunks = [ledger.hunk(h) for h in hunk_ids]
        missing = [h for h, found in zip(hunk_ids, hunks, strict=True) if found is None]
        if missing:
            raise InvalidParams(f"hunkId: {missing[0]} is not in the review list")
        where = dict(lines or {})
        for path in dict.fromkeys(h.path for h in hunks if h is not None):
            of_path = [h for h in ledger.hunks() if h.path == path]
            current = await self._current(posixpath.join(root, path))
            places = await self._locate(Path(root), ledger, of_path, current.text)
            for hunk_id in hunk_ids:
                place = places.get(hunk_id)
                if hunk_id not in where and place is not None:
                    where[hunk_id] = place.start
        event = ev.ReviewCommented(
            comment_id=comment_id,
            hunk_ids=list(hunk_ids),
            text=text,
            action=action,
            lines=where or None,
            files=ledger.summary(root),
        )
        await self._events.emit(session_id, event)

    # -- undo ------------------------------------------------------------------------------

    async def _undo(
        self, root: Path, ledger: Ledger, chosen: Sequence[Hunk]
    ) -> tuple[list[str], list[Conflict], dict[str, int]]:
        resolved: list[str] = []
        conflicts: list[Conflict] = []
        lines: dict[str, int] = {}
        for path in dict.fromkeys(h.path for h in chosen):
            mine = [h for h in chosen if h.path == path]
            absolute = str(root / path)
            current = await self._current(absolute)
            all_hunks = [h for h in ledger.hunks() if h.path == path]
            places = await self._locate(root, ledger, all_hunks, current.text)
            located: list[tuple[Hunk, Span]] = []
            for hunk in mine:
                place = places.get(hunk.hunk_id)
                if place is None:
                    conflicts.append(Conflict(hunk_id=hunk.hunk_id, reason=NOT_FOUND))
                elif any(_overlap(place, other) for _, other in located):
                    reason = "it overlaps another hunk being undone; undo them one at a time"
                    conflicts.append(Conflict(hunk_id=hunk.hunk_id, reason=reason))
                else:
                    located.append((hunk, place))
            if not located:
                continue
            failure = await self._write(absolute, current, located)
            if failure is not None:
                conflicts += [Conflict(hunk_id=h.hunk_id, reason=failure) for h, _ in located]
                continue
            resolved += [h.hunk_id for h, _ in located]
            lines.update(_restored_lines(located))
        return resolved, conflicts, lines

    async def _write(
        self, path: str, current: _Current, located: Sequence[tuple[Hunk, Span]]
    ) -> str | None:
        """Put the located hunks' old text back in ``path``: one change. None when done,
        else why nothing was written."""
        text = current.text or ""
        out = split_lines(text)
        for hunk, place in sorted(located, key=lambda x: (x[1].start, x[1].end), reverse=True):
            out[place.start : place.end] = split_lines(hunk.old_text)
        new_text = "".join(out)
        remove = any(h.kind == "created" for h, _ in located) and not new_text
        raw = current.raw
        if raw is not None and raw.startswith(BOM):
            new_text = BOM + new_text
        if current.in_editor and raw is not None:
            result = await self._editor.apply_document_edit(path, raw, new_text)
            if result.status == "applied":
                return None
            if result.status == "not_open":
                return "the file was closed in the editor meanwhile; list the hunks again"
            return f"the editor did not apply the undo ({result.message or 'refused'})"
        if self._files is None:
            return "this host cannot write files on disk"
        try:
            if await self._files.read_text(path) != raw:
                return "the file changed on disk meanwhile; list the hunks again"
            if remove:
                await self._files.remove(path)
            else:
                await self._files.write_text(path, new_text)
        except OSError as error:
            return f"cannot write the file: {error.strerror or error}"
        return None

    # -- reading ---------------------------------------------------------------------------

    async def _current(self, path: str) -> _Current:
        """The file's text now: the editor's buffer when it is open (and the file is on
        disk: a buffer whose file is gone counts as gone, as in a revert), else the disk."""
        disk = await self._files.read_text(path) if self._files is not None else None
        buffer = await self._editor.open_document_text(path)
        if buffer is not None and (disk is not None or self._files is None):
            return _Current(text=buffer.removeprefix(BOM), raw=buffer, in_editor=True)
        text = None if disk is None else disk.removeprefix(BOM)
        return _Current(text=text, raw=disk, in_editor=False)

    async def _locate(
        self, root: Path, ledger: Ledger, hunks: Sequence[Hunk], current: str | None
    ) -> dict[str, Span | None]:
        status = {h.hunk_id: ledger.status(h.hunk_id) for h in hunks}
        places: dict[str, Span | None] = {}
        for step in dict.fromkeys(h.step for h in hunks):
            of_step = [h for h in hunks if h.step == step]
            try:
                after = await self._after_text(root, of_step[0].after, of_step[0].path)
            except (LspAgentError, OSError):
                _log.warning("cannot read the snapshot of step %s", step, exc_info=True)
                places.update(dict.fromkeys((h.hunk_id for h in of_step), None))
                continue
            places.update(locate_step(after, of_step, status, current))
        return places

    async def _after_text(self, root: Path, tree: str, path: str) -> str | None:
        key = (tree, path)
        if key not in self._after:
            if self._snapshots is None:
                raise LspAgentError("snapshots are turned off")
            text = await self._snapshots.read(root, tree, path)
            self._after[key] = None if text is None else text.removeprefix(BOM)
            while len(self._after) > KEPT_AFTER_TEXTS:
                del self._after[next(iter(self._after))]
        return self._after[key]

    async def _folder(self, session_id: str) -> str:
        info = await self._store.session(session_id)
        if info is None:
            raise SessionNotFound(session_id)
        return local_path(info.workspace_folder)


def _chosen(
    ledger: Ledger, root: str, hunk_ids: Sequence[str] | None, paths: Sequence[str] | None
) -> list[Hunk]:
    pending = [h for h in ledger.hunks() if ledger.status(h.hunk_id) == "pending"]
    if hunk_ids is None and paths is None:
        return pending
    ids = set(hunk_ids or ())
    wanted = set(paths or ())
    return [h for h in pending if h.hunk_id in ids or posixpath.join(root, h.path) in wanted]


def _counts(ledger: Ledger, hunks: Sequence[Hunk]) -> dict[HunkStatus, int]:
    counts = dict.fromkeys(STATUSES, 0)
    for hunk in hunks:
        counts[ledger.status(hunk.hunk_id)] += 1
    return counts


def _file_order(view: HunkView) -> tuple[int, int, int]:
    if view.place is None:
        return (1, 0, 0)
    return (0, view.place.start, view.place.end)


def _overlap(a: Span, b: Span) -> bool:
    if a.start == b.start:
        return True
    return a.start < b.end and b.start < a.end


def _restored_lines(located: Sequence[tuple[Hunk, Span]]) -> Mapping[str, int]:
    """Where each hunk's old text starts once all of them are put back."""
    out: dict[str, int] = {}
    for hunk, place in located:
        shift = sum(
            len(split_lines(other.old_text)) - other_place.count
            for other, other_place in located
            if other_place.end <= place.start and other_place is not place
        )
        out[hunk.hunk_id] = place.start + shift
    return out


__all__ = [
    "CommentAction",
    "Conflict",
    "FileTexts",
    "FileView",
    "HunkView",
    "ResolveResult",
    "ReviewAction",
    "Reviews",
]
