"""One event at a time, outside a turn: appended to the session's log, then handed to the editor."""

from __future__ import annotations

from lsp_agent.core.clock import iso_time
from lsp_agent.core.events import Event, NewEvent
from lsp_agent.core.interfaces import Clock, Editor, EventStore


class EventWriter:
    """What the session's own operations (create, admit, config, revert) record; a turn's
    events go through its ``Recorder`` instead (which batches streamed text)."""

    def __init__(self, *, store: EventStore, editor: Editor, clock: Clock) -> None:
        self._store = store
        self._editor = editor
        self._clock = clock

    async def emit(self, session_id: str, event: Event) -> None:
        new = NewEvent.of(event, iso_time(self._clock.now()))
        for stored in await self._store.append(session_id, [new]):
            await self._editor.publish(stored)
