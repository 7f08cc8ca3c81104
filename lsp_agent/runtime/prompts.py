"""Prompts admitted for a door whose turns run in the background (``agent/session/prompt``):
durable first, then run now or queued behind the running turn.

A ``clientMessageId`` is de-duplicated here and only here: a retried prompt gets the answer
the first one got (remembered in memory; after a restart, or past ``KEPT_ANSWERS``, the log
still knows the message id) and admits nothing new. One session's prompts are admitted one
at a time, so two copies of one prompt never both pass the check.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from lsp_agent.core.attachments import PromptFocus
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.runtime.turns import TurnScheduler
from lsp_agent.storage.event_log import SqliteEventStore

KEPT_ANSWERS = 1024


@attrs.frozen
class Admitted:
    message_id: str
    queued: bool
    """A turn is running: the input runs right after it."""


ServiceOf = Callable[[SessionInfo], Awaitable[SessionService]]


class Prompts:
    def __init__(
        self, *, store: SqliteEventStore, turns: TurnScheduler, service_of: ServiceOf
    ) -> None:
        self._store = store
        self._turns = turns
        self._service_of = service_of
        self._answers: dict[tuple[str, str], Admitted] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def submit(
        self,
        info: SessionInfo,
        content: list[dict[str, Any]],
        *,
        client_message_id: str | None = None,
        focus: PromptFocus | None = None,
    ) -> Admitted:
        """Admit ``content`` to the session ``info`` (read once by the caller, passed down)
        and run it; ``focus``: the editor context it came with (for its mentions)."""
        session_id = info.session_id
        async with self._locks.setdefault(session_id, asyncio.Lock()):
            key = (session_id, client_message_id) if client_message_id is not None else None
            if key is not None:
                known = await self._known(key)
                if known is not None:
                    return known
            self._turns.check_free(session_id)
            service = await self._service_of(info)
            message_id = await service.admit(
                session_id, content, client_message_id=client_message_id, focus=focus, info=info
            )
            admitted = Admitted(message_id, queued=not self._turns.start(session_id))
            if key is not None:
                self._answers[key] = admitted
                while len(self._answers) > KEPT_ANSWERS:
                    del self._answers[next(iter(self._answers))]
            return admitted

    async def _known(self, key: tuple[str, str]) -> Admitted | None:
        known = self._answers.get(key)
        if known is not None:
            return known
        message_id = await self._store.find_admitted(*key)
        return None if message_id is None else Admitted(message_id, queued=False)
