"""The review list folded from a session's events: which hunks exist and their status.

- ``review_recorded`` adds a step's hunks, ``pending``;
- ``review_resolved`` marks the hunks it names ``kept`` or ``undone``;
- a revert that restores files (``revert_staged`` with scope ``both`` or ``code``) hides the
  hunks of the steps it took back, except in the files it left alone as conflicts;
  ``revert_cleared`` shows them again and ``revert_committed`` drops them for good. A revert
  of the conversation only leaves the files, and so the hunks, as they are;
- a ``context_noted`` with ``reviewHunks`` told the model about those undone hunks;
- ``review_commented`` adds the user's comment (or keep/undo reason) on hunks, and
  ``review_comments_sent`` marks comments as gone to the model with a user message.

The fold can be fed incrementally (:meth:`Ledger.apply` skips what it has seen), so a turn
reads only the events since its last look.
"""

from __future__ import annotations

import posixpath
from collections.abc import Iterable, Mapping, Sequence
from typing import Literal

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.review.hunks import HunkKind
from lsp_agent.core.uris import file_uri

_FOLDED = frozenset(
    {
        "user_message_promoted",
        "review_recorded",
        "review_resolved",
        "context_noted",
        "revert_staged",
        "revert_cleared",
        "revert_committed",
        "review_commented",
        "review_comments_sent",
    }
)
"""The event types the fold reads."""

HunkStatus = Literal["pending", "kept", "undone"]
FileStatus = Literal["pending", "kept", "undone", "mixed"]
STATUSES: tuple[HunkStatus, ...] = ("pending", "kept", "undone")


@attrs.frozen(kw_only=True)
class Hunk:
    hunk_id: str
    path: str
    """Relative to the session's workspace folder, ``/``-separated."""
    kind: HunkKind
    message_id: str
    """The user message whose turn made the change."""
    step: str
    """The checkpoint of the step that made it (hunks of one step share the after tree)."""
    after: str
    """The snapshot tree after that step."""
    recorded_seq: int
    old_start: int
    new_start: int
    old_text: str
    new_text: str


def hunk_from(record: ev.HunkRecord, event: ev.ReviewRecorded, seq: int) -> Hunk:
    """One hunk of a ``review_recorded`` event."""
    return Hunk(
        hunk_id=record["hunkId"],
        path=record["path"],
        kind=record.get("kind", "modified"),
        message_id=event.message_id,
        step=event.checkpoint_id,
        after=event.after,
        recorded_seq=seq,
        old_start=record.get("oldStart", 0),
        new_start=record.get("newStart", 0),
        old_text=record.get("oldText", ""),
        new_text=record.get("newText", ""),
    )


@attrs.frozen(kw_only=True)
class Comment:
    """The user's words on hunks: a comment, or why they kept or undid them."""

    comment_id: str
    hunk_ids: tuple[str, ...]
    text: str
    action: Literal["comment", "keep", "undo"]
    lines: Mapping[str, int]
    """Each hunk's 0-based line when commented (when known)."""


class Ledger:
    def __init__(self) -> None:
        self.seen = 0
        """The last seq folded in."""
        self._hunks: dict[str, Hunk] = {}
        self._status: dict[str, HunkStatus] = {}
        self._undone_at: dict[str, int] = {}
        self._noted: set[str] = set()
        self._promoted: dict[str, int] = {}
        self._staged: set[str] = set()
        self._dropped: set[str] = set()
        self._comments: dict[str, Comment] = {}
        self._sent: set[str] = set()

    def apply_all(self, events: Iterable[StoredEvent]) -> Ledger:
        for event in events:
            self.apply(event)
        return self

    def apply(self, stored: StoredEvent) -> None:
        if stored.seq <= self.seen:
            return
        self.seen = stored.seq
        if stored.type not in _FOLDED:
            return  # not decoded: most of a log is streamed text
        match stored.event:
            case ev.UserMessagePromoted(message_id=message_id):
                self._promoted[message_id] = stored.seq
            case ev.ReviewRecorded() as recorded:
                for record in recorded.hunks:
                    hunk = hunk_from(record, recorded, stored.seq)
                    self._hunks.setdefault(hunk.hunk_id, hunk)
                    self._status.setdefault(hunk.hunk_id, "pending")
            case ev.ReviewResolved() as resolved:
                status: HunkStatus = "undone" if resolved.action == "undo" else "kept"
                for hunk_id in resolved.resolved:
                    if hunk_id in self._hunks:
                        self._status[hunk_id] = status
                self._undone_at.update({k: int(v) for k, v in (resolved.lines or {}).items()})
            case ev.ReviewCommented() as commented:
                self._comments[commented.comment_id] = Comment(
                    comment_id=commented.comment_id,
                    hunk_ids=tuple(commented.hunk_ids),
                    text=commented.text,
                    action=commented.action,
                    lines=dict(commented.lines or {}),
                )
            case ev.ReviewCommentsSent(comment_ids=sent):
                self._sent.update(sent)
            case ev.ContextNoted(review_hunks=noted):
                self._noted.update(noted or ())
            case ev.RevertStaged() as staged:
                self._staged = self._taken_back(staged)
            case ev.RevertCleared():
                self._staged = set()
            case ev.RevertCommitted():
                self._dropped |= self._staged
                self._staged = set()

    def _taken_back(self, staged: ev.RevertStaged) -> set[str]:
        if staged.scope == "conversation" or not staged.files:
            return set()
        since = self._promoted.get(staged.message_id)
        if since is None:
            return set()
        left = set(staged.conflicts)
        return {
            h.hunk_id for h in self._hunks.values() if h.recorded_seq > since and h.path not in left
        }

    # -- reading -------------------------------------------------------------------------

    def hunks(self) -> list[Hunk]:
        """The listed hunks, in the order they were recorded."""
        hidden = self._staged | self._dropped
        return [h for h in self._hunks.values() if h.hunk_id not in hidden]

    def status(self, hunk_id: str) -> HunkStatus:
        return self._status.get(hunk_id, "pending")

    def undone_at(self, hunk_id: str) -> int | None:
        """The line the hunk's old text was restored at, when it was undone."""
        return self._undone_at.get(hunk_id)

    def hunk(self, hunk_id: str) -> Hunk | None:
        """A listed hunk by id."""
        found = self._hunks.get(hunk_id)
        hidden = self._staged | self._dropped
        return None if found is None or hunk_id in hidden else found

    def comments_of(self, hunk_id: str) -> list[tuple[Comment, bool]]:
        """The comments on a hunk, in the order made, each with whether it was sent."""
        return [
            (c, c.comment_id in self._sent)
            for c in self._comments.values()
            if hunk_id in c.hunk_ids
        ]

    def unsent_comments(self) -> list[Comment]:
        """Comments not yet sent to the model, in the order made, on hunks still listed."""
        return [
            c
            for c in self._comments.values()
            if c.comment_id not in self._sent and any(self.hunk(h) for h in c.hunk_ids)
        ]

    def files(self) -> list[str]:
        """The listed files, in the order they were first changed."""
        return list(dict.fromkeys(h.path for h in self.hunks()))

    def unnoted_undone(self) -> list[Hunk]:
        """Undone hunks the model has not been told about yet."""
        return [
            h
            for h in self.hunks()
            if self.status(h.hunk_id) == "undone" and h.hunk_id not in self._noted
        ]

    def summary(
        self,
        folder: str,
        *,
        adding: Sequence[str] = (),
        resolved: Mapping[str, HunkStatus] | None = None,
    ) -> list[ev.ReviewFile]:
        """Every listed file with its counts (``review_update`` ``files``), as it is once
        ``adding`` (the paths of new pending hunks, one entry per hunk) and ``resolved`` (hunk
        id → its new status) are folded in too."""
        changed = resolved or {}
        counts: dict[str, dict[HunkStatus, int]] = {}
        for hunk in self.hunks():
            status = changed.get(hunk.hunk_id, self.status(hunk.hunk_id))
            counts.setdefault(hunk.path, dict.fromkeys(STATUSES, 0))[status] += 1
        for path in adding:
            counts.setdefault(path, dict.fromkeys(STATUSES, 0))["pending"] += 1
        return [
            {
                "uri": file_uri(posixpath.join(folder, path)),
                "status": file_status(c),
                "pending": c["pending"],
                "kept": c["kept"],
                "undone": c["undone"],
            }
            for path, c in counts.items()
        ]


def file_status(counts: dict[HunkStatus, int]) -> FileStatus:
    """The hunks' common status, else ``mixed``."""
    present = [status for status in STATUSES if counts.get(status)]
    return present[0] if len(present) == 1 else "mixed"


def fold(events: Iterable[StoredEvent]) -> Ledger:
    return Ledger().apply_all(events)
