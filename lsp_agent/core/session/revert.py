"""Revert: files back to before a user message, its messages hidden; staged, then cleared or
committed (a new prompt commits it). ``undo`` stages a revert of the last user message.

The scope picks what is taken back: ``both`` (the default), ``code`` (the files; every message
stays, and a commit drops none) or ``conversation`` (the messages; no file is read or
touched, so clearing restores none either). It is stored in ``revert_staged``.

A document open in the editor is changed through the editor (the change lands in its buffer
and undo history; the disk is the user's to save), any other file on disk.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.checkpoints import (
    REVERT_SCOPES,
    RevertScope,
    SnapshotStore,
    checkpoints,
    hidden_messages,
    in_buffer_form,
    messages_from,
    open_in,
    staged_revert,
    user_message_ids,
)
from lsp_agent.core.errors import RevertBlocked, SessionNotFound
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.interfaces import Editor, EventStore
from lsp_agent.core.uris import local_path

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class RevertResult:
    files: tuple[str, ...]
    """Every file the reverted steps changed (relative to the workspace folder)."""
    conflicts: tuple[str, ...]
    """The files left untouched: changed by the user since the agent's step (unless
    ``force``), or an open document the editor did not change."""
    reasons: dict[str, str] = attrs.field(factory=dict)
    """Why each conflict was left alone."""


class Reverts:
    def __init__(
        self,
        *,
        store: EventStore,
        editor: Editor,
        events: EventWriter,
        snapshots: SnapshotStore | None,
    ) -> None:
        """Without ``snapshots`` a revert hides messages and touches no file."""
        self._store = store
        self._editor = editor
        self._events = events
        self._snapshots = snapshots

    async def stage(
        self,
        session_id: str,
        message_id: str,
        *,
        force: bool = False,
        scope: RevertScope = "both",
    ) -> RevertResult:
        """Files back to before ``message_id``; it and later messages are hidden — or, by
        ``scope``, only the files (``code``) or only the messages (``conversation``).

        A file the user changed after the agent's last step (an open one: its buffer) is a
        conflict and is left alone unless ``force``; so is an open document the editor does
        not change, and one the revert would delete (unless ``force``: then it is deleted on
        disk)."""
        if scope not in REVERT_SCOPES:
            raise RevertBlocked(f"unknown revert scope {scope!r}")
        root = Path(await self._folder(session_id))
        events = await self._store.events(session_id)
        if staged_revert(events) is not None:
            await self.clear(session_id)
            events = await self._store.events(session_id)
        later = messages_from(await self._store.transcript(session_id), message_id)
        if not later or message_id not in user_message_ids(events):
            raise RevertBlocked(f"no user message {message_id!r} in session {session_id}")
        steps = [c for c in checkpoints(events) if c.message_id in later]
        if scope == "conversation":
            steps = []
        files = sorted({p for c in steps for p in c.paths})
        reasons: dict[str, str] = {}
        restore_tree = undo_tree = ""
        if steps and self._snapshots is not None:
            restore_tree = steps[0].before
            buffers = open_in(await self._editor.open_documents(), str(root))
            changed = await self._snapshots.changed_since(root, steps[-1].after, files, buffers)
            undo_tree = await self._snapshots.track(root, buffers)
            if not force:
                reasons = {p: "changed since the agent's step" for p in changed}
            chosen = [p for p in files if p not in reasons]
            reasons |= await self._restore(
                root, restore_tree, chosen, buffers, now=undo_tree, delete_open=force
            )
        conflicts = [p for p in files if p in reasons]
        await self._events.emit(
            session_id,
            ev.RevertStaged(
                message_id=message_id,
                restore_tree=restore_tree,
                undo_tree=undo_tree,
                files=files,
                conflicts=conflicts,
                hidden=later if scope != "code" else [],
                scope=scope,
            ),
        )
        return RevertResult(files=tuple(files), conflicts=tuple(conflicts), reasons=reasons)

    async def clear(self, session_id: str) -> RevertResult:
        """Undo the staged revert: files and messages back as they were.

        Open documents get their buffer's text back through the editor; a document the
        editor does not change is left alone (answered as a conflict)."""
        folder = await self._folder(session_id)
        staged = staged_revert(await self._store.events(session_id))
        if staged is None:
            return RevertResult(files=(), conflicts=())
        reasons: dict[str, str] = {}
        if staged.undo_tree and staged.files and self._snapshots is not None:
            root = Path(folder)
            buffers = open_in(await self._editor.open_documents(), str(root))
            reasons = await self._restore(
                root, staged.undo_tree, staged.files, buffers, now=None, delete_open=True
            )
            for path, why in reasons.items():
                _log.warning("revert cleared; %s left as it is: %s", path, why)
        await self._events.emit(
            session_id,
            ev.RevertCleared(
                message_id=staged.message_id, files=list(staged.files), scope=staged.scope
            ),
        )
        conflicts = tuple(p for p in staged.files if p in reasons)
        return RevertResult(files=staged.files, conflicts=conflicts, reasons=reasons)

    async def commit(self, session_id: str) -> tuple[str, ...]:
        """Make the staged revert final: the hidden messages are dropped from the session
        (none for a ``code``-scope revert)."""
        staged = staged_revert(await self._store.events(session_id))
        if staged is None:
            return ()
        dropped = staged.hidden if staged.hides_messages else ()
        await self._events.emit(
            session_id,
            ev.RevertCommitted(
                message_id=staged.message_id, dropped=list(dropped), scope=staged.scope
            ),
        )
        return dropped

    async def undo(self, session_id: str) -> tuple[str, list[dict[str, Any]]]:
        """Stage a revert of the last user message; its prompt goes back to the input box."""
        events = await self._store.events(session_id)
        hidden = hidden_messages(events)
        candidates = [m for m in user_message_ids(events) if m not in hidden]
        if not candidates:
            raise RevertBlocked(f"session {session_id} has nothing to undo")
        message_id = candidates[-1]
        await self.stage(session_id, message_id)
        return message_id, await self._store.inbox_content(message_id)

    async def _folder(self, session_id: str) -> str:
        info = await self._store.session(session_id)
        if info is None:
            raise SessionNotFound(session_id)
        return local_path(info.workspace_folder)

    async def _restore(
        self,
        root: Path,
        tree: str,
        paths: Sequence[str],
        buffers: Mapping[str, str],
        *,
        now: str | None,
        delete_open: bool,
    ) -> dict[str, str]:
        """Make ``paths`` match ``tree``: a document open in the editor (``buffers``) whose
        file exists through the editor, anything else on disk. Answers the paths left alone,
        with why. ``now`` is the tree of the workspace now, buffers included (taken here when
        None and needed); ``delete_open``: a document ``tree`` does not have is deleted on
        disk (else it is left alone)."""
        snapshots = self._snapshots
        assert snapshots is not None
        left: dict[str, str] = {}
        on_disk: list[str] = []
        for rel in paths:
            path = str(root / rel)
            buffer = buffers.get(path)
            if buffer is not None and now is None:
                now = await snapshots.track(root, buffers)
            if buffer is None or now is None or await snapshots.read(root, now, rel) is None:
                on_disk.append(rel)  # not open, or its file is gone (restored on disk)
                continue
            target = await snapshots.read(root, tree, rel)
            if target is None:
                if delete_open:
                    on_disk.append(rel)
                else:
                    left[rel] = (
                        "open in the editor; the revert would delete it (close it first, or force)"
                    )
                continue
            target = in_buffer_form(target, buffer)
            if target == buffer:
                continue
            result = await self._editor.apply_document_edit(path, buffer, target)
            if result.status == "not_open":  # closed meanwhile: the disk is its text now
                on_disk.append(rel)
            elif result.status == "conflict":
                left[rel] = f"the editor did not change it ({result.message or 'conflict'})"
        if on_disk:
            await snapshots.restore(root, tree, on_disk)
        return left
