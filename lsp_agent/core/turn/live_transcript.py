"""The session's transcript as a turn sees it, kept up to date by ``seq``.

Read whole once, when the turn opens its view; after that each step reads only the messages
that events after the last ``seq`` read added or changed (``EventStore.transcript_changes``),
so a step costs the same at step 800 as at step 8. A message nothing touched keeps its
object, which lets what is derived from it (its folded model messages, their wire form) be
cached by identity.
"""

from __future__ import annotations

from lsp_agent.core.interfaces import EventStore
from lsp_agent.core.transcript import TranscriptMessage


class LiveTranscript:
    """One session's transcript, caught up on demand."""

    def __init__(self, store: EventStore, session_id: str) -> None:
        self._store = store
        self._session_id = session_id
        self._messages: list[TranscriptMessage] = []
        self._index: dict[str, int] = {}
        self._through = 0

    @property
    def through_seq(self) -> int:
        """The seq of the last event the transcript reflects (0: nothing read yet)."""
        return self._through

    async def current(self) -> list[TranscriptMessage]:
        """The transcript now: what was read, with what changed since replaced or added."""
        changed, through = await self._store.transcript_changes(self._session_id, self._through)
        for message in changed:
            at = self._index.get(message.message_id)
            if at is None:
                # New messages come after every message read (their seq is later).
                self._index[message.message_id] = len(self._messages)
                self._messages.append(message)
            else:
                self._messages[at] = message
        self._through = through
        return list(self._messages)
