"""A fake Editor: records what the core publishes and answers asks from a script."""

from __future__ import annotations

from collections.abc import Iterable

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission import PermissionAsk, PermissionReply


class UnexpectedAsk(AssertionError):
    """The core asked the user something the test did not script."""


class RecordingEditor:
    """``replies`` answer permission asks in order; ``buffers`` are open documents by path."""

    def __init__(
        self,
        replies: Iterable[PermissionReply] = (),
        *,
        buffers: dict[str, str] | None = None,
    ) -> None:
        self.events: list[StoredEvent] = []
        self.asks: list[PermissionAsk] = []
        self._replies = list(replies)
        self._buffers = dict(buffers or {})

    async def publish(self, event: StoredEvent) -> None:
        self.events.append(event)

    async def open_document_text(self, path: str) -> str | None:
        return self._buffers.get(path)

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        self.asks.append(ask)
        if not self._replies:
            raise UnexpectedAsk(f"unscripted permission ask: {ask.request.title}")
        return self._replies.pop(0)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of_type(self, type_: str) -> list[StoredEvent]:
        return [e for e in self.events if e.type == type_]
