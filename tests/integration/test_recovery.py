"""Recovery at open (lsp_agent.storage.recovery) and the integrity check, on a real SQLite file."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import sqlite3
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.events import EventType, NewEvent
from lsp_agent.core.transcript import TextPartView, ToolCallView
from lsp_agent.storage.db import DB_FILENAME, is_corruption
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.storage.projections import PROJECTION_TABLES
from lsp_agent.storage.recovery import (
    NOT_RUN_ERROR,
    TOOL_ERROR,
    TURN_ERROR,
    group_members,
    recover,
)
from lsp_agent.system.owner import current_owner
from lsp_agent.system.procfs import start_ticks

T = "2025-03-01T12:00:00.000Z"


def ev(type_: EventType, **data: Any) -> NewEvent:
    return NewEvent(type=type_, data=data, time=T)


def created(session_id: str) -> NewEvent:
    return ev(
        "session_created",
        sessionId=session_id,
        workspaceFolder="file:///work/project",
        title="t",
        model="anthropic/claude-test",
        mode="build",
    )


def text(content: str) -> list[dict[str, Any]]:
    return [{"type": "text", "text": content}]


def dead_owner() -> dict[str, Any]:
    """The identity of a process that has exited."""
    proc = subprocess.Popen(["sleep", "30"])
    owner = {"pid": proc.pid, "startTicks": start_ticks(proc.pid)}
    proc.kill()
    proc.wait()
    return owner


def call(call_id: str, status: str, **more: Any) -> NewEvent:
    return ev(
        "tool_call_updated",
        toolCallId=call_id,
        messageId="msg_a1",
        toolName="bash",
        status=status,
        **more,
    )


def a_turn_in_progress(owner: dict[str, Any]) -> list[NewEvent]:
    """A step whose first call finished, second runs a command and waits on an ask, third
    has not started; more input was admitted meanwhile."""
    return [
        created("ses_1"),
        ev("user_message_admitted", messageId="msg_u1", content=text("fix it")),
        ev("state_changed", state="running", owner=owner),
        ev("user_message_promoted", messageId="msg_u1"),
        ev("assistant_message_started", messageId="msg_a1", model="m", step=1),
        ev("text_delta", messageId="msg_a1", partId="prt_1", text="Let me look."),
        call("call_1", "pending", input={"command": "ls"}),
        call("call_2", "pending", input={"command": "make"}),
        call("call_3", "pending", input={"command": "make test"}),
        ev("assistant_message_ended", messageId="msg_a1", status="completed"),
        call("call_1", "in_progress"),
        call("call_1", "completed", output="a.py"),
        call("call_2", "in_progress"),
        ev(
            "permission_asked",
            toolCallId="call_2",
            messageId="msg_a1",
            permission="bash",
            patterns=["make"],
            always=["make *"],
            title="make",
        ),
        ev("state_changed", state="requires_action"),
        ev("user_message_admitted", messageId="msg_u2", content=text("and the docs")),
    ]


def rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr)
            for t in PROJECTION_TABLES
        }


async def test_a_dead_owners_turn_is_closed_in_one_append(store: SqliteEventStore) -> None:
    await store.append("ses_1", a_turn_in_progress(dead_owner()))
    before = await store.last_seq("ses_1")

    report = await recover(store)

    (done,) = report.recovered
    assert (done.session_id, done.tool_calls, done.asks, done.messages) == ("ses_1", 2, 1, 0)
    added = await store.events("ses_1", after_seq=before)
    assert len({e.time for e in added}) == 1  # one append
    assert [e.type for e in added] == [
        "permission_resolved",
        "tool_call_updated",
        "tool_call_updated",
        "state_changed",
    ]
    assert added[0].data == {
        "toolCallId": "call_2",
        "messageId": "msg_a1",
        "permission": "bash",
        "state": "cancelled",
    }
    assert added[-1].data == {
        "state": "idle",
        "stopReason": "error",
        "error": {"message": TURN_ERROR, "retryable": True},
    }
    info = await store.session("ses_1")
    assert info is not None
    assert info.state == "idle"
    (_user, assistant) = await store.transcript("ses_1")
    statuses = {
        p.tool_call_id: (p.status, p.output, p.error)
        for p in assistant.parts
        if isinstance(p, ToolCallView)
    }
    assert statuses == {
        "call_1": ("completed", "a.py", None),  # finished before the crash: kept
        "call_2": ("interrupted", None, TOOL_ERROR),
        "call_3": ("cancelled", None, NOT_RUN_ERROR),
    }
    assert assistant.status == "completed"
    assert await store.pending_inputs("ses_1") == ["msg_u2"]  # admitted input stays

    again = await recover(store)
    assert again.recovered == ()
    assert await store.last_seq("ses_1") == before + len(added)


async def test_a_streaming_message_and_an_open_question_are_closed(
    store: SqliteEventStore,
) -> None:
    await store.append(
        "ses_1",
        [
            created("ses_1"),
            ev("user_message_admitted", messageId="msg_u1", content=text("go")),
            ev("state_changed", state="running", owner=dead_owner()),
            ev("user_message_promoted", messageId="msg_u1"),
            ev("assistant_message_started", messageId="msg_a1", model="m", step=1),
            call("call_q", "in_progress", input={"questions": []}),
            ev("question_asked", toolCallId="call_q", questions=[]),
            ev("state_changed", state="requires_action"),
            call("call_1", "completed", output="answered"),
            ev("question_resolved", toolCallId="call_q", state="answered"),
            ev("state_changed", state="running"),
            ev("text_delta", messageId="msg_a1", partId="prt_1", text="half a sen"),
            call("call_2", "pending", input={}),
        ],
    )
    # A second, unanswered question on the same message.
    await store.append(
        "ses_1",
        [
            call("call_q2", "in_progress", input={"questions": []}),
            ev("question_asked", toolCallId="call_q2", questions=[]),
        ],
    )
    before = await store.last_seq("ses_1")
    await recover(store)
    added = await store.events("ses_1", after_seq=before)
    assert [(e.type, e.data.get("status") or e.data.get("state")) for e in added] == [
        ("question_resolved", "cancelled"),
        ("tool_call_updated", "interrupted"),
        ("tool_call_updated", "cancelled"),
        ("tool_call_updated", "interrupted"),
        ("assistant_message_ended", "interrupted"),
        ("state_changed", "idle"),
    ]
    assert added[0].data["toolCallId"] == "call_q2"
    assert [e.data["toolCallId"] for e in added[1:4]] == ["call_q", "call_2", "call_q2"]
    (_user, assistant) = await store.transcript("ses_1")
    assert assistant.status == "interrupted"
    assert [p.text for p in assistant.parts if isinstance(p, TextPartView)] == ["half a sen"]


@pytest.fixture
def other_live_process() -> Iterator[dict[str, Any]]:
    """The identity of another process that runs for the whole test."""
    sleeper = subprocess.Popen(["sleep", "30"])
    try:
        yield {"pid": sleeper.pid, "startTicks": start_ticks(sleeper.pid)}
    finally:
        sleeper.kill()
        sleeper.wait()


async def test_a_live_owners_turn_is_left_alone(
    store: SqliteEventStore, other_live_process: dict[str, Any]
) -> None:
    await store.append("ses_me", _renamed(a_turn_in_progress(current_owner()), "ses_me"))
    await store.append("ses_other", _renamed(a_turn_in_progress(other_live_process), "ses_other"))
    counts = {s: await store.last_seq(s) for s in ("ses_me", "ses_other")}
    assert (await recover(store)).recovered == ()
    assert {s: await store.last_seq(s) for s in counts} == counts


def _renamed(events: list[NewEvent], session_id: str) -> list[NewEvent]:
    """The same events with ids unique to ``session_id`` (ids are global keys)."""
    out = []
    for event in events:
        data = {
            k: (f"{v}_{session_id}" if k in ("messageId", "toolCallId", "partId") else v)
            for k, v in event.data.items()
        }
        if event.type == "session_created":
            data["sessionId"] = session_id
        out.append(NewEvent(type=event.type, data=data, time=event.time))
    return out


async def test_an_owner_whose_pid_was_reused_is_dead(store: SqliteEventStore) -> None:
    impostor = {"pid": os.getpid(), "startTicks": (start_ticks(os.getpid()) or 0) + 12345}
    await store.append("ses_1", a_turn_in_progress(impostor))
    assert [r.session_id for r in (await recover(store)).recovered] == ["ses_1"]


async def test_a_turn_with_no_recorded_owner_is_recovered(store: SqliteEventStore) -> None:
    events = [e for e in a_turn_in_progress({}) if e.data.get("owner") is None]
    events.insert(2, ev("state_changed", state="running"))
    await store.append("ses_1", events)
    assert [r.session_id for r in (await recover(store)).recovered] == ["ses_1"]


async def test_recovered_projections_rebuild_identically(store: SqliteEventStore) -> None:
    await store.append("ses_1", a_turn_in_progress(dead_owner()))
    await recover(store)
    before = rows(store.path)
    await store.rebuild_projections()
    assert rows(store.path) == before


async def test_append_after_writes_nothing_when_the_log_moved_on(
    store: SqliteEventStore,
) -> None:
    await store.append("ses_1", [created("ses_1")])
    assert await store.append_after("ses_1", 0, [ev("title_set", title="x")]) is None
    assert await store.last_seq("ses_1") == 1
    stored = await store.append_after("ses_1", 1, [ev("title_set", title="y")])
    assert stored is not None
    assert [e.seq for e in stored] == [2]


async def test_two_processes_recovering_at_once_close_the_turn_once(tmp_path: Path) -> None:
    data = tmp_path / "data"
    async with await open_store(data) as first:
        await first.append("ses_1", a_turn_in_progress(dead_owner()))
    stores = [await open_store(data) for _ in range(3)]
    try:
        reports = await asyncio.gather(*(recover(s) for s in stores))
        events = await stores[0].events("ses_1")
    finally:
        for s in stores:
            await s.close()
    assert sum(len(r.recovered) for r in reports) == 1
    assert [e.data.get("state") for e in events if e.type == "state_changed"][-1] == "idle"
    assert sum(1 for e in events if e.type == "state_changed" and e.data["state"] == "idle") == 1


# -- orphaned process groups -------------------------------------------------------------------


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


@pytest.fixture
def orphaned_group() -> Iterator[tuple[int, int, int]]:
    """(pgid, leader start ticks, orphan pid): a group whose leader died, its child runs on."""
    leader = subprocess.Popen(
        ["sh", "-c", "sleep 30 & echo $!; wait"],
        stdout=subprocess.PIPE,
        start_new_session=True,
        text=True,
    )
    assert leader.stdout is not None
    orphan = int(leader.stdout.readline())
    ticks = start_ticks(leader.pid)
    assert ticks is not None
    leader.kill()  # what PR_SET_PDEATHSIG does to the leader when the agent dies
    leader.wait()
    leader.stdout.close()
    try:
        yield leader.pid, ticks, orphan
    finally:
        if alive(orphan):
            os.kill(orphan, signal.SIGKILL)


def with_process(owner: dict[str, Any], pgid: int, ticks: int) -> list[NewEvent]:
    events = a_turn_in_progress(owner)[:13]  # up to call_2 in_progress
    events.append(
        ev("process_started", toolCallId="call_2", pgid=pgid, startTicks=ticks, ownerPid=99)
    )
    return events


async def test_the_orphaned_commands_of_a_dead_owner_are_killed(
    store: SqliteEventStore, orphaned_group: tuple[int, int, int]
) -> None:
    pgid, ticks, orphan = orphaned_group
    assert alive(orphan)
    await store.append("ses_1", with_process(dead_owner(), pgid, ticks))
    before = await store.last_seq("ses_1")

    (done,) = (await recover(store, grace=1.0)).recovered

    assert done.killed == (orphan,)
    assert not alive(orphan)
    added = await store.events("ses_1", after_seq=before)
    assert added[0].type == "process_ended"
    assert added[0].data == {"toolCallId": "call_2", "pgid": pgid}


async def test_a_live_owners_commands_are_not_killed(
    store: SqliteEventStore, orphaned_group: tuple[int, int, int]
) -> None:
    pgid, ticks, orphan = orphaned_group
    await store.append("ses_1", with_process(current_owner(), pgid, ticks))
    assert (await recover(store, grace=0.2)).recovered == ()
    assert alive(orphan)


async def test_processes_older_than_the_recorded_group_are_never_killed(
    store: SqliteEventStore, orphaned_group: tuple[int, int, int]
) -> None:
    pgid, _ticks, orphan = orphaned_group
    orphan_ticks = start_ticks(orphan)
    assert orphan_ticks is not None
    # The recorded group started after this process did: the id was reused, it is not ours.
    await store.append("ses_1", with_process(dead_owner(), pgid, orphan_ticks + 1))
    (done,) = (await recover(store, grace=0.2)).recovered
    assert done.killed == ()
    assert alive(orphan)
    assert (await store.events("ses_1"))[-1].data["state"] == "idle"


def test_a_group_whose_leader_lives_with_another_start_time_is_a_reused_id() -> None:
    leader = subprocess.Popen(["sleep", "30"], start_new_session=True)
    try:
        ticks = start_ticks(leader.pid)
        assert ticks is not None
        assert group_members(leader.pid, ticks) == {leader.pid: ticks}
        assert group_members(leader.pid, ticks - 1) == {}  # a leader we never recorded
    finally:
        leader.kill()
        leader.wait()


# -- integrity -------------------------------------------------------------------------------


async def make_database(data: Path) -> None:
    async with await open_store(data) as store:
        for n in range(40):
            session_id = f"ses_{n:03d}"
            await store.append(
                session_id,
                [
                    created(session_id),
                    ev("user_message_admitted", messageId=f"msg_{n}", content=text("x" * 900)),
                ],
            )


def corrupted_files(data: Path) -> list[Path]:
    return sorted(p for p in data.iterdir() if ".corrupt-" in p.name)


async def test_a_file_that_is_not_a_database_is_moved_aside(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data = tmp_path / "data"
    data.mkdir()
    garbage = b"this is not an SQLite database at all\n" * 200
    (data / DB_FILENAME).write_bytes(garbage)
    (data / f"{DB_FILENAME}-wal").write_bytes(b"junk wal")
    (data / f"{DB_FILENAME}-shm").write_bytes(b"junk shm")
    with caplog.at_level(logging.WARNING):
        async with await open_store(data) as store:
            assert store.moved_aside is not None
            assert await store.list_sessions() == []
            await store.append("ses_1", [created("ses_1")])
    moved = store.moved_aside.moved_to
    assert moved.name.startswith(f"{DB_FILENAME}.corrupt-")
    assert moved.read_bytes() == garbage
    assert sorted(p.name for p in corrupted_files(data)) == sorted(
        [moved.name, f"{moved.name}-wal", f"{moved.name}-shm"]
    )
    assert "is corrupt" in caplog.text
    assert str(moved) in caplog.text
    async with await open_store(data) as reopened:  # the fresh one is fine from now on
        assert reopened.moved_aside is None
        assert [s.session_id for s in await reopened.list_sessions()] == ["ses_1"]


async def test_a_database_with_damaged_pages_is_moved_aside(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await make_database(data)
    db = data / DB_FILENAME
    content = bytearray(db.read_bytes())
    page = 4096
    assert len(content) > 8 * page
    for offset in range(3 * page, len(content) - page, page):  # every b-tree page header
        content[offset : offset + 12] = b"\xff" * 12
    db.write_bytes(bytes(content))
    async with await open_store(data) as store:
        assert store.moved_aside is not None
        assert store.moved_aside.reason
        assert await store.list_sessions() == []
    (moved,) = [p for p in corrupted_files(data) if not p.name.endswith(("-wal", "-shm"))]
    assert moved == store.moved_aside.moved_to


async def test_a_healthy_database_is_never_moved(tmp_path: Path) -> None:
    data = tmp_path / "data"
    await make_database(data)
    async with await open_store(data) as store:
        assert store.moved_aside is None
        assert len(await store.list_sessions()) == 40
    assert corrupted_files(data) == []


def test_a_busy_database_is_not_corruption(tmp_path: Path) -> None:
    path = tmp_path / "busy.db"
    holder = sqlite3.connect(path, isolation_level=None)
    try:
        holder.execute("CREATE TABLE t (x)")
        holder.execute("BEGIN EXCLUSIVE")
        other = sqlite3.connect(path, timeout=0)
        try:
            with pytest.raises(sqlite3.OperationalError) as raised:
                other.execute("SELECT * FROM t")
        finally:
            other.close()
    finally:
        holder.close()
    assert not is_corruption(raised.value)
    assert is_corruption(sqlite3.DatabaseError("database disk image is malformed"))
