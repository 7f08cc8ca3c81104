"""``agent/session/update``: the event log, relayed to the client gap-free and in order.

Events are committed with per-session ``seq`` numbers and published after the commit, but two
writers of one session (the turn, and an ``admit`` or a title on the side) may publish out of
order. So each session's stream remembers the last ``seq`` it sent: an older event is skipped
(already sent), and a jump ahead first sends the missing events from the log. A ``load`` with
replay takes the same lock, so replayed and live updates never interleave.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.interfaces import EventStore
from lsp_agent.wire.updates import to_update

Send = Callable[[dict[str, Any]], None]

_REPLAY_PAGE = 500


class UpdateStream:
    def __init__(self, *, store: EventStore, send: Send) -> None:
        self._store = store
        self._send = send
        self._sent: dict[str, int] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    def _lock(self, session_id: str) -> asyncio.Lock:
        return self._locks.setdefault(session_id, asyncio.Lock())

    def follow(self, session_id: str, after_seq: int) -> None:
        """Start relaying a session whose events up to ``after_seq`` the client has (or
        does not want). Called when a session is created, prompted or loaded."""
        self._sent.setdefault(session_id, after_seq)

    async def publish(self, event: StoredEvent) -> None:
        session_id = event.session_id
        async with self._lock(session_id):
            sent = self._sent.get(session_id)
            if sent is None:
                # A session this client never asked about (e.g. a subagent's child session):
                # relay from here on.
                sent = event.seq - 1
            if event.seq <= sent:
                return
            if event.seq > sent + 1:
                sent = await self._fill(session_id, sent, event.seq)
            self._send(to_update(event))
            self._sent[session_id] = event.seq

    async def replay(self, session_id: str, from_seq: int) -> int:
        """Send every event with ``seq >= from_seq`` (1 = everything); the last seq sent."""
        async with self._lock(session_id):
            last = max(from_seq - 1, 0)
            while True:
                events = await self._store.events(session_id, after_seq=last, limit=_REPLAY_PAGE)
                for event in events:
                    self._send(to_update(event))
                    last = event.seq
                if len(events) < _REPLAY_PAGE:
                    break
            self._sent[session_id] = max(last, self._sent.get(session_id, 0))
            return last

    async def skip_to_end(self, session_id: str) -> int:
        """Relay only what comes next (``replay: "none"``); the last seq so far."""
        async with self._lock(session_id):
            events = await self._store.events(session_id)
            last = events[-1].seq if events else 0
            self._sent[session_id] = max(last, self._sent.get(session_id, 0))
            return last

    def forget(self, session_id: str) -> None:
        self._sent.pop(session_id, None)
        self._locks.pop(session_id, None)

    async def _fill(self, session_id: str, sent: int, upto: int) -> int:
        missing = await self._store.events(session_id, after_seq=sent, limit=upto - sent - 1)
        for event in missing:
            if event.seq >= upto:
                break
            self._send(to_update(event))
            sent = event.seq
        return sent
