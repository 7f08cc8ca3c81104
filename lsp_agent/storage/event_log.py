"""``SqliteEventStore``: the event log and its projections in one SQLite file.

``append`` writes a batch of events and the projection rows they change in one ``BEGIN
IMMEDIATE`` transaction: all of it commits or none of it does. The whole transaction runs as
one call in the connection's worker thread (projectors are plain synchronous code), so an
append costs one thread hop, not one per statement: appends sit on the agent's hot path. Writes
on one store run one at a time (an asyncio lock); two processes sharing the file take turns
through SQLite's write lock and ``busy_timeout``. Reads take the same lock, because the store
has a single connection and a read must never see another coroutine's uncommitted rows.

A write runs to its end (commit or rollback) even if the task awaiting it is cancelled, so a
cancelled turn never leaves half an append or an open transaction behind; the cancelled caller
does not learn the new ``seq`` numbers (an editor resyncs when it sees the gap).

For recovery after a crash (``lsp_agent.storage.recovery``):
:meth:`SqliteEventStore.open_turns` reads the sessions whose turn has not ended, with what
each left open, and :meth:`SqliteEventStore.append_after` appends only if nobody appended to
the session since.
"""

from __future__ import annotations

import asyncio
import errno
import json
import sqlite3
from collections.abc import Awaitable, Callable, Sequence
from datetime import UTC, datetime
from itertools import groupby
from pathlib import Path
from typing import Any, Literal, Self, TypeVar

import aiosqlite
import attrs

from lsp_agent.core.events import (
    EventDataError,
    NewEvent,
    PermissionAsked,
    PermissionResolved,
    ProcessEnded,
    ProcessStarted,
    QuestionAsked,
    QuestionResolved,
    StateChanged,
    StoredEvent,
    TurnOwner,
    decode,
)
from lsp_agent.core.permission.rules import Rule
from lsp_agent.core.transcript import (
    PartView,
    SessionInfo,
    SessionUsage,
    TextPartView,
    ToolCallView,
    TranscriptMessage,
)
from lsp_agent.storage import approvals
from lsp_agent.storage.approvals import SavedApproval, Scope
from lsp_agent.storage.db import (
    DB_FILENAME,
    MovedAside,
    StorageError,
    fetch_all,
    in_connection_thread,
    open_checked_db,
)
from lsp_agent.storage.projections import (
    MESSAGE_EVENTS,
    ProjectionError,
    clear_projections,
    dumps,
    project,
)
from lsp_agent.storage.search_index import DEFAULT_LIMIT, SearchHit, search
from lsp_agent.system.owner import current_owner

_T = TypeVar("_T")

_EVENT_COLUMNS = "session_id, seq, type, version, time, data"

_TRANSCRIPT_SQL = """
SELECT m.message_id, m.role, m.status, m.seq AS message_seq,
       p.part_id, p.type AS part_type, p.data AS part_data,
       t.tool_name, t.status AS tool_status, t.input AS tool_input,
       t.output AS tool_output, t.error AS tool_error
FROM messages AS m
LEFT JOIN parts AS p ON p.message_id = m.message_id
LEFT JOIN tool_calls AS t ON p.type = 'tool_call' AND t.tool_call_id = p.part_id
WHERE m.session_id = ?
{}
ORDER BY m.seq, p.position
"""


_CHANGED_MESSAGES_SQL = f"""
SELECT DISTINCT json_extract(data, '$.messageId') AS message_id FROM events
WHERE session_id = ? AND seq > ? AND type IN ({", ".join(f"'{t}'" for t in MESSAGE_EVENTS)})
"""


_MAX_CHANGED = 500
"""More changed messages than this are picked from the whole transcript (SQLite caps the
number of ``?`` in a statement)."""

_ASK_EVENTS = (
    "permission_asked",
    "permission_resolved",
    "question_asked",
    "question_resolved",
    "process_started",
    "process_ended",
)


@attrs.frozen(kw_only=True)
class OpenToolCall:
    """A tool call still ``pending`` or ``in_progress``."""

    tool_call_id: str
    message_id: str
    tool_name: str
    status: str


@attrs.frozen(kw_only=True)
class OpenProcess:
    """A command's process group with ``process_started`` and no ``process_ended``.

    ``start_ticks`` is when its leader started (0: unknown, so it cannot be told apart from a
    later group that reuses the id).
    """

    tool_call_id: str
    pgid: int
    start_ticks: int
    owner_pid: int | None


@attrs.frozen(kw_only=True)
class OpenTurn:
    """A session whose state is not ``idle``, and everything its turn left open.

    ``owner`` is the ``owner`` of the session's last ``state_changed`` event that has one
    (the turn's first ``running``), or None if none was ever recorded.
    """

    session_id: str
    state: str
    last_seq: int
    owner: dict[str, Any] | None
    tool_calls: tuple[OpenToolCall, ...] = ()
    streaming_messages: tuple[str, ...] = ()
    permission_asks: tuple[PermissionAsked, ...] = ()
    """Each ``permission_asked`` event that has no ``permission_resolved``."""
    question_asks: tuple[str, ...] = ()
    """The tool call ids of ``question_asked`` events that have no ``question_resolved``."""
    processes: tuple[OpenProcess, ...] = ()


async def open_store(data_dir: Path) -> SqliteEventStore:
    """Open (creating and migrating as needed) ``<data_dir>/lsp-agent.db``.

    A corrupt database is moved aside first and a fresh one created (``db.open_checked_db``);
    ``moved_aside`` on the store then says where it went.
    """
    path = data_dir / DB_FILENAME
    conn, moved = await open_checked_db(path)
    return SqliteEventStore(conn, path=path, moved_aside=moved)


class SqliteEventStore:
    """Implements the core's ``EventStore`` port, plus the reads the CLI and adapters need."""

    def __init__(
        self, conn: aiosqlite.Connection, *, path: Path, moved_aside: MovedAside | None = None
    ) -> None:
        """Take over ``conn``, an open, migrated connection (see ``db.open_db``)."""
        self._conn = conn
        self.path = path
        self.moved_aside = moved_aside
        """Set when the database was found corrupt at open and replaced by a fresh one."""
        self._lock = asyncio.Lock()
        self._writes: set[asyncio.Task[Any]] = set()
        self._closed = False

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()

    async def close(self) -> None:
        """Let running writes finish, then close the connection. Closing twice is harmless."""
        if self._closed:
            return
        self._closed = True
        if self._writes:
            await asyncio.gather(*self._writes, return_exceptions=True)
        await self._conn.close()

    # -- writes ------------------------------------------------------------------------------

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Append ``events`` to the session's log with the next ``seq`` numbers, atomically.

        Raises ``ProjectionError`` (nothing is written) if an event cannot be applied, and
        ``TypeError``/``ValueError`` if its data is not JSON.
        """
        if not events:
            return []
        # Encoded before the transaction; the stored event carries the decoded copy, so the
        # projections see exactly what a replay of the log will see.
        encoded = [(event, dumps(event.data)) for event in events]
        return await self._write(lambda: self._append(session_id, encoded))

    async def append_after(
        self, session_id: str, last_seq: int, events: Sequence[NewEvent]
    ) -> list[StoredEvent] | None:
        """``append``, but only if the session's last ``seq`` is still ``last_seq``.

        The check and the append are one transaction; None (nothing written) when another
        writer appended to the session in the meantime.
        """
        if not events:
            return []
        encoded = [(event, dumps(event.data)) for event in events]

        def work(conn: sqlite3.Connection) -> list[StoredEvent] | None:
            return _transaction(conn, _append_rows_after, session_id, last_seq, encoded)

        return await self._write(lambda: in_connection_thread(self._conn, work))

    async def delete_session(self, session_id: str) -> None:
        """Delete the session's events and every projection row of it, in one transaction.

        Its approvals "for this session" go too; those it saved for the project stay (they
        belong to the project: ``permissions revoke`` removes them)."""

        def work(conn: sqlite3.Connection) -> None:
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
            approvals.drop_session(conn, session_id)

        await self._write(
            lambda: in_connection_thread(self._conn, lambda conn: _transaction(conn, work))
        )

    async def delete_idle_session(self, session_id: str) -> Literal["deleted", "unknown", "busy"]:
        """``delete_session``, but only if the session exists and its state is ``idle``.

        The check and the delete are one write transaction, so a turn that another process
        starts cannot slip in between: a session with a turn in progress is ``busy``."""

        def work(conn: sqlite3.Connection) -> Literal["deleted", "unknown", "busy"]:
            row = conn.execute(
                "SELECT state FROM sessions WHERE session_id = ?", (session_id,)
            ).fetchone()
            if row is None:
                return "unknown"
            if row["state"] != "idle":
                return "busy"
            conn.execute("DELETE FROM events WHERE session_id = ?", (session_id,))
            conn.execute("DELETE FROM sessions WHERE session_id = ?", (session_id,))
            approvals.drop_session(conn, session_id)
            return "deleted"

        return await self._write(
            lambda: in_connection_thread(self._conn, lambda conn: _transaction(conn, work))
        )

    async def rebuild_projections(self) -> None:
        """Delete every projection row and replay the whole log, in one transaction."""
        await self._write(self._rebuild)

    async def _append(
        self, session_id: str, encoded: list[tuple[NewEvent, str]]
    ) -> list[StoredEvent]:
        return await in_connection_thread(
            self._conn, lambda conn: _transaction(conn, _append_rows, session_id, encoded)
        )

    async def _rebuild(self) -> None:
        await in_connection_thread(self._conn, lambda conn: _transaction(conn, _replay_all))

    async def _write(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        if self._closed:
            raise StorageError("the event store is closed")
        task = asyncio.create_task(self._locked(operation))
        self._writes.add(task)
        task.add_done_callback(self._write_done)
        return await asyncio.shield(task)

    def _write_done(self, task: asyncio.Task[Any]) -> None:
        self._writes.discard(task)
        if not task.cancelled():
            task.exception()  # retrieved here too: its caller may have been cancelled

    async def _locked(self, operation: Callable[[], Awaitable[_T]]) -> _T:
        async with self._lock:
            try:
                return await operation()
            except (sqlite3.OperationalError, OSError) as error:
                if not _disk_full(error):
                    raise
                raise DiskFull(
                    f"the disk holding {self.path} is full, so the session could not be "
                    "recorded further (what was recorded before is intact); free some space "
                    "and run again"
                ) from error

    # -- reads -------------------------------------------------------------------------------

    async def session(self, session_id: str) -> SessionInfo | None:
        rows = await self._read("SELECT * FROM sessions WHERE session_id = ?", (session_id,))
        return _session_info(rows[0]) if rows else None

    async def list_sessions(
        self, workspace_folder: str | None = None, limit: int | None = None
    ) -> list[SessionInfo]:
        """Sessions, most recently updated first; only ``workspace_folder``'s if given."""
        sql = "SELECT * FROM sessions"
        params: list[Any] = []
        if workspace_folder is not None:
            sql += " WHERE workspace_folder = ?"
            params.append(workspace_folder)
        sql += " ORDER BY updated_at DESC, session_id DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(limit, 0))
        return [_session_info(row) for row in await self._read(sql, params)]

    async def last_seq(self, session_id: str) -> int:
        """The seq of the session's last event (0 when it has none)."""
        rows = await self._read(
            "SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE session_id = ?", (session_id,)
        )
        return int(rows[0]["seq"])

    async def transcript(self, session_id: str) -> list[TranscriptMessage]:
        """Promoted user messages and assistant messages in conversation order."""
        return _messages(await self._read(_TRANSCRIPT_SQL.format(""), (session_id,)))

    async def transcript_changes(
        self, session_id: str, after_seq: int
    ) -> tuple[list[TranscriptMessage], int]:
        """The transcript messages that events after ``after_seq`` added or changed, in
        conversation order, and the seq they are read up to — one snapshot, whose cost
        follows the new events, not the length of the session."""
        return await self._run_read(
            lambda conn: _read_transaction(conn, _transcript_changes, session_id, after_seq)
        )

    async def pending_inputs(self, session_id: str) -> list[str]:
        """Message ids admitted but not yet promoted, oldest first."""
        rows = await self._read(
            "SELECT message_id FROM inbox WHERE session_id = ? AND promoted_seq IS NULL"
            " ORDER BY admitted_seq",
            (session_id,),
        )
        return [str(row["message_id"]) for row in rows]

    async def inbox_content(self, message_id: str) -> list[dict[str, Any]]:
        """The content blocks of an admitted message; ``KeyError`` if it was never admitted."""
        rows = await self._read("SELECT content FROM inbox WHERE message_id = ?", (message_id,))
        if not rows:
            raise KeyError(message_id)
        content: list[dict[str, Any]] = json.loads(rows[0]["content"])
        return content

    async def find_admitted(self, session_id: str, client_message_id: str) -> str | None:
        """The message id already admitted with ``client_message_id`` in this session, if any."""
        rows = await self._read(
            "SELECT message_id FROM inbox WHERE session_id = ? AND client_message_id = ?",
            (session_id, client_message_id),
        )
        return str(rows[0]["message_id"]) if rows else None

    async def approvals(self, session_id: str) -> list[Rule]:
        """Saved "allow" answers in force for this session and for its project, oldest
        first."""
        rows = await self._read(
            "SELECT workspace_folder FROM sessions WHERE session_id = ?", (session_id,)
        )
        if not rows:
            return []
        saved = await self.saved_approvals(
            workspace_folder=str(rows[0]["workspace_folder"]), session_id=session_id
        )
        return [
            Rule(
                permission=a.permission,
                pattern=a.pattern,
                action="allow",
                source=f"saved for the {a.scope}",
            )
            for a in saved
        ]

    async def saved_approvals(
        self, *, workspace_folder: str | None = None, session_id: str | None = None
    ) -> list[SavedApproval]:
        """The approvals in force (:func:`approvals.active`)."""
        return await self._run_read(
            lambda conn: approvals.active(
                conn, workspace_folder=workspace_folder, session_id=session_id
            )
        )

    async def revoke_approval(
        self, *, scope: Scope, scope_id: str, permission: str, pattern: str
    ) -> bool:
        """Revoke a saved approval; False when none was in force."""
        now = datetime.now(UTC).isoformat()

        def work(conn: sqlite3.Connection) -> int:
            return approvals.revoke(
                conn,
                scope=scope,
                scope_id=scope_id,
                permission=permission,
                pattern=pattern,
                now=now,
            )

        revoked = await self._write(
            lambda: in_connection_thread(self._conn, lambda conn: _transaction(conn, work))
        )
        return revoked > 0

    def owner(self) -> TurnOwner:
        """This process (``system.owner``): the owner a turn it runs records."""
        owner = current_owner()
        return {"pid": owner["pid"], "startTicks": owner["startTicks"]}

    async def events(
        self, session_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The session's events with ``seq > after_seq``, in order (at most ``limit``)."""
        sql = f"SELECT {_EVENT_COLUMNS} FROM events WHERE session_id = ? AND seq > ? ORDER BY seq"
        params: list[Any] = [session_id, after_seq]
        if limit is not None:
            sql += " LIMIT ?"
            params.append(max(limit, 0))
        return [_stored_event(row) for row in await self._read(sql, params)]

    async def open_turns(self, session_ids: Sequence[str] | None = None) -> list[OpenTurn]:
        """Every session (of ``session_ids``, if given) whose state is not ``idle``, with what
        its turn left open; read in one transaction, so each is a consistent snapshot."""
        if self._closed:
            raise StorageError("the event store is closed")
        wanted = None if session_ids is None else list(session_ids)
        async with self._lock:
            return await in_connection_thread(
                self._conn, lambda conn: _read_transaction(conn, _open_turns, wanted)
            )

    async def search(
        self, query: str, *, workspace_folder: str | None = None, limit: int = DEFAULT_LIMIT
    ) -> list[SearchHit]:
        """The messages whose text, reasoning or tool input/output match ``query`` (the user's
        words, see ``search_index``), best first, one hit per message; only
        ``workspace_folder``'s sessions if given. ``SearchQueryError`` for a query with no word."""
        if self._closed:
            raise StorageError("the event store is closed")
        async with self._lock:
            return await in_connection_thread(
                self._conn,
                lambda conn: _read_transaction(conn, search, query, workspace_folder, limit),
            )

    async def _read(self, sql: str, params: Sequence[Any] = ()) -> list[sqlite3.Row]:
        if self._closed:
            raise StorageError("the event store is closed")
        async with self._lock:
            return await fetch_all(self._conn, sql, params)

    async def _run_read(self, work: Callable[[sqlite3.Connection], _T]) -> _T:
        if self._closed:
            raise StorageError("the event store is closed")
        async with self._lock:
            return await in_connection_thread(self._conn, work)


class DiskFull(StorageError):
    """A write failed for want of space; the transaction was rolled back, the file is sound."""


def _disk_full(error: BaseException) -> bool:
    if isinstance(error, sqlite3.Error):
        return getattr(error, "sqlite_errorcode", None) == sqlite3.SQLITE_FULL
    return isinstance(error, OSError) and error.errno == errno.ENOSPC


def _transaction(conn: sqlite3.Connection, work: Callable[..., _T], *args: Any) -> _T:
    """``work(conn, *args)`` inside ``BEGIN IMMEDIATE`` … ``COMMIT``, rolled back on any error."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        result = work(conn, *args)
        conn.execute("COMMIT")
    except BaseException:
        # A failed COMMIT (a full disk) may or may not have rolled back already.
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise
    return result


def _read_transaction(conn: sqlite3.Connection, work: Callable[..., _T], *args: Any) -> _T:
    """``work(conn, *args)`` inside a read transaction (one snapshot of the database)."""
    conn.execute("BEGIN")
    try:
        return work(conn, *args)
    finally:
        conn.execute("COMMIT")


def _last_seq(conn: sqlite3.Connection, session_id: str) -> int:
    row = conn.execute(
        "SELECT COALESCE(MAX(seq), 0) AS seq FROM events WHERE session_id = ?", (session_id,)
    ).fetchone()
    return int(row["seq"]) if row is not None else 0


def _append_rows_after(
    conn: sqlite3.Connection,
    session_id: str,
    expected: int,
    encoded: list[tuple[NewEvent, str]],
) -> list[StoredEvent] | None:
    if _last_seq(conn, session_id) != expected:
        return None
    return _append_rows(conn, session_id, encoded)


def _open_turns(conn: sqlite3.Connection, wanted: list[str] | None) -> list[OpenTurn]:
    rows = conn.execute(
        "SELECT session_id, state FROM sessions WHERE state != 'idle' ORDER BY session_id"
    ).fetchall()
    turns = []
    for row in rows:
        session_id = str(row["session_id"])
        if wanted is None or session_id in wanted:
            turns.append(_open_turn(conn, session_id, str(row["state"])))
    return turns


def _open_turn(conn: sqlite3.Connection, session_id: str, state: str) -> OpenTurn:
    calls = tuple(
        OpenToolCall(
            tool_call_id=row["tool_call_id"],
            message_id=row["message_id"],
            tool_name=row["tool_name"],
            status=row["status"],
        )
        for row in conn.execute(
            "SELECT tool_call_id, message_id, tool_name, status FROM tool_calls"
            " WHERE session_id = ? AND status IN ('pending', 'in_progress')"
            " ORDER BY rowid",  # the order they were first recorded in
            (session_id,),
        )
    )
    streaming = tuple(
        str(row["message_id"])
        for row in conn.execute(
            "SELECT message_id FROM messages WHERE session_id = ? AND role = 'assistant'"
            " AND status = 'streaming' ORDER BY seq",
            (session_id,),
        )
    )
    permissions: dict[str, PermissionAsked] = {}
    questions: dict[str, None] = {}
    processes: dict[tuple[str, int], OpenProcess] = {}
    marks = ", ".join("?" for _ in _ASK_EVENTS)
    for row in conn.execute(
        f"SELECT type, data FROM events WHERE session_id = ? AND type IN ({marks}) ORDER BY seq",
        (session_id, *_ASK_EVENTS),
    ):
        try:
            event = decode(row["type"], json.loads(row["data"]))
        except EventDataError:
            continue  # recovery closes what it can read
        match event:
            case PermissionAsked(tool_call_id=call_id):
                permissions[call_id] = event
            case PermissionResolved(tool_call_id=call_id):
                permissions.pop(call_id, None)
            case QuestionAsked(tool_call_id=call_id):
                questions[call_id] = None
            case QuestionResolved(tool_call_id=call_id):
                questions.pop(call_id, None)
            case ProcessStarted(tool_call_id=call_id):
                process = _open_process(event)
                if process is not None:
                    processes[(call_id, process.pgid)] = process
            case ProcessEnded(tool_call_id=call_id, pgid=pgid):
                processes.pop((call_id, _as_int(pgid) or 0), None)
    return OpenTurn(
        session_id=session_id,
        state=state,
        last_seq=_last_seq(conn, session_id),
        owner=_turn_owner(conn, session_id),
        tool_calls=calls,
        streaming_messages=streaming,
        permission_asks=tuple(permissions.values()),
        question_asks=tuple(questions),
        processes=tuple(processes.values()),
    )


def _turn_owner(conn: sqlite3.Connection, session_id: str) -> dict[str, Any] | None:
    """The owner named by the session's latest ``state_changed`` event that names one."""
    cursor = conn.execute(
        "SELECT data FROM events WHERE session_id = ? AND type = 'state_changed' ORDER BY seq DESC",
        (session_id,),
    )
    try:
        for row in cursor:
            try:
                changed = decode("state_changed", json.loads(row["data"]))
            except EventDataError:
                continue
            owner = changed.owner if isinstance(changed, StateChanged) else None
            if isinstance(owner, dict):
                return dict(owner)
    finally:
        cursor.close()
    return None


def _open_process(started: ProcessStarted) -> OpenProcess | None:
    pgid = _as_int(started.pgid)
    if pgid is None:
        return None
    return OpenProcess(
        tool_call_id=started.tool_call_id,
        pgid=pgid,
        start_ticks=_as_int(started.start_ticks) or 0,
        owner_pid=_as_int(started.owner_pid),
    )


def _as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _append_rows(
    conn: sqlite3.Connection, session_id: str, encoded: list[tuple[NewEvent, str]]
) -> list[StoredEvent]:
    last = _last_seq(conn, session_id)
    stored: list[StoredEvent] = []
    for offset, (event, data) in enumerate(encoded, start=1):
        item = StoredEvent(
            session_id=session_id,
            seq=last + offset,
            type=event.type,
            data=json.loads(data),
            time=event.time,
            version=event.version,
        )
        conn.execute(
            f"INSERT INTO events ({_EVENT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?)",
            (session_id, item.seq, item.type, item.version, item.time, data),
        )
        _project(conn, item)
        stored.append(item)
    return stored


def _replay_all(conn: sqlite3.Connection) -> None:
    clear_projections(conn)
    for row in conn.execute(f"SELECT {_EVENT_COLUMNS} FROM events ORDER BY session_id, seq"):
        _project(conn, _stored_event(row))


def _project(conn: sqlite3.Connection, event: StoredEvent) -> None:
    try:
        project(conn, event)
    except ProjectionError:
        raise
    except (sqlite3.IntegrityError, ValueError, TypeError, KeyError) as exc:
        raise ProjectionError(
            f"cannot apply {event.type} event seq {event.seq} of session"
            f" {event.session_id!r}: {exc}"
        ) from exc


def _stored_event(row: sqlite3.Row) -> StoredEvent:
    return StoredEvent(
        session_id=row["session_id"],
        seq=row["seq"],
        type=row["type"],
        data=json.loads(row["data"]),
        time=row["time"],
        version=row["version"],
    )


def _session_info(row: sqlite3.Row) -> SessionInfo:
    return SessionInfo(
        session_id=row["session_id"],
        title=row["title"],
        workspace_folder=row["workspace_folder"],
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        state=row["state"],
        model=row["model"],
        mode=row["mode"],
        thought_level=row["thought_level"],
        usage=SessionUsage(
            input_tokens=row["input_tokens"],
            output_tokens=row["output_tokens"],
            cache_read_tokens=row["cache_read_tokens"],
            cache_write_tokens=row["cache_write_tokens"],
            context_used=row["context_used"],
            context_size=row["context_size"],
            cost=row["cost"],
        ),
    )


def _messages(rows: Sequence[sqlite3.Row]) -> list[TranscriptMessage]:
    messages: list[TranscriptMessage] = []
    for message_id, group in groupby(rows, key=lambda row: row["message_id"]):
        group_rows = list(group)
        parts = tuple(_part_view(row) for row in group_rows if row["part_id"] is not None)
        messages.append(
            TranscriptMessage(
                message_id=message_id,
                role=group_rows[0]["role"],
                status=group_rows[0]["status"],
                parts=parts,
                seq=group_rows[0]["message_seq"],
            )
        )
    return messages


def _transcript_changes(
    conn: sqlite3.Connection, session_id: str, after_seq: int
) -> tuple[list[TranscriptMessage], int]:
    through = _last_seq(conn, session_id)
    if after_seq <= 0:
        return _messages(
            conn.execute(_TRANSCRIPT_SQL.format(""), (session_id,)).fetchall()
        ), through
    changed = [
        str(row["message_id"])
        for row in conn.execute(_CHANGED_MESSAGES_SQL, (session_id, after_seq))
        if row["message_id"] is not None
    ]
    if not changed:
        return [], through
    if len(changed) > _MAX_CHANGED:
        wanted = set(changed)
        rows = conn.execute(_TRANSCRIPT_SQL.format(""), (session_id,)).fetchall()
        return [m for m in _messages(rows) if m.message_id in wanted], through
    marks = ", ".join("?" for _ in changed)
    sql = _TRANSCRIPT_SQL.format(f"AND m.message_id IN ({marks})")
    return _messages(conn.execute(sql, (session_id, *changed)).fetchall()), through


def _part_view(row: sqlite3.Row) -> PartView:
    if row["part_type"] == "tool_call":
        return ToolCallView(
            tool_call_id=row["part_id"],
            tool_name=row["tool_name"],
            status=row["tool_status"],
            input=json.loads(row["tool_input"]),
            output=row["tool_output"],
            error=row["tool_error"],
        )
    data = json.loads(row["part_data"])
    image = data.get("image")
    return TextPartView(
        part_id=row["part_id"],
        type=row["part_type"],
        text=data.get("text", ""),
        signature=data.get("signature"),
        redacted_data=data.get("redactedData"),
        attachment=data.get("attachment"),
        image_type=image.get("mediaType") if isinstance(image, dict) else None,
        image_data=image.get("data") if isinstance(image, dict) else None,
    )
