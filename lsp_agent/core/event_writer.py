"""One event at a time, outside a turn: appended to the session's log, then handed to the editor."""

from __future__ import annotations

from typing import Any

from lsp_agent.core.clock import iso_time
from lsp_agent.core.events import EventType, NewEvent
from lsp_agent.core.interfaces import Clock, Editor, EventStore


class EventWriter:
    """What the session's own operations (create, admit, config, revert) record; a turn's
    events go through its ``Recorder`` instead (which batches streamed text)."""

    def __init__(self, *, store: EventStore, editor: Editor, clock: Clock) -> None:
        self._store = store
        self._editor = editor
        self._clock = clock

    async def emit(self, session_id: str, type_: EventType, data: dict[str, Any]) -> None:
        event = NewEvent(type=type_, data=data, time=iso_time(self._clock.now()))
        for stored in await self._store.append(session_id, [event]):
            await self._editor.publish(stored)
