"""Session search: the FTS5 index kept in the append's transaction, the backfill of a database
made before it, deletes, and queries that can never be FTS syntax errors."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lsp_agent import storage
from lsp_agent.core.events import NewEvent
from lsp_agent.storage.db import connect, fetch_all
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.storage.projections import ProjectionError
from lsp_agent.storage.search_index import SearchQueryError, fts_query

HERE = "file:///work/here"
THERE = "file:///work/there"


def ev(type_: str, **data: Any) -> NewEvent:
    return NewEvent(type=type_, data=data, time="2026-01-01T00:00:00Z")  # type: ignore[arg-type]


def created(session_id: str, workspace: str = HERE, title: str = "a title") -> NewEvent:
    return ev(
        "session_created",
        sessionId=session_id,
        workspaceFolder=workspace,
        title=title,
        model="anthropic/claude-test",
        mode="build",
    )


def user(message_id: str, text: str) -> list[NewEvent]:
    content = [{"type": "text", "text": text}]
    return [
        ev("user_message_admitted", messageId=message_id, content=content),
        ev("user_message_promoted", messageId=message_id),
    ]


def tool_call(message_id: str, call_id: str, status: str, **fields: Any) -> NewEvent:
    return ev(
        "tool_call_updated",
        toolCallId=call_id,
        messageId=message_id,
        toolName="bash",
        status=status,
        **fields,
    )


def turn(session_id: str, *, said: str, answer: str, output: str) -> list[NewEvent]:
    """A user message, an assistant message with reasoning, text and one finished tool call."""
    m = f"{session_id}_a"
    return [
        *user(f"{session_id}_u", said),
        ev("assistant_message_started", messageId=m),
        ev("reasoning_delta", messageId=m, partId=f"{m}_r", text="pondering quietly"),
        ev("text_delta", messageId=m, partId=f"{m}_t", text=answer),
        tool_call(m, f"{session_id}_c", "pending"),
        tool_call(m, f"{session_id}_c", "in_progress", input={"command": "ls -la"}),
        tool_call(m, f"{session_id}_c", "completed", output=output),
        ev("assistant_message_ended", messageId=m, status="completed"),
    ]


async def entries(store: SqliteEventStore) -> list[tuple[Any, ...]]:
    conn = await connect(store.path)
    try:
        rows = await fetch_all(
            conn, "SELECT session_id, message_id, source_id, kind, text FROM search_entries"
        )
        return sorted(tuple(row) for row in rows)
    finally:
        await conn.close()


async def fts_rows(store: SqliteEventStore, word: str) -> int:
    conn = await connect(store.path)
    try:
        rows = await fetch_all(
            conn, "SELECT count(*) FROM search_text WHERE search_text MATCH ?", (word,)
        )
        return int(rows[0][0])
    finally:
        await conn.close()


async def found(store: SqliteEventStore, query: str, **kwargs: Any) -> list[tuple[str, str]]:
    return [(h.session_id, h.kind) for h in await store.search(query, **kwargs)]


async def test_every_kind_of_text_is_found_with_its_session_message_and_snippet(
    store: SqliteEventStore,
) -> None:
    await store.append("s1", [created("s1", title="Fixing things")])
    await store.append(
        "s1", turn("s1", said="please grep zebra", answer="done with yak", output="found quokka")
    )
    assert await found(store, "zebra") == [("s1", "user")]
    assert await found(store, "yak") == [("s1", "assistant")]
    assert await found(store, "pondering") == [("s1", "reasoning")]
    assert await found(store, "la") == [("s1", "tool_input")]  # `ls -la`
    (hit,) = await store.search("quokka")
    assert hit.to_json() == {
        "sessionId": "s1",
        "title": "Fixing things",
        "messageId": "s1_a",
        "snippet": "found quokka",
        "updatedAt": "2026-01-01T00:00:00Z",
        "time": "2026-01-01T00:00:00Z",
        "kind": "tool_output",
    }
    assert await store.search("never-said") == []


async def test_each_hit_carries_its_own_message_time_not_only_the_sessions(
    store: SqliteEventStore,
) -> None:
    def at(time: str, events: list[NewEvent]) -> list[NewEvent]:
        return [NewEvent(type=e.type, data=e.data, time=time) for e in events]

    await store.append("s1", [created("s1")])
    await store.append("s1", at("2026-01-01T09:00:00Z", user("u1", "the first walrus")))
    await store.append("s1", at("2026-01-01T11:30:00Z", user("u2", "the second walrus")))
    hits = {h.message_id: h for h in await store.search("walrus")}
    assert {mid: h.time for mid, h in hits.items()} == {
        "u1": "2026-01-01T09:00:00Z",
        "u2": "2026-01-01T11:30:00Z",
    }
    assert {h.updated_at for h in hits.values()} == {"2026-01-01T11:30:00Z"}


async def test_text_is_indexed_when_complete_never_per_streamed_delta(
    store: SqliteEventStore,
) -> None:
    await store.append("s1", [created("s1"), ev("assistant_message_started", messageId="a")])
    await store.append("s1", [ev("text_delta", messageId="a", partId="t", text="walrus ")])
    await store.append("s1", [tool_call("a", "c", "in_progress", input={"q": "narwhal"})])
    assert await entries(store) == []
    assert await found(store, "walrus") == []
    assert await found(store, "narwhal") == []
    await store.append("s1", [tool_call("a", "c", "failed", error="narwhal missing")])
    assert await found(store, "narwhal") == [("s1", "tool_input")]  # one hit per message
    await store.append("s1", [ev("text_delta", messageId="a", partId="t", text="tusk")])
    await store.append("s1", [ev("assistant_message_ended", messageId="a", status="interrupted")])
    assert await found(store, "walrus tusk") == [("s1", "assistant")]
    assert [e[2:4] for e in await entries(store)] == [
        ("c:input", "tool_input"),
        ("c:output", "tool_output"),
        ("t", "assistant"),
    ]


async def test_the_index_is_written_in_the_append_transaction(store: SqliteEventStore) -> None:
    await store.append("s1", [created("s1"), ev("assistant_message_started", messageId="a")])
    broken = [
        tool_call("a", "c", "completed", input={"x": "pelican"}, output="pelican"),
        ev("text_delta", messageId="nope", partId="t", text="x"),  # no such message
    ]
    with pytest.raises(ProjectionError):
        await store.append("s1", broken)
    assert await entries(store) == []
    assert await fts_rows(store, "pelican") == 0
    await store.append("s1", broken[:1])
    assert await found(store, "pelican") == [("s1", "tool_output")]  # the shorter text


APPROVALS_V2 = Path(storage.__file__).parent / "migrations" / "0002_approvals.sql"


async def test_a_database_made_before_the_index_is_backfilled_like_the_live_index(
    tmp_path: Path,
) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as store:
        await store.append("s1", [created("s1")])
        await store.append("s1", turn("s1", said="alpha", answer="beta", output="gamma"))
        await store.append("s2", [created("s2", THERE), *user("s2_u", "delta")])
        await store.append("s2", [ev("assistant_message_started", messageId="open")])
        await store.append("s2", [ev("text_delta", messageId="open", partId="p", text="epsilon")])
        await store.append("s2", [ev("context_noted", messageId="note", text="zeta")])
        live = await entries(store)
    conn = await connect(data / "lsp-agent.db")
    try:  # the database as version 2 left it
        for sql in (
            "DROP TABLE search_text",
            "DROP TABLE search_entries",
            "ALTER TABLE inbox DROP COLUMN attachments",
            "ALTER TABLE sessions DROP COLUMN thought_level",
            "DROP TABLE saved_approvals",
            "DELETE FROM schema_migrations WHERE version IN (3, 4, 5, 6)",
        ):
            await conn.execute_fetchall(sql)
        await conn.executescript(APPROVALS_V2.read_text(encoding="utf-8"))
    finally:
        await conn.close()

    async with await open_store(data) as store:
        assert await entries(store) == live
        assert await found(store, "gamma") == [("s1", "tool_output")]
        assert await found(store, "delta", workspace_folder=HERE) == []
        assert await found(store, "delta", workspace_folder=THERE) == [("s2", "user")]
        assert await found(store, "epsilon") == []  # still streaming: not complete yet
        assert await found(store, "zeta") == []  # a context note is not the user's words


async def test_deleting_a_session_removes_its_rows_from_the_index(
    store: SqliteEventStore,
) -> None:
    for sid in ("s1", "s2"):
        await store.append(sid, [created(sid), *turn(sid, said="ibis", answer="a", output="b")])
    await store.delete_session("s1")
    assert await found(store, "ibis") == [("s2", "user")]
    assert await store.delete_idle_session("s2") == "deleted"
    assert await entries(store) == []
    assert await fts_rows(store, "ibis") == 0
    conn = await connect(store.path)
    try:  # the external-content index agrees with its table
        await conn.execute_fetchall(
            "INSERT INTO search_text (search_text, rank) VALUES ('integrity-check', 1)"
        )
    finally:
        await conn.close()


async def test_a_committed_revert_drops_its_messages_and_a_rebuild_gives_the_same_index(
    store: SqliteEventStore,
) -> None:
    await store.append("s1", [created("s1"), *turn("s1", said="kept", answer="x", output="y")])
    await store.append("s1", [*user("u2", "dropped heron")])
    assert await found(store, "heron") == [("s1", "user")]
    await store.append("s1", [ev("revert_committed", messageId="u2", dropped=["u2"])])
    assert await found(store, "heron") == []
    before = await entries(store)
    await store.rebuild_projections()
    assert await entries(store) == before
    assert await found(store, "kept") == [("s1", "user")]


async def test_scope_limit_and_order(store: SqliteEventStore) -> None:
    await store.append("near", [created("near"), *user("n1", "otter"), *user("n2", "otter")])
    await store.append("far", [created("far", THERE), *user("f1", "otter otter otter den")])
    assert {h.message_id for h in await store.search("otter", workspace_folder=HERE)} == {
        "n1",
        "n2",
    }
    everywhere = await store.search("otter")
    assert everywhere[0].message_id == "f1"  # bm25: the densest match first
    assert len(everywhere) == 3
    assert len(await store.search("otter", limit=2)) == 2
    assert [h.message_id for h in await store.search("ott*")] == [h.message_id for h in everywhere]
    assert [h.message_id for h in await store.search('"otter den"')] == ["f1"]
    assert await store.search('"den otter"') == []


@pytest.mark.parametrize(
    "query",
    [
        '"otter',
        'otter"',
        "'otter'",
        'ot"ter',
        "otter AND",
        "OR",
        "NOT otter",
        "otter -den",
        "NEAR(otter den)",
        "text:otter",
        "{text}: otter",
        "^otter",
        "(otter",
        "otter)",
        "ott*",
        "*otter",
        "ott**",
        "+otter",
        "otter; DROP TABLE events",
        "ÖTTER",
    ],
)
async def test_queries_with_fts_syntax_never_crash(store: SqliteEventStore, query: str) -> None:
    await store.append("s1", [created("s1"), *user("u", "an otter near the den")])
    hits = await store.search(query)
    assert all(h.session_id == "s1" for h in hits)


@pytest.mark.parametrize("query", ["", "   ", '"', "*", '""', "()", "-- ;", "***"])
async def test_a_query_without_words_is_a_clear_error(store: SqliteEventStore, query: str) -> None:
    with pytest.raises(SearchQueryError, match="nothing to search for"):
        await store.search(query)


def test_every_term_is_quoted_and_a_trailing_star_is_a_prefix() -> None:
    assert fts_query('say "hi there" ab* NOT') == '"say" "hi there" "ab" * "NOT"'
    assert fts_query('a"b') == '"a""b"'
