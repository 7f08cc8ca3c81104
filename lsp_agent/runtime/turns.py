"""One turn at a time per session, for every front door.

A turn runs in a task of its own: started in the background (``start``: input that arrives
meanwhile is queued, already admitted, and runs right after) or claimed by a door that awaits
it (``claim``: ACP's ``session/prompt``, ``lsp-agent run``). Cancel stops the turn and waits
for it to record its end; other work that must not overlap a turn (compact, delete, revert)
holds the session exclusively; closing cancels every turn."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from lsp_agent.core.errors import SessionBusy

_log = logging.getLogger(__name__)

CANCEL_WAIT = 15.0
"""How long a cancel waits for the turn to record its end (killing a tool's process group
takes up to a few seconds)."""

RunTurn = Callable[[str], Awaitable[str]]
"""Runs one turn of a session; returns its stop reason."""
HasPending = Callable[[str], Awaitable[bool]]


class TurnScheduler:
    def __init__(self, *, run_turn: RunTurn, has_pending: HasPending) -> None:
        self._run_turn = run_turn
        self._has_pending = has_pending
        self._tasks: dict[str, asyncio.Task[Any]] = {}
        self._again: set[str] = set()
        self._exclusive: dict[str, str] = {}
        self._between: dict[str, asyncio.Event] = {}
        """Sessions whose turn has ended while their driver looks for queued input."""

    def running(self, session_id: str) -> bool:
        return session_id in self._tasks

    def check_free(self, session_id: str) -> None:
        """``SessionBusy`` while other work holds the session (a turn does not count)."""
        if session_id in self._exclusive:
            raise SessionBusy(session_id, self._exclusive[session_id])

    def check_idle(self, session_id: str) -> None:
        """``SessionBusy`` while a turn runs or other work holds the session."""
        self.check_free(session_id)
        if session_id in self._tasks:
            raise SessionBusy(session_id, "a turn is running")

    def start(self, session_id: str) -> bool:
        """Run the session's pending input; False when a turn is running (it will be run
        right after, by that turn's driver)."""
        self.check_free(session_id)
        if session_id in self._tasks:
            self._again.add(session_id)
            return False
        task = asyncio.create_task(self._drive(session_id), name=f"turn {session_id}")
        self._tasks[session_id] = task
        # A task cancelled before its first step never runs ``_drive``'s ``finally``.
        task.add_done_callback(lambda done: self._release(session_id, done))
        return True

    def claim(self, session_id: str, task: asyncio.Task[Any]) -> None:
        """Run ``task`` as the session's turn (a door that awaits its turn); ``SessionBusy``
        while a turn runs or other work holds the session."""
        self.check_idle(session_id)
        self._tasks[session_id] = task
        task.add_done_callback(lambda done: self._release(session_id, done))

    def _release(self, session_id: str, task: asyncio.Task[Any]) -> None:
        if self._tasks.get(session_id) is task:
            del self._tasks[session_id]

    async def cancel(self, session_id: str, *, wait: bool = True) -> None:
        """Stop the running turn (idempotent; nothing happens when idle); ``wait``: until it
        has recorded its end (at most ``CANCEL_WAIT``)."""
        self._again.discard(session_id)
        task = self._tasks.get(session_id)
        if task is None:
            return
        task.cancel()
        if wait:
            await asyncio.wait([task], timeout=CANCEL_WAIT)

    @contextlib.asynccontextmanager
    async def exclusive(self, session_id: str, doing: str) -> AsyncIterator[None]:
        """Hold the session for ``doing``; ``SessionBusy`` if a turn or other work has it (a
        turn that has just ended is waited for while its driver looks for queued input)."""
        between = self._between.get(session_id)
        if between is not None:
            await between.wait()
        if session_id in self._tasks:
            raise SessionBusy(session_id, "a turn is running")
        if session_id in self._exclusive:
            raise SessionBusy(session_id, self._exclusive[session_id])
        self._exclusive[session_id] = doing
        try:
            yield
        finally:
            del self._exclusive[session_id]

    async def aclose(self) -> None:
        """Cancel every running turn and wait for them to record their end."""
        tasks = list(self._tasks.values())
        for task in tasks:
            task.cancel()
        if tasks:
            await asyncio.wait(tasks, timeout=CANCEL_WAIT)

    async def _pending(self, session_id: str) -> bool:
        between = self._between[session_id] = asyncio.Event()
        try:
            return await self._has_pending(session_id)
        finally:
            del self._between[session_id]
            between.set()

    async def _drive(self, session_id: str) -> None:
        try:
            while True:
                self._again.discard(session_id)
                try:
                    stop_reason = await self._run_turn(session_id)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    _log.exception("the turn of session %s failed", session_id)
                    return
                if stop_reason == "cancelled":
                    return
                if session_id in self._again:
                    continue
                if stop_reason == "error" or not await self._pending(session_id):
                    # No await between this check and leaving _tasks: a prompt admitted
                    # after it starts a new driver.
                    if session_id in self._again:
                        continue
                    return
        finally:
            self._tasks.pop(session_id, None)
