"""SqliteEventStore on a real SQLite file: migrations, appends, projectors, reads, rebuild."""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import pytest

from lsp_agent.core.events import EventType, NewEvent, StoredEvent
from lsp_agent.core.transcript import SessionUsage, TextPartView, ToolCallView
from lsp_agent.storage.db import (
    DB_FILENAME,
    Migration,
    StorageError,
    available_migrations,
    connect,
    fetch_all,
    latest_version,
    migrate,
    open_db,
    schema_version,
    split_statements,
)
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.storage.projections import PROJECTION_TABLES, ProjectionError

WORKSPACE = "file:///work/project"
BASE_TIME = datetime(2025, 3, 1, 12, 0, tzinfo=UTC)


def at(second: int) -> str:
    return (BASE_TIME + timedelta(seconds=second)).isoformat().replace("+00:00", "Z")


def ev(type_: EventType, data: dict[str, Any], second: int = 0) -> NewEvent:
    return NewEvent(type=type_, data=data, time=at(second))


def created(
    session_id: str, *, second: int = 0, workspace: str = WORKSPACE, title: str = "New session"
) -> NewEvent:
    return ev(
        "session_created",
        {
            "sessionId": session_id,
            "workspaceFolder": workspace,
            "title": title,
            "model": "anthropic/claude-test",
            "mode": "build",
        },
        second,
    )


def conversation(session_id: str) -> list[NewEvent]:
    """A turn with every kind of event: input, reasoning, text, two tool calls, usage."""
    u1, a1, a2 = f"{session_id}_u1", f"{session_id}_a1", f"{session_id}_a2"
    return [
        created(session_id, second=1),
        ev(
            "user_message_admitted",
            {
                "messageId": u1,
                "clientMessageId": "client-1",
                "content": [
                    {"type": "text", "text": "Fix the bug"},
                    {"type": "resource", "uri": "file:///work/project/a.py", "text": "print(1)"},
                    {
                        "type": "resource_link",
                        "uri": "file:///work/project/b.py",
                        "range": {
                            "start": {"line": 2, "character": 0},
                            "end": {"line": 4, "character": 3},
                        },
                    },
                ],
            },
            2,
        ),
        ev("state_changed", {"state": "running"}, 3),
        ev("user_message_promoted", {"messageId": u1}, 4),
        ev("assistant_message_started", {"messageId": a1, "model": "claude-test", "step": 1}, 5),
        ev("reasoning_delta", {"messageId": a1, "partId": f"{a1}_r", "text": "Let me "}, 6),
        ev("reasoning_delta", {"messageId": a1, "partId": f"{a1}_r", "text": "look."}, 7),
        ev("reasoning_ended", {"messageId": a1, "partId": f"{a1}_r", "signature": "sig-1"}, 8),
        ev("text_delta", {"messageId": a1, "partId": f"{a1}_t", "text": "I'll read "}, 9),
        ev(
            "tool_call_updated",
            {
                "toolCallId": f"{session_id}_call1",
                "messageId": a1,
                "toolName": "read",
                "status": "pending",
            },
            10,
        ),
        ev("text_delta", {"messageId": a1, "partId": f"{a1}_t", "text": "the file."}, 11),
        ev(
            "tool_call_updated",
            {
                "toolCallId": f"{session_id}_call1",
                "messageId": a1,
                "toolName": "read",
                "status": "in_progress",
                "input": {"file_path": "a.py"},
                "title": "a.py",
                "kind": "read",
            },
            12,
        ),
        ev(
            "tool_call_updated",
            {
                "toolCallId": f"{session_id}_call1",
                "messageId": a1,
                "toolName": "read",
                "status": "completed",
                "output": "1: print(1)",
            },
            13,
        ),
        ev(
            "assistant_message_ended",
            {"messageId": a1, "status": "completed", "finishReason": "tool_use"},
            14,
        ),
        ev(
            "permission_resolved",
            {
                "toolCallId": f"{session_id}_call1",
                "messageId": a1,
                "permission": "read",
                "state": "allowed",
                "optionKind": "allow_always",
                "always": ["*"],
            },
            14,
        ),
        ev("assistant_message_started", {"messageId": a2, "model": "claude-test", "step": 2}, 15),
        ev(
            "tool_call_updated",
            {
                "toolCallId": f"{session_id}_call2",
                "messageId": a2,
                "toolName": "bash",
                "status": "failed",
                "input": {"command": "false"},
                "error": "exit status 1",
            },
            16,
        ),
        ev(
            "text_delta",
            {"messageId": a2, "partId": f"{a2}_t", "text": "Done ✅ — naïve 修好了"},
            17,
        ),
        ev("assistant_message_ended", {"messageId": a2, "status": "completed"}, 18),
        ev(
            "usage_updated",
            {
                "inputTokens": 120,
                "outputTokens": 45,
                "cacheReadTokens": 1000,
                "cacheWriteTokens": 200,
                "contextUsed": 1365,
                "contextSize": 200000,
                "cost": 0.0125,
            },
            19,
        ),
        ev("title_set", {"title": "Fix the bug"}, 20),
        ev("state_changed", {"state": "idle", "stopReason": "end_turn"}, 21),
        ev("user_message_admitted", {"messageId": f"{session_id}_u2", "content": []}, 22),
    ]


def expected_messages(session_id: str) -> list[dict[str, Any]]:
    """``conversation(session_id)`` as the contract's ``sessions show`` messages."""
    return [
        {
            "messageId": f"{session_id}_u1",
            "role": "user",
            "status": "completed",
            "parts": [
                {"type": "text", "text": "Fix the bug"},
                {"type": "text", "text": "[resource: file:///work/project/a.py]\nprint(1)"},
                {"type": "text", "text": "[resource link: file:///work/project/b.py (lines 3-5)]"},
            ],
        },
        {
            "messageId": f"{session_id}_a1",
            "role": "assistant",
            "status": "completed",
            "parts": [
                {"type": "reasoning", "text": "Let me look."},
                {"type": "text", "text": "I'll read the file."},
                {
                    "type": "tool_call",
                    "toolCallId": f"{session_id}_call1",
                    "toolName": "read",
                    "status": "completed",
                    "input": {"file_path": "a.py"},
                    "output": "1: print(1)",
                },
            ],
        },
        {
            "messageId": f"{session_id}_a2",
            "role": "assistant",
            "status": "completed",
            "parts": [
                {
                    "type": "tool_call",
                    "toolCallId": f"{session_id}_call2",
                    "toolName": "bash",
                    "status": "failed",
                    "input": {"command": "false"},
                    "error": "exit status 1",
                },
                {"type": "text", "text": "Done ✅ — naïve 修好了"},
            ],
        },
    ]


async def started_turn(store: SqliteEventStore, session_id: str = "ses_1") -> None:
    await store.append(
        session_id,
        [
            created(session_id),
            ev("assistant_message_started", {"messageId": "msg_a", "model": "m", "step": 1}, 1),
        ],
    )


async def projection_rows(path: Path) -> dict[str, list[tuple[Any, ...]]]:
    conn = await connect(path)
    try:
        return {
            table: [
                tuple(row) for row in await fetch_all(conn, f"SELECT * FROM {table} ORDER BY 1")
            ]
            for table in PROJECTION_TABLES
        }
    finally:
        await conn.close()


# -- the database and its migrations -----------------------------------------------------------


async def test_fresh_database_reaches_latest_version_and_migrating_again_is_a_noop(
    tmp_path: Path,
) -> None:
    conn = await connect(tmp_path / "fresh.db")
    try:
        assert await schema_version(conn) == 0
        applied = await migrate(conn)
        assert applied == [m.version for m in available_migrations()]
        assert await schema_version(conn) == latest_version() == applied[-1]
        assert await migrate(conn) == []
        rows = await fetch_all(conn, "SELECT version, name FROM schema_migrations")
        assert [(row["version"], row["name"]) for row in rows] == [
            (1, "init"),
            (2, "approvals"),
            (3, "search"),
            (4, "inbox_attachments"),
            (5, "thought_level"),
            (6, "saved_approvals"),
        ]
    finally:
        await conn.close()


async def test_open_db_creates_the_folder_and_sets_the_pragmas(tmp_path: Path) -> None:
    path = tmp_path / "a" / "b" / DB_FILENAME
    conn = await open_db(path)
    try:
        assert path.exists()
        pragmas = {
            name: (await fetch_all(conn, f"PRAGMA {name}"))[0][0]
            for name in ("journal_mode", "synchronous", "busy_timeout", "foreign_keys")
        }
        assert pragmas == {
            "journal_mode": "wal",
            "synchronous": 1,
            "busy_timeout": 5000,
            "foreign_keys": 1,
        }
    finally:
        await conn.close()


async def test_a_failing_migration_is_rolled_back_entirely(tmp_path: Path) -> None:
    conn = await open_db(tmp_path / DB_FILENAME)
    latest = latest_version()
    broken = Migration(
        version=latest + 1, name="broken", sql="CREATE TABLE extra (x);\nNOT SQL AT ALL;\n"
    )
    try:
        with pytest.raises(StorageError, match=f"{latest + 1:04d}_broken"):
            await migrate(conn, [*available_migrations(), broken])
        assert await schema_version(conn) == latest
        tables = await fetch_all(conn, "SELECT name FROM sqlite_master WHERE name = 'extra'")
        assert tables == []
    finally:
        await conn.close()


async def test_a_database_newer_than_the_code_is_refused(tmp_path: Path) -> None:
    path = tmp_path / DB_FILENAME
    conn = await open_db(path)
    await conn.execute_fetchall(
        "INSERT INTO schema_migrations (version, name, applied_at) VALUES (99, 'future', 'x')"
    )
    await conn.close()
    with pytest.raises(StorageError, match="newer"):
        await open_db(path)


def test_split_statements_keeps_triggers_whole_and_drops_comments() -> None:
    script = (
        "-- a comment\nCREATE TABLE t (x);\n"
        "CREATE TRIGGER g BEFORE UPDATE ON t\nBEGIN\n    SELECT 1;\nEND;\n-- trailing\n"
    )
    statements = split_statements(script)
    assert len(statements) == 2
    assert statements[1].startswith("CREATE TRIGGER")
    assert statements[1].endswith("END;")


async def test_reopening_keeps_everything_and_continues_the_sequence(tmp_path: Path) -> None:
    async with await open_store(tmp_path) as first:
        await first.append("ses_1", conversation("ses_1"))
        before = (await first.session("ses_1"), await first.transcript("ses_1"))
    async with await open_store(tmp_path) as second:
        assert (await second.session("ses_1"), await second.transcript("ses_1")) == before
        assert await second.pending_inputs("ses_1") == ["ses_1_u2"]
        stored = await second.append("ses_1", [ev("title_set", {"title": "again"}, 30)])
        assert stored[0].seq == len(conversation("ses_1")) + 1
    conn = await connect(tmp_path / DB_FILENAME)
    try:
        migrations = await fetch_all(conn, "SELECT * FROM schema_migrations")
        assert len(migrations) == len(available_migrations())
    finally:
        await conn.close()


async def test_events_are_append_only(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1")])
    conn = await connect(store.path)
    try:
        with pytest.raises(sqlite3.IntegrityError, match="append-only"):
            await conn.execute_fetchall("UPDATE events SET type = 'x'")
    finally:
        await conn.close()


async def test_a_closed_store_refuses_work_and_closing_twice_is_harmless(tmp_path: Path) -> None:
    store = await open_store(tmp_path)
    await store.close()
    await store.close()
    with pytest.raises(StorageError):
        await store.session("ses_1")
    with pytest.raises(StorageError):
        await store.append("ses_1", [created("ses_1")])


# -- append ----------------------------------------------------------------------------------


async def test_append_assigns_gap_free_seq_per_session(store: SqliteEventStore) -> None:
    first = await store.append("ses_a", [created("ses_a"), ev("title_set", {"title": "A"}, 1)])
    other = await store.append("ses_b", [created("ses_b")])
    second = await store.append("ses_a", [ev("state_changed", {"state": "running"}, 2)])
    assert [e.seq for e in first + second] == [1, 2, 3]
    assert [e.seq for e in other] == [1]
    assert await store.events("ses_a") == first + second
    assert await store.last_seq("ses_a") == 3
    assert await store.last_seq("nobody") == 0
    assert await store.append("ses_a", []) == []


async def test_append_returns_what_the_log_holds(store: SqliteEventStore) -> None:
    stored = await store.append("ses_1", [created("ses_1", second=5)])
    assert stored == [
        StoredEvent(
            session_id="ses_1",
            seq=1,
            type="session_created",
            data=created("ses_1").data,
            time=at(5),
        )
    ]
    assert stored[0].to_json() == {
        "seq": 1,
        "type": "session_created",
        "time": at(5),
        "data": created("ses_1").data,
    }


async def test_events_reads_after_a_seq_with_a_limit(store: SqliteEventStore) -> None:
    await store.append("ses_1", conversation("ses_1"))
    page = await store.events("ses_1", after_seq=3, limit=2)
    assert [e.seq for e in page] == [4, 5]
    assert [e.type for e in page] == ["user_message_promoted", "assistant_message_started"]
    assert await store.events("ses_1", after_seq=100) == []


async def test_a_failing_projector_rolls_back_the_whole_append(store: SqliteEventStore) -> None:
    await started_turn(store)
    before = (await store.session("ses_1"), await store.transcript("ses_1"))
    good = ev("text_delta", {"messageId": "msg_a", "partId": "p1", "text": "hello"}, 2)
    malformed = ev("text_delta", {"messageId": "msg_a", "text": "no part id"}, 3)
    with pytest.raises(ProjectionError, match="partId"):
        await store.append("ses_1", [good, malformed])
    assert [e.seq for e in await store.events("ses_1")] == [1, 2]
    assert (await store.session("ses_1"), await store.transcript("ses_1")) == before
    retried = await store.append("ses_1", [good])
    assert retried[0].seq == 3


async def test_data_that_is_not_json_is_refused_before_anything_is_written(
    store: SqliteEventStore,
) -> None:
    await store.append("ses_1", [created("ses_1")])
    with pytest.raises(TypeError):
        await store.append("ses_1", [ev("title_set", {"title": object()})])
    with pytest.raises(ValueError, match="JSON"):
        await store.append("ses_1", [ev("usage_updated", {"cost": float("nan")})])
    assert await store.last_seq("ses_1") == 1


async def test_concurrent_appends_on_one_store_are_serialized(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1")])
    batches = [[ev("title_set", {"title": f"{n}-{i}"}, n) for i in range(3)] for n in range(1, 11)]
    results = await asyncio.gather(*(store.append("ses_1", batch) for batch in batches))
    seqs = sorted(e.seq for result in results for e in result)
    assert seqs == list(range(2, 32))
    for result in results:
        assert [e.seq for e in result] == list(range(result[0].seq, result[0].seq + 3))
    assert [e.seq for e in await store.events("ses_1")] == list(range(1, 32))


async def test_two_stores_on_one_file_take_turns(tmp_path: Path) -> None:
    async with await open_store(tmp_path) as one, await open_store(tmp_path) as two:
        await one.append("ses_1", [created("ses_1")])
        writes = [
            (one if n % 2 else two).append(
                "ses_1", [ev("title_set", {"title": str(n)}, n), ev("title_set", {"title": "x"}, n)]
            )
            for n in range(1, 9)
        ]
        results = await asyncio.gather(*writes)
        for result in results:
            assert result[1].seq == result[0].seq + 1
        assert [e.seq for e in await two.events("ses_1")] == list(range(1, 18))
        session = await one.session("ses_1")
        assert session is not None
        assert session.title == "x"


async def test_a_cancelled_caller_does_not_cut_an_append_in_half(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1")])
    events = [ev("title_set", {"title": str(n)}, n) for n in range(1, 50)]
    task = asyncio.create_task(store.append("ses_1", events))
    await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert [e.seq for e in await store.events("ses_1")] == list(range(1, 51))
    session = await store.session("ses_1")
    assert session is not None
    assert session.title == "49"


# -- projectors ------------------------------------------------------------------------------


async def test_session_created_makes_an_idle_session(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1", second=7, title="")])
    session = await store.session("ses_1")
    assert session is not None
    assert session.to_json() == {
        "sessionId": "ses_1",
        "title": "",
        "workspaceFolder": WORKSPACE,
        "createdAt": at(7),
        "updatedAt": at(7),
        "state": "idle",
        "usage": SessionUsage().to_json(),
    }
    assert (session.model, session.mode) == ("anthropic/claude-test", "build")
    assert await store.session("missing") is None


async def test_session_created_must_name_its_own_session(store: SqliteEventStore) -> None:
    with pytest.raises(ProjectionError, match="sessionId"):
        await store.append("ses_1", [created("ses_2")])
    await store.append("ses_1", [created("ses_1")])
    with pytest.raises(ProjectionError):
        await store.append("ses_1", [created("ses_1")])


async def test_events_need_a_created_session(store: SqliteEventStore) -> None:
    with pytest.raises(ProjectionError, match="session_created"):
        await store.append("ses_x", [ev("title_set", {"title": "t"})])
    assert await store.events("ses_x") == []


async def test_every_event_bumps_updated_at_and_last_seq(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1", second=1)])
    future_type = cast(EventType, "something_from_a_later_version")
    await store.append("ses_1", [NewEvent(type=future_type, data={}, time=at(9))])
    session = await store.session("ses_1")
    assert session is not None
    assert (session.created_at, session.updated_at) == (at(1), at(9))
    conn = await connect(store.path)
    try:
        [row] = await fetch_all(conn, "SELECT last_seq FROM sessions")
    finally:
        await conn.close()
    assert row["last_seq"] == 2


async def test_admitted_input_waits_in_the_inbox(store: SqliteEventStore) -> None:
    content = [{"type": "text", "text": "héllo 👋"}]
    await store.append(
        "ses_1",
        [
            created("ses_1"),
            ev("user_message_admitted", {"messageId": "u1", "content": content}, 1),
            ev(
                "user_message_admitted",
                {"messageId": "u2", "content": [], "clientMessageId": "c2"},
                2,
            ),
        ],
    )
    assert await store.pending_inputs("ses_1") == ["u1", "u2"]
    assert await store.inbox_content("u1") == content
    assert await store.find_admitted("ses_1", "c2") == "u2"
    assert await store.find_admitted("ses_1", "c9") is None
    assert await store.find_admitted("ses_other", "c2") is None
    assert await store.transcript("ses_1") == []
    with pytest.raises(KeyError):
        await store.inbox_content("nope")


async def test_a_repeated_client_message_id_is_refused(store: SqliteEventStore) -> None:
    admit = ev("user_message_admitted", {"messageId": "u1", "content": [], "clientMessageId": "c"})
    await store.append("ses_1", [created("ses_1"), admit])
    again = ev("user_message_admitted", {"messageId": "u2", "content": [], "clientMessageId": "c"})
    with pytest.raises(ProjectionError):
        await store.append("ses_1", [again])
    assert await store.pending_inputs("ses_1") == ["u1"]


async def test_promotion_turns_input_into_a_user_message(store: SqliteEventStore) -> None:
    content = [
        {"type": "text", "text": "one"},
        {"type": "resource_link", "uri": "file:///w/x.py"},
        {"type": "resource_link", "uri": "file:///w/y.py", "range": {"start": {"line": 0}}},
        {"type": "image", "data": "..."},
        {"type": "text", "text": "two"},
    ]
    await store.append(
        "ses_1",
        [
            created("ses_1"),
            ev("user_message_admitted", {"messageId": "u1", "content": content}, 1),
            ev("user_message_admitted", {"messageId": "u2", "content": []}, 2),
            ev("user_message_promoted", {"messageId": "u2"}, 3),
        ],
    )
    assert await store.pending_inputs("ses_1") == ["u1"]
    await store.append("ses_1", [ev("user_message_promoted", {"messageId": "u1"}, 4)])
    assert await store.pending_inputs("ses_1") == []
    transcript = await store.transcript("ses_1")
    assert [m.message_id for m in transcript] == ["u2", "u1"]  # promotion order
    assert transcript[1].parts == (
        TextPartView(part_id="u1.0", type="text", text="one"),
        TextPartView(part_id="u1.1", type="text", text="[resource link: file:///w/x.py]"),
        TextPartView(part_id="u1.2", type="text", text="[resource link: file:///w/y.py]"),
        TextPartView(part_id="u1.3", type="text", text="two"),
    )
    assert (transcript[1].role, transcript[1].status) == ("user", "completed")


@pytest.mark.parametrize(
    ("message_id", "problem"),
    [("u1", "already promoted"), ("never", "never admitted")],
)
async def test_promotion_needs_a_pending_input(
    store: SqliteEventStore, message_id: str, problem: str
) -> None:
    await store.append(
        "ses_1",
        [
            created("ses_1"),
            ev("user_message_admitted", {"messageId": "u1", "content": []}, 1),
            ev("user_message_promoted", {"messageId": "u1"}, 2),
        ],
    )
    with pytest.raises(ProjectionError, match=problem):
        await store.append("ses_1", [ev("user_message_promoted", {"messageId": message_id})])


async def test_deltas_grow_parts_in_the_order_they_first_appeared(store: SqliteEventStore) -> None:
    await started_turn(store)
    deltas: list[tuple[EventType, str, str]] = [
        ("text_delta", "t1", "Hel"),
        ("reasoning_delta", "r1", "think"),
        ("text_delta", "t1", "lo"),
        ("reasoning_delta", "r1", "ing"),
    ]
    await store.append(
        "ses_1",
        [
            ev(type_, {"messageId": "msg_a", "partId": part, "text": text}, 2)
            for type_, part, text in deltas
        ],
    )
    (message,) = await store.transcript("ses_1")
    assert (message.role, message.status) == ("assistant", "streaming")
    assert message.parts == (
        TextPartView(part_id="t1", type="text", text="Hello"),
        TextPartView(part_id="r1", type="reasoning", text="thinking"),
    )


async def test_a_delta_cannot_change_a_parts_type_or_message(store: SqliteEventStore) -> None:
    await started_turn(store)
    await store.append(
        "ses_1", [ev("text_delta", {"messageId": "msg_a", "partId": "p", "text": "a"})]
    )
    with pytest.raises(ProjectionError, match="another message"):
        await store.append(
            "ses_1", [ev("reasoning_delta", {"messageId": "msg_a", "partId": "p", "text": "b"})]
        )
    with pytest.raises(ProjectionError, match="assistant message"):
        await store.append(
            "ses_1", [ev("text_delta", {"messageId": "msg_zz", "partId": "q", "text": "b"})]
        )


async def test_reasoning_ended_keeps_signature_and_redacted_data(store: SqliteEventStore) -> None:
    await started_turn(store)
    await store.append(
        "ses_1",
        [
            ev("reasoning_delta", {"messageId": "msg_a", "partId": "r1", "text": "hmm"}, 2),
            ev("reasoning_ended", {"messageId": "msg_a", "partId": "r1", "signature": "s1"}, 3),
            ev("reasoning_ended", {"messageId": "msg_a", "partId": "r2", "redactedData": "xx"}, 4),
        ],
    )
    (message,) = await store.transcript("ses_1")
    assert message.parts == (
        TextPartView(part_id="r1", type="reasoning", text="hmm", signature="s1"),
        TextPartView(part_id="r2", type="reasoning", text="", redacted_data="xx"),
    )
    assert message.to_json()["parts"][1] == {"type": "reasoning", "text": ""}


async def test_tool_call_updates_merge_and_keep_their_place(store: SqliteEventStore) -> None:
    await started_turn(store)
    call = {"toolCallId": "call_1", "messageId": "msg_a", "toolName": "bash"}
    await store.append(
        "ses_1",
        [
            ev("text_delta", {"messageId": "msg_a", "partId": "t1", "text": "Running"}, 2),
            ev("tool_call_updated", {**call, "status": "pending", "title": "ls"}, 3),
            ev("text_delta", {"messageId": "msg_a", "partId": "t2", "text": "after"}, 4),
            ev("tool_call_updated", {**call, "status": "in_progress", "input": {"cmd": "ls"}}, 5),
            ev("text_delta", {"messageId": "msg_a", "partId": "t1", "text": " it"}, 6),
        ],
    )
    (message,) = await store.transcript("ses_1")
    assert [type(p).__name__ for p in message.parts] == [
        "TextPartView",
        "ToolCallView",
        "TextPartView",
    ]
    assert message.parts[1] == ToolCallView(
        tool_call_id="call_1", tool_name="bash", status="in_progress", input={"cmd": "ls"}
    )
    await store.append(
        "ses_1", [ev("tool_call_updated", {**call, "status": "completed", "output": "a\nb"}, 7)]
    )
    rows = await projection_rows(store.path)
    (tool_row,) = rows["tool_calls"]
    # tool_call_id, session_id, message_id, tool_name, status, input, output, error, title, kind,
    # created_at, updated_at
    assert tool_row == (
        "call_1",
        "ses_1",
        "msg_a",
        "bash",
        "completed",
        '{"cmd":"ls"}',
        "a\nb",
        None,
        "ls",
        None,
        at(3),
        at(7),
    )


async def test_a_tool_call_cannot_move_to_another_message(store: SqliteEventStore) -> None:
    await started_turn(store)
    await store.append(
        "ses_1",
        [
            ev("assistant_message_started", {"messageId": "msg_b", "step": 2}, 2),
            ev(
                "tool_call_updated",
                {"toolCallId": "c", "messageId": "msg_a", "toolName": "read", "status": "pending"},
            ),
        ],
    )
    moved = {"toolCallId": "c", "messageId": "msg_b", "toolName": "read", "status": "completed"}
    with pytest.raises(ProjectionError, match="another message"):
        await store.append("ses_1", [ev("tool_call_updated", moved)])
    bad_status = {**moved, "messageId": "msg_a", "status": "done"}
    with pytest.raises(ProjectionError, match="status"):
        await store.append("ses_1", [ev("tool_call_updated", bad_status)])


@pytest.mark.parametrize("status", ["completed", "interrupted", "failed"])
async def test_assistant_message_ended_sets_the_status(
    store: SqliteEventStore, status: str
) -> None:
    await started_turn(store)
    await store.append(
        "ses_1", [ev("assistant_message_ended", {"messageId": "msg_a", "status": status}, 2)]
    )
    (message,) = await store.transcript("ses_1")
    assert message.status == status


async def test_assistant_message_ended_refuses_unknown_status(store: SqliteEventStore) -> None:
    await started_turn(store)
    with pytest.raises(ProjectionError, match="status"):
        await store.append(
            "ses_1", [ev("assistant_message_ended", {"messageId": "msg_a", "status": "streaming"})]
        )


async def test_usage_state_and_title_update_the_session(store: SqliteEventStore) -> None:
    usage = {
        "inputTokens": 10,
        "outputTokens": 20,
        "cacheReadTokens": 30,
        "cacheWriteTokens": 40,
        "contextUsed": 100,
        "contextSize": 1000,
    }
    await store.append(
        "ses_1",
        [
            created("ses_1"),
            ev("usage_updated", {**usage, "cost": 0.5}, 1),
            ev("usage_updated", usage, 2),
            ev("state_changed", {"state": "requires_action"}, 3),
            ev("title_set", {"title": "Renamed"}, 4),
        ],
    )
    session = await store.session("ses_1")
    assert session is not None
    assert session.usage == SessionUsage(
        input_tokens=10,
        output_tokens=20,
        cache_read_tokens=30,
        cache_write_tokens=40,
        context_used=100,
        context_size=1000,
    )
    assert (session.state, session.title, session.updated_at) == (
        "requires_action",
        "Renamed",
        at(4),
    )
    with pytest.raises(ProjectionError, match="state"):
        await store.append("ses_1", [ev("state_changed", {"state": "sleeping"})])
    with pytest.raises(ProjectionError, match="inputTokens"):
        await store.append("ses_1", [ev("usage_updated", {**usage, "inputTokens": "many"})])


async def test_unicode_survives_including_lone_surrogates(store: SqliteEventStore) -> None:
    await started_turn(store)
    text = "naïve ✅ 漢字 \U0001f600 broken:\ud800"
    await store.append(
        "ses_1", [ev("text_delta", {"messageId": "msg_a", "partId": "t", "text": text}, 2)]
    )
    events = await store.events("ses_1", after_seq=2)
    assert events[0].data["text"] == text  # the log keeps the exact string
    (message,) = await store.transcript("ses_1")
    assert message.parts[0] == TextPartView(
        part_id="t", type="text", text="naïve ✅ 漢字 \U0001f600 broken:\ufffd"
    )


# -- reads -----------------------------------------------------------------------------------


async def test_transcript_matches_the_sessions_show_contract(store: SqliteEventStore) -> None:
    await store.append("ses_1", conversation("ses_1"))
    session = await store.session("ses_1")
    assert session is not None
    shown = {
        "session": session.to_json(),
        "messages": [m.to_json() for m in await store.transcript("ses_1")],
    }
    assert shown == {
        "session": {
            "sessionId": "ses_1",
            "title": "Fix the bug",
            "workspaceFolder": WORKSPACE,
            "createdAt": at(1),
            "updatedAt": at(22),
            "state": "idle",
            "usage": {
                "inputTokens": 120,
                "outputTokens": 45,
                "cacheReadTokens": 1000,
                "cacheWriteTokens": 200,
                "contextUsed": 1365,
                "contextSize": 200000,
                "cost": 0.0125,
            },
        },
        "messages": expected_messages("ses_1"),
    }
    reasoning = (await store.transcript("ses_1"))[1].parts[0]
    assert isinstance(reasoning, TextPartView)
    assert reasoning.signature == "sig-1"


async def test_list_sessions_newest_first_with_workspace_filter_and_limit(
    store: SqliteEventStore,
) -> None:
    other = "file:///work/other"
    await store.append("ses_a", [created("ses_a", second=1)])
    await store.append("ses_b", [created("ses_b", second=2, workspace=other)])
    await store.append("ses_c", [created("ses_c", second=3)])
    await store.append("ses_a", [ev("title_set", {"title": "touched"}, 4)])

    assert [s.session_id for s in await store.list_sessions()] == ["ses_a", "ses_c", "ses_b"]
    here = await store.list_sessions(WORKSPACE)
    assert [s.session_id for s in here] == ["ses_a", "ses_c"]
    assert [s.session_id for s in await store.list_sessions(other)] == ["ses_b"]
    assert [s.session_id for s in await store.list_sessions(limit=2)] == ["ses_a", "ses_c"]
    assert await store.list_sessions("file:///nowhere") == []
    assert here[0].to_json()["title"] == "touched"


async def test_pending_inputs_are_in_admitted_order(store: SqliteEventStore) -> None:
    await store.append("ses_1", [created("ses_1")])
    for n in (3, 1, 2):
        await store.append(
            "ses_1", [ev("user_message_admitted", {"messageId": f"u{n}", "content": []}, n)]
        )
    await store.append("ses_1", [ev("user_message_promoted", {"messageId": "u1"}, 9)])
    assert await store.pending_inputs("ses_1") == ["u3", "u2"]
    assert await store.pending_inputs("ses_other") == []


# -- rebuild ---------------------------------------------------------------------------------


async def test_rebuilding_the_projections_gives_identical_rows(store: SqliteEventStore) -> None:
    await store.append("ses_1", conversation("ses_1"))
    await store.append("ses_2", conversation("ses_2")[:12])
    await store.append("ses_2", conversation("ses_2")[12:])
    await store.append("ses_1", [ev("title_set", {"title": "later"}, 40)])
    before = await projection_rows(store.path)
    assert all(before[table] for table in PROJECTION_TABLES)

    conn = await connect(store.path)
    try:
        for table in PROJECTION_TABLES:
            await conn.execute_fetchall(f"DELETE FROM {table}")
    finally:
        await conn.close()
    assert await store.session("ses_1") is None

    await store.rebuild_projections()
    assert await projection_rows(store.path) == before
    await store.rebuild_projections()
    assert await projection_rows(store.path) == before
    assert [m.to_json() for m in await store.transcript("ses_2")] == expected_messages("ses_2")
