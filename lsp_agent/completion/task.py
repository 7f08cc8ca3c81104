"""The agent's task in a folder, for completion to continue it: the plan of the session last
active there (its unfinished ``todowrite`` entries) and the hunks still pending review. Folded
incrementally from the session's events, and looked up at most once a second: it runs on
every pause in typing."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Sequence
from typing import Protocol

from lsp_agent.completion.context import TaskNote
from lsp_agent.core import events as ev
from lsp_agent.core.interfaces import Clock
from lsp_agent.core.review.ledger import Ledger

_log = logging.getLogger(__name__)

REFRESH = 1.0
"""Seconds a folder's task is fresh; an older one is used while the log is read again in the
background (two queries of the store on the typing path cost milliseconds)."""
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
        self._notes: dict[str, tuple[float, TaskNote]] = {}
        self._reading: dict[str, asyncio.Task[TaskNote]] = {}

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
        """The task of the session last active in ``folder`` (empty without one): read at
        once the first time, then refreshed in the background once a second."""
        known = self._notes.get(folder)
        if known is None:
            return await self._read(folder)
        if self._clock.monotonic() - known[0] >= REFRESH and folder not in self._reading:
            task = asyncio.ensure_future(self._read(folder))
            self._reading[folder] = task
            task.add_done_callback(lambda done: self._read_done(folder, done))
        return known[1]

    def _read_done(self, folder: str, done: asyncio.Task[TaskNote]) -> None:
        self._reading.pop(folder, None)
        if not done.cancelled() and done.exception() is not None:
            _log.warning("the agent's task could not be read: %s", done.exception())

    async def _read(self, folder: str) -> TaskNote:
        now = self._clock.monotonic()
        note = await self._note_now(folder)
        self._notes[folder] = (now, note)
        return note

    async def _note_now(self, folder: str) -> TaskNote:
        session_id = await self.active_session(folder)
        if session_id is None:
            return TaskNote()
        fold = self._folds.setdefault(session_id, _Fold())
        fold.apply(await self._log.events(session_id, after_seq=fold.ledger.seen))
        return fold.note()
