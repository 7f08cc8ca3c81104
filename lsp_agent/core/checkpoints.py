"""Checkpoints of what each step changed, and the three-step revert built on them
(``snapshot_steps`` records them during a turn).

A checkpoint records the workspace tree before and after a step that may change files
(``checkpoint_recorded``); a document open in the editor is recorded as its buffer holds it
(the agent's edits of open documents go through the editor and reach the disk only when the
user saves). Reverting to before a user message restores the files those steps touched to
the tree before the first of them (``revert_staged``: later messages are hidden, not
deleted) — an open document through the editor, any other file on disk;
``revert_cleared`` puts everything back; ``revert_committed`` makes it final (a new prompt
commits implicitly).

A revert has a *scope*: ``both`` (files and messages, the default), ``code`` (the files only:
no message is hidden or dropped) or ``conversation`` (the messages only: no file is touched).
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from typing import Any, Literal, Protocol, get_args

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.transcript import TranscriptMessage

BOM = "\ufeff"

RevertScope = Literal["both", "code", "conversation"]
REVERT_SCOPES: tuple[RevertScope, ...] = get_args(RevertScope)


class SnapshotChange(Protocol):
    """One file that differs between two snapshot trees."""

    @property
    def path(self) -> str: ...
    @property
    def status(self) -> str: ...
    @property
    def additions(self) -> int: ...
    @property
    def deletions(self) -> int: ...


class SnapshotStore(Protocol):
    """Snapshots of a workspace folder's files (``lsp_agent.snapshots`` implements it)."""

    async def track(self, workspace: Any, overlay: Mapping[str, str] | None = None) -> str:
        """The tree of the workspace now; a path in ``overlay`` (absolute path → an open
        buffer's text) is recorded with that text instead of its bytes on disk."""
        ...

    async def read(self, workspace: Any, tree: str, path: str) -> str | None:
        """The text ``tree`` has for ``path`` (relative); None when it has no such file."""
        ...

    async def diff(
        self, workspace: Any, from_tree: str, to_tree: str
    ) -> Sequence[SnapshotChange]: ...

    async def patch(self, workspace: Any, from_tree: str, to_tree: str) -> str: ...

    async def restore(
        self, workspace: Any, tree: str, paths: Sequence[str] | None = None
    ) -> list[str]: ...

    async def changed_since(
        self,
        workspace: Any,
        tree: str,
        paths: Sequence[str],
        overlay: Mapping[str, str] | None = None,
    ) -> list[str]: ...


@attrs.frozen(kw_only=True)
class Checkpoint:
    message_id: str
    before: str
    after: str
    paths: tuple[str, ...]


@attrs.frozen(kw_only=True)
class StagedRevert:
    message_id: str
    restore_tree: str
    undo_tree: str
    files: tuple[str, ...]
    hidden: tuple[str, ...]
    scope: RevertScope = "both"

    @property
    def restores_files(self) -> bool:
        return self.scope != "conversation"

    @property
    def hides_messages(self) -> bool:
        return self.scope != "code"


def revert_scope(value: object) -> RevertScope:
    """A stored or given scope; anything unknown (an event written before scopes) is
    ``both``."""
    return next((s for s in REVERT_SCOPES if s == value), "both")


def open_in(documents: Mapping[str, str], root: str) -> dict[str, str]:
    """The open documents (resolved path → buffer text) inside the folder ``root``."""
    prefix = root if root.endswith(os.sep) else root + os.sep
    return {path: text for path, text in documents.items() if path.startswith(prefix)}


def in_buffer_form(text: str, buffer: str) -> str:
    """``text`` (a file's, as a snapshot has it) the way ``buffer`` holds text: without a
    leading U+FEFF when the buffer has none (editors keep the disk's BOM out of it)."""
    return text if buffer.startswith(BOM) else text.removeprefix(BOM)


def checkpoints(events: Sequence[StoredEvent]) -> list[Checkpoint]:
    return [
        Checkpoint(
            message_id=recorded.message_id,
            before=recorded.before,
            after=recorded.after,
            paths=tuple(f["path"] for f in recorded.files),
        )
        for recorded in ev.of_type(events, ev.CheckpointRecorded)
    ]


def staged_revert(events: Sequence[StoredEvent]) -> StagedRevert | None:
    """The revert staged and neither cleared nor committed yet, if any."""
    staged: StagedRevert | None = None
    for event in events:
        if event.type == "revert_staged" and isinstance(data := event.event, ev.RevertStaged):
            staged = StagedRevert(
                message_id=data.message_id,
                restore_tree=data.restore_tree,
                undo_tree=data.undo_tree,
                files=tuple(data.files),
                hidden=tuple(data.hidden),
                scope=revert_scope(data.scope),
            )
        elif event.type in ("revert_cleared", "revert_committed"):
            staged = None
    return staged


@attrs.frozen(kw_only=True)
class CodeRewind:
    """A committed ``code``-scope revert: the files went back, the messages stayed."""

    seq: int
    """The ``revert_committed`` event's seq: what a later note names."""
    message_id: str
    files: tuple[str, ...]
    """The files restored (conflicts were left as they were)."""


def unnoted_code_rewinds(events: Sequence[StoredEvent]) -> list[CodeRewind]:
    """Committed ``code``-scope reverts the model was not told about (no ``context_noted``
    names their seq in ``codeRewinds``): its messages still say it made changes the files no
    longer have."""
    restored: dict[str, tuple[str, ...]] = {}
    rewinds: list[CodeRewind] = []
    noted: set[int] = set()
    for stored in events:
        if stored.type not in ("revert_staged", "revert_committed", "context_noted"):
            continue
        match stored.event:
            case ev.RevertStaged() as staged:
                conflicts = set(staged.conflicts)
                files = tuple(f for f in staged.files if f not in conflicts)
                restored[str(staged.message_id)] = files
            case ev.RevertCommitted() as committed if revert_scope(committed.scope) == "code":
                message_id = str(committed.message_id)
                files = restored.get(message_id, ())
                if files:
                    rewinds.append(CodeRewind(seq=stored.seq, message_id=message_id, files=files))
            case ev.ContextNoted(code_rewinds=seqs):
                noted.update(n for n in seqs or () if isinstance(n, int))
    return [r for r in rewinds if r.seq not in noted]


def hidden_messages(events: Sequence[StoredEvent]) -> frozenset[str]:
    """Messages a staged revert hides or a committed one dropped: never sent to the model.
    A ``code``-scope revert hides none."""
    hidden: set[str] = set()
    staged = staged_revert(events)
    if staged is not None and staged.hides_messages:
        hidden.update(staged.hidden)
    for committed in ev.of_type(events, ev.RevertCommitted):
        hidden.update(committed.dropped)
    return frozenset(hidden)


def messages_from(transcript: Sequence[TranscriptMessage], message_id: str) -> list[str]:
    """The ids of ``message_id`` and every message after it."""
    ids = [m.message_id for m in transcript]
    return ids[ids.index(message_id) :] if message_id in ids else []


def user_message_ids(events: Sequence[StoredEvent]) -> list[str]:
    """Promoted user messages, in order."""
    return [promoted.message_id for promoted in ev.of_type(events, ev.UserMessagePromoted)]
