"""The agent's task in a folder, for completion to continue it: the plan of the session last
active there (its unfinished ``todowrite`` entries) and the hunks still pending review. Folded
incrementally from the session's events, and looked up at most once a second: it runs on
every pause in typing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lsp_agent.completion.context import TaskNote
from lsp_agent.core import events as ev
from lsp_agent.core.interfaces import Clock
from lsp_agent.core.review.ledger import Ledger

REFRESH = 1.0
"""Seconds a folder's task is reused before the log is read again."""
HUNKS = 4
"""Pending hunks shown at most (the latest)."""


class SessionLog(Protocol):
    """What the task is read from: ``runtime.sessions.Sessions``."""

    async def latest(self, folder: str) -> str | None: ...

    async def events(
        self, session_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[ev.StoredEvent]: ...


class _Fold:
    def __init__(self) -> None:
        self.ledger = Ledger()
        self.plan: tuple[str, ...] = ()

    def apply(self, events: Sequence[ev.StoredEvent]) -> None:
        for stored in events:
            if stored.type == "plan_updated":
                plan = stored.event
                assert isinstance(plan, ev.PlanUpdated)
                self.plan = tuple(
                    str(entry.get("content", ""))
                    for entry in plan.entries
                    if entry.get("status") not in ("completed", "cancelled")
                )
            self.ledger.apply(stored)

    def note(self) -> TaskNote:
        ledger = self.ledger
        pending = [h for h in ledger.hunks() if ledger.status(h.hunk_id) == "pending"]
        return TaskNote(plan=self.plan, hunks=tuple((h.path, h.new_text) for h in pending[-HUNKS:]))


class FolderTasks:
    def __init__(self, log: SessionLog, clock: Clock) -> None:
        self._log = log
        self._clock = clock
        self._folds: dict[str, _Fold] = {}
        self._active: dict[str, tuple[float, str | None]] = {}

    async def active_session(self, folder: str) -> str | None:
        """The session last active in ``folder`` (looked up at most once a second)."""
        now = self._clock.monotonic()
        known = self._active.get(folder)
        if known is not None and now - known[0] < REFRESH:
            return known[1]
        session_id = await self._log.latest(folder)
        self._active[folder] = (now, session_id)
        return session_id

    async def note(self, folder: str) -> TaskNote:
        """The task of the session last active in ``folder`` (empty without one)."""
        session_id = await self.active_session(folder)
        if session_id is None:
            return TaskNote()
        fold = self._folds.setdefault(session_id, _Fold())
        fold.apply(await self._log.events(session_id, after_seq=fold.ledger.seen))
        return fold.note()
