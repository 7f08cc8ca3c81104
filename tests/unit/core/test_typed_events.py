"""Typed events: one definition per type, the codec, and a log written before they existed.

``tests/fixtures/events/written_before_typed_events.jsonl`` is the ``events`` table of a
database written by the code before typed events (commit 5391508): every event type, shaped
as that code's writers shaped them, each accepted by its projections.
``updates_before_typed_events.json`` is what that code made of them: the LSP updates
(``wire``), the ACP updates (live and replayed) and the terminal's lines (``headless``).
"""

from __future__ import annotations

import dataclasses
import io
import json
import sqlite3
import typing
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.acp.updates import UpdateMapper
from lsp_agent.core import events as ev
from lsp_agent.core.event_catalogue import DOC, render, updated
from lsp_agent.headless import TerminalEditor
from lsp_agent.storage.db import DB_FILENAME
from lsp_agent.storage.event_log import open_store
from lsp_agent.wire.updates import to_update

FIXTURES = Path(__file__).parents[2] / "fixtures" / "events"
OLD_ROWS = [
    json.loads(line)
    for line in (FIXTURES / "written_before_typed_events.jsonl").read_text().splitlines()
]
OLD_OUTPUT = json.loads((FIXTURES / "updates_before_typed_events.json").read_text())


def test_one_definition_per_event_type() -> None:
    assert list(ev.EVENT_CLASSES) == list(typing.get_args(ev.EventType))
    assert set(typing.get_args(ev.Event)) == set(ev.EVENT_CLASSES.values())
    for type_, cls in ev.EVENT_CLASSES.items():
        assert type_ == cls.TYPE
        assert dataclasses.is_dataclass(cls)
        assert cls.__dataclass_params__.frozen  # type: ignore[attr-defined]


def test_the_fixture_has_every_event_type() -> None:
    assert {row["type"] for row in OLD_ROWS} == set(ev.EVENT_CLASSES)


@pytest.mark.parametrize("row", OLD_ROWS, ids=lambda row: f"{row['seq']}-{row['type']}")
def test_old_data_decodes_and_encodes_back_to_the_same_json(row: dict[str, Any]) -> None:
    data = json.loads(row["data"])
    event = ev.decode(row["type"], data)
    assert isinstance(event, ev.EVENT_CLASSES[row["type"]])
    # Lossless, except an optional key stored as null, which is the same as absent.
    assert ev.encode(event) == {k: v for k, v in data.items() if v is not None}


def test_encoding_names_keys_in_camel_case_and_leaves_out_absent_optionals() -> None:
    event = ev.ToolCallUpdated(
        tool_call_id="c1", message_id="m1", tool_name="bash", status="failed", exit_code=2
    )
    assert ev.encode(event) == {
        "toolCallId": "c1",
        "messageId": "m1",
        "toolName": "bash",
        "status": "failed",
        "exitCode": 2,
    }
    stored = ev.NewEvent.of(event, "2026-12-01T10:00:00.000Z")
    assert (stored.type, stored.data) == ("tool_call_updated", ev.encode(event))


def test_defaults_fill_keys_old_events_lack_and_unknown_keys_are_ignored() -> None:
    event = ev.decode("revert_committed", {"messageId": "m1", "later": 1})
    assert event == ev.RevertCommitted(message_id="m1", dropped=[], scope=None)


def test_a_missing_key_or_an_unknown_type_is_an_error_naming_it() -> None:
    with pytest.raises(ev.EventDataError, match=r"data\.partId is missing"):
        ev.decode("text_delta", {"messageId": "m1", "text": "x"})
    with pytest.raises(ev.EventDataError, match="unknown event type 'nope'"):
        ev.decode("nope", {})


def test_a_stored_event_decodes_once() -> None:
    stored = ev.StoredEvent(
        session_id="s",
        seq=1,
        type="title_set",
        data={"title": "Fix a.py"},
        time="2026-12-01T10:00:00.000Z",
    )
    assert stored.event == ev.TitleSet(title="Fix a.py")
    assert stored.event is stored.event


async def test_a_database_written_before_typed_events_loads_and_reads_the_same(
    tmp_path: Path,
) -> None:
    data_dir = tmp_path / "data"
    async with await open_store(data_dir):
        pass  # the schema of today
    with sqlite3.connect(data_dir / DB_FILENAME) as conn:
        conn.executemany(
            "INSERT INTO events (session_id, seq, type, version, time, data)"
            " VALUES (?, ?, ?, ?, ?, ?)",
            [
                (r["sessionId"], r["seq"], r["type"], r["version"], r["time"], r["data"])
                for r in OLD_ROWS
            ],
        )
    async with await open_store(data_dir) as store:
        await store.rebuild_projections()
        loaded = await store.events("ses_old1")
        assert [e.to_json()["data"] for e in loaded] == [json.loads(r["data"]) for r in OLD_ROWS]
        assert [type(e.event).TYPE for e in loaded] == [r["type"] for r in OLD_ROWS]
        info = await store.session("ses_old1")
        assert info is not None
        assert (info.title, info.mode) == ("Fix a.py", "plan")

    assert [to_update(e) for e in loaded] == OLD_OUTPUT["wire"]
    live, replay = UpdateMapper(cwd="/w"), UpdateMapper(cwd="/w", replay=True)
    assert [live.updates(e) for e in loaded] == OLD_OUTPUT["acp"]
    assert [replay.updates(e) for e in loaded] == OLD_OUTPUT["acpReplay"]
    out, err = io.StringIO(), io.StringIO()
    terminal = TerminalEditor(stdout=out, stderr=err)
    for event in loaded:
        await terminal.publish(event)
    assert {"stdout": out.getvalue(), "stderr": err.getvalue()} == OLD_OUTPUT["headless"]


def test_the_catalogue_in_docs_events_md_is_rendered_from_the_definitions() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text == updated(text), (
        "docs/events.md's catalogue is out of date; run: python -m lsp_agent.core.event_catalogue"
        " --write"
    )
    for type_ in ev.EVENT_CLASSES:
        assert f"| `{type_}` |" in render()


def test_a_refused_call_stays_failed_and_says_refused_on_the_wire() -> None:
    refused = ev.ToolCallUpdated(
        tool_call_id="c1",
        message_id="m1",
        tool_name="bash",
        status="failed",
        error="the user said no",
        refused=True,
    )
    stored = ev.StoredEvent(
        session_id="s",
        seq=3,
        type=refused.TYPE,
        data=ev.encode(refused),
        time="2026-12-01T10:00:00.000Z",
    )
    update = to_update(stored)["update"]
    assert (update["status"], update["refused"]) == ("failed", True)
    assert stored.data["refused"] is True
