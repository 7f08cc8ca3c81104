"""The stored sessions as every front door sees them: look up, page, search, read, export,
delete; and the approvals saved with them.

The doors read sessions only through here (they never import ``storage``): one paging
rule, one way to name a workspace folder, one delete.
"""

from __future__ import annotations

import asyncio
import os
import shutil
from pathlib import Path
from typing import Literal

import attrs

from lsp_agent.core.errors import InvalidParams, SessionNotFound
from lsp_agent.core.events import Event, SessionCreated, StoredEvent
from lsp_agent.core.export import export_session
from lsp_agent.core.interfaces import EventStore
from lsp_agent.core.transcript import SessionInfo, TranscriptMessage
from lsp_agent.core.uris import file_uri, path_of_uri
from lsp_agent.runtime.turns import TurnScheduler
from lsp_agent.storage.approvals import SavedApproval, Scope
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.storage.search_index import DEFAULT_LIMIT, MAX_LIMIT, SearchHit, SearchQueryError
from lsp_agent.workspace.spill import session_spill_dir

__all__ = ["MAX_SEARCH", "SEARCH_LIMIT", "Page", "SavedApproval", "SearchHit", "Sessions"]

PAGE = 100
"""Sessions per page when the client names no limit (``agent/session/list``, ACP)."""
SEARCH_LIMIT = DEFAULT_LIMIT
MAX_SEARCH = MAX_LIMIT

ExportFormat = Literal["markdown", "json"]


@attrs.frozen
class Page:
    sessions: list[SessionInfo]
    next_cursor: str | None
    """The cursor of the next page; None on the last."""


class Sessions:
    def __init__(
        self, *, store: SqliteEventStore, turns: TurnScheduler, spill_root: Path | None
    ) -> None:
        """``spill_root``: where tools spill long output per session (removed with it)."""
        self._store = store
        self._turns = turns
        self._spill_root = spill_root

    @property
    def log(self) -> EventStore:
        """The event log as the core's port (a door's update stream replays from it)."""
        return self._store

    async def require(self, session_id: str) -> SessionInfo:
        """The session's row; ``SessionNotFound`` for an unknown id."""
        info = await self._store.session(session_id)
        if info is None:
            raise SessionNotFound(session_id)
        return info

    async def find(self, session_id: str) -> SessionInfo | None:
        return await self._store.session(session_id)

    async def page(self, folder: str | None, cursor: str | None, limit: int | None) -> Page:
        """One page of the sessions (of ``folder``, a uri, or all), updated last first;
        the cursor is the offset this runtime gave out (``InvalidParams`` otherwise)."""
        offset = 0
        if cursor is not None:
            if not cursor.isdigit():
                raise InvalidParams("cursor: not a cursor this server gave out")
            offset = int(cursor)
        size = limit or PAGE
        infos = await self._store.list_sessions(
            workspace_folder=folder_uri(folder), limit=offset + size + 1
        )
        more = len(infos) > offset + size
        return Page(infos[offset : offset + size], str(offset + size) if more else None)

    async def all(self, folder: str | None) -> list[SessionInfo]:
        """Every session (of ``folder``, a uri), updated last first."""
        return await self._store.list_sessions(workspace_folder=folder_uri(folder))

    async def latest(self, folder: str) -> str | None:
        """The session of ``folder`` (a uri) updated last, a subagent's excepted (it is the
        child of a session that was updated after it anyway)."""
        for info in await self.all(folder):
            created = next(iter(await self._store.events(info.session_id, limit=1)), None)
            if created is None or not _is_subagent(created.event):
                return info.session_id
        return None

    async def search(self, query: str, folder: str | None, limit: int | None) -> list[SearchHit]:
        """The messages matching ``query``, best first; ``InvalidParams`` for a bad query."""
        try:
            return await self._store.search(
                query, workspace_folder=folder_uri(folder), limit=limit or SEARCH_LIMIT
            )
        except SearchQueryError as error:
            raise InvalidParams(f"query: {error}") from error

    async def events(
        self, session_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        return await self._store.events(session_id, after_seq=after_seq, limit=limit)

    async def transcript(self, session_id: str) -> list[TranscriptMessage]:
        return await self._store.transcript(session_id)

    async def pending(self, session_id: str) -> list[str]:
        """The admitted inputs no turn has taken up yet."""
        return await self._store.pending_inputs(session_id)

    async def last_seq(self, session_id: str) -> int:
        return await self._store.last_seq(session_id)

    async def export(self, session_id: str, format: ExportFormat) -> str:
        info = await self.require(session_id)
        transcript = await self._store.transcript(session_id)
        events = await self._store.events(session_id) if format == "json" else []
        return export_session(info, transcript, events, format)

    async def delete(self, session_id: str) -> Literal["deleted", "unknown", "busy"]:
        """Delete an idle session and its spilled output. "busy" while a turn of any
        process runs it; ``SessionBusy`` while this process holds it."""
        async with self._turns.exclusive(session_id, "being deleted"):
            outcome = await self._store.delete_idle_session(session_id)
        if outcome == "deleted" and self._spill_root is not None:
            folder = session_spill_dir(self._spill_root, session_id)
            await asyncio.to_thread(shutil.rmtree, folder, True)
        return outcome

    async def approvals(self, folder: str | None) -> list[SavedApproval]:
        """The approvals saved for ``folder`` (a uri), or every one."""
        return await self._store.saved_approvals(workspace_folder=folder_uri(folder))

    async def revoke(self, *, scope: Scope, scope_id: str, permission: str, pattern: str) -> bool:
        return await self._store.revoke_approval(
            scope=scope, scope_id=scope_id, permission=permission, pattern=pattern
        )


def _is_subagent(created: Event) -> bool:
    return isinstance(created, SessionCreated) and created.parent_session_id is not None


def folder_uri(folder: str | None) -> str | None:
    """A workspace folder as the store names it: the ``file:`` uri of its real path (a
    path or a uri in, a uri of another scheme as given)."""
    if folder is None:
        return None
    path = path_of_uri(folder) if "://" in folder else folder
    return folder if path is None else file_uri(os.path.realpath(path))
