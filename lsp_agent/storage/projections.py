"""Projectors: what each event does to the projection tables.

A projector reads only its event and the rows earlier events of the same session wrote; it
never looks at the wall clock or makes up ids (times come from ``event.time``, the ids of user
message parts from the message id). So the same events always give the same rows, and
``SqliteEventStore.rebuild_projections`` can delete every projection row and replay the log.

Each projector reads its typed event (``core/events.py``); the codec does not check the JSON
types of the fields, so the projectors do, as they store them. An event the projections
cannot apply (a missing or ill-typed field, an unknown message, a second promotion, …)
raises ``ProjectionError``; the append it belongs to rolls back.
Event types with no projector here only bump the session's ``updated_at`` and ``last_seq``.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable, Collection, Mapping
from typing import Any, Final, TypeVar, get_args

from lsp_agent.core import events as ev
from lsp_agent.core.events import EventDataError, StoredEvent
from lsp_agent.core.images import placeholder
from lsp_agent.core.transcript import MessageStatus, SessionState, ToolStatus
from lsp_agent.storage import search_index
from lsp_agent.storage.db import StorageError

#: Every projection table, children before parents (the order to delete them in).
PROJECTION_TABLES: Final = (
    "search_entries",
    "parts",
    "tool_calls",
    "inbox",
    "messages",
    "sessions",
)

_SESSION_STATES: Final = frozenset(get_args(SessionState))
_TOOL_STATUSES: Final = frozenset(get_args(ToolStatus))
_END_STATUSES: Final = frozenset(get_args(MessageStatus)) - {"streaming"}
_CONFIG_COLUMNS: Final = frozenset({"mode", "model", "thought_level"})
_SURROGATE = re.compile("[\ud800-\udfff]")


class ProjectionError(StorageError):
    """An event the projections cannot apply; the append that carried it is rolled back."""


Projector = Callable[[sqlite3.Connection, StoredEvent], None]


def dumps(value: Any) -> str:
    """The JSON text of every JSON column: compact, key order kept, unicode as is."""
    text = json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    if _SURROGATE.search(text):
        # A lone surrogate cannot be stored as UTF-8; \u escapes keep it intact.
        return json.dumps(value, separators=(",", ":"), allow_nan=False)
    return text


def project(conn: sqlite3.Connection, event: StoredEvent) -> None:
    """Apply one committed-to-be event to the projections (inside the caller's transaction)."""
    if event.type != "session_created":
        _require_session(conn, event)
    projector = PROJECTORS.get(event.type)
    if projector is not None:
        projector(conn, event)
    conn.execute(
        "UPDATE sessions SET updated_at = ?, last_seq = ? WHERE session_id = ?",
        (event.time, event.seq, event.session_id),
    )


def clear_projections(conn: sqlite3.Connection) -> None:
    for table in PROJECTION_TABLES:
        conn.execute(f"DELETE FROM {table}")


# -- sessions -------------------------------------------------------------------------------


def _session_created(conn: sqlite3.Connection, event: StoredEvent) -> None:
    created = _typed(event, ev.SessionCreated)
    if _str(event, created.session_id, "sessionId") != event.session_id:
        raise _error(event, "data.sessionId is not the session the event is appended to")
    conn.execute(
        "INSERT INTO sessions (session_id, title, workspace_folder, model, mode, state,"
        " created_at, updated_at, last_seq) VALUES (?, ?, ?, ?, ?, 'idle', ?, ?, ?)",
        (
            event.session_id,
            _opt_str(event, created.title, "title") or "",
            _str(event, created.workspace_folder, "workspaceFolder"),
            _str(event, created.model, "model"),
            _str(event, created.mode, "mode"),
            event.time,
            event.time,
            event.seq,
        ),
    )


def _usage_updated(conn: sqlite3.Connection, event: StoredEvent) -> None:
    usage = _typed(event, ev.UsageUpdated)
    cost = usage.cost
    if cost is not None and (isinstance(cost, bool) or not isinstance(cost, int | float)):
        raise _error(event, "data.cost must be a number")
    conn.execute(
        "UPDATE sessions SET input_tokens = ?, output_tokens = ?, cache_read_tokens = ?,"
        " cache_write_tokens = ?, context_used = ?, context_size = ?, cost = ?"
        " WHERE session_id = ?",
        (
            _int(event, usage.input_tokens, "inputTokens"),
            _int(event, usage.output_tokens, "outputTokens"),
            _int(event, usage.cache_read_tokens, "cacheReadTokens"),
            _int(event, usage.cache_write_tokens, "cacheWriteTokens"),
            _int(event, usage.context_used, "contextUsed"),
            _int(event, usage.context_size, "contextSize"),
            None if cost is None else float(cost),
            event.session_id,
        ),
    )


def _state_changed(conn: sqlite3.Connection, event: StoredEvent) -> None:
    changed = _typed(event, ev.StateChanged)
    conn.execute(
        "UPDATE sessions SET state = ?, stop_reason = ?, error = ? WHERE session_id = ?",
        (
            _choice(event, changed.state, "state", _SESSION_STATES),
            _opt_str(event, changed.stop_reason, "stopReason"),
            None if changed.error is None else dumps(changed.error),
            event.session_id,
        ),
    )


def _title_set(conn: sqlite3.Connection, event: StoredEvent) -> None:
    title = _typed(event, ev.TitleSet).title
    conn.execute(
        "UPDATE sessions SET title = ? WHERE session_id = ?",
        (_str(event, title, "title"), event.session_id),
    )


def _config_changed(conn: sqlite3.Connection, event: StoredEvent) -> None:
    changed = _typed(event, ev.ConfigChanged)
    column = _choice(event, changed.config_id, "configId", _CONFIG_COLUMNS)
    conn.execute(
        f"UPDATE sessions SET {column} = ? WHERE session_id = ?",
        (_str(event, changed.value, "value"), event.session_id),
    )


# -- the inbox and user messages --------------------------------------------------------------


def _user_message_admitted(conn: sqlite3.Connection, event: StoredEvent) -> None:
    admitted = _typed(event, ev.UserMessageAdmitted)
    content = admitted.content
    if not isinstance(content, list) or not all(
        isinstance(block, dict) and isinstance(block.get("type"), str) for block in content
    ):
        raise _error(event, "data.content must be a list of content blocks")
    attachments = admitted.attachments if admitted.attachments is not None else []
    if not isinstance(attachments, list) or not all(
        isinstance(item, dict) and isinstance(item.get("text"), str) for item in attachments
    ):
        raise _error(event, "data.attachments must be a list of {text, source}")
    conn.execute(
        "INSERT INTO inbox (message_id, session_id, content, client_message_id, admitted_seq,"
        " admitted_at, attachments) VALUES (?, ?, ?, ?, ?, ?, ?)",
        (
            _str(event, admitted.message_id, "messageId"),
            event.session_id,
            dumps(content),
            _opt_str(event, admitted.client_message_id, "clientMessageId"),
            event.seq,
            event.time,
            dumps(attachments),
        ),
    )


def _user_message_promoted(conn: sqlite3.Connection, event: StoredEvent) -> None:
    message_id = _str(event, _typed(event, ev.UserMessagePromoted).message_id, "messageId")
    row = _fetch_one(
        conn,
        "SELECT session_id, content, attachments, promoted_seq FROM inbox WHERE message_id = ?",
        (message_id,),
    )
    if row is None or row["session_id"] != event.session_id:
        raise _error(event, f"message {message_id!r} was never admitted to this session")
    if row["promoted_seq"] is not None:
        raise _error(event, f"message {message_id!r} was already promoted")
    conn.execute("UPDATE inbox SET promoted_seq = ? WHERE message_id = ?", (event.seq, message_id))
    conn.execute(
        "INSERT INTO messages (message_id, session_id, seq, role, status, created_at, ended_at)"
        " VALUES (?, ?, ?, 'user', 'completed', ?, ?)",
        (message_id, event.session_id, event.seq, event.time, event.time),
    )
    parts = user_text_parts(json.loads(row["content"]))
    parts += attachment_parts(json.loads(row["attachments"]))
    for position, data in enumerate(parts):
        conn.execute(
            "INSERT INTO parts (part_id, message_id, session_id, position, type, data)"
            " VALUES (?, ?, ?, ?, 'text', ?)",
            (f"{message_id}.{position}", message_id, event.session_id, position, dumps(data)),
        )
    search_index.index_message(conn, event.session_id, message_id)


def user_text_parts(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text parts (their ``data``) a user message's content blocks become.

    ``text`` → its text; ``resource`` → a header line naming the uri, then the resource text;
    ``resource_link`` → a line naming the uri (and the lines of its range); ``mention`` → a
    line naming it (``[mention: #diff]``); ``image`` → its placeholder, the image beside it
    (core/images.py). Other block types
    carry nothing the model can read and are left out.
    """
    parts: list[dict[str, Any]] = []
    for block in content:
        kind, uri = block.get("type"), _clean(str(block.get("uri", "")))
        if kind == "text":
            parts.append({"text": _clean(str(block.get("text", "")))})
        elif kind == "resource":
            text = _clean(str(block.get("text", "")))
            parts.append({"text": f"[resource: {uri}]\n{text}", "uri": uri})
        elif kind == "resource_link":
            where = _describe_range(block.get("range"))
            parts.append({"text": f"[resource link: {uri}{where}]", "uri": uri})
        elif kind == "mention":
            name = _clean(str(block.get("name", "")))
            scope = f" ({uri})" if uri else ""
            parts.append({"text": f"[mention: #{name}{scope}]"})
        elif kind == "image" and _whole_image(block):
            parts.append(_image_part(block))
    return parts


def _whole_image(block: dict[str, Any]) -> bool:
    """A block with a type and data: anything less carries nothing to show."""
    return isinstance(block.get("mimeType"), str) and isinstance(block.get("data"), str)


def _image_part(block: dict[str, Any]) -> dict[str, Any]:
    """An image: its placeholder is the text (transcript, search, exports); the model is
    sent ``image``."""
    image = {"mediaType": str(block.get("mimeType", "")), "data": str(block.get("data", ""))}
    return {"text": _clean(placeholder(block)), "image": image}


def attachment_parts(attachments: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The text parts a message's attachments become, after its content's: marked
    ``attachment`` (their source), so the model is sent them and the transcript, exports
    and the search index leave them out."""
    parts = []
    for item in attachments:
        part = {
            "text": _clean(str(item.get("text", ""))),
            "attachment": str(item.get("source", "")),
        }
        image = item.get("image")
        if isinstance(image, dict) and _whole_image(image):
            part["image"] = _image_part(image)["image"]
        parts.append(part)
    return parts


def _describe_range(value: Any) -> str:
    """`` (lines 3-7)`` for an LSP range (0-based lines), or "" if there is none."""
    try:
        first = int(value["start"]["line"]) + 1
        last = int(value["end"]["line"]) + 1
    except (TypeError, KeyError, ValueError):
        return ""
    return f" (line {first})" if first == last else f" (lines {first}-{last})"


# -- assistant messages ----------------------------------------------------------------------


def _assistant_message_started(conn: sqlite3.Connection, event: StoredEvent) -> None:
    started = _typed(event, ev.AssistantMessageStarted)
    step = started.step
    if step is not None and (isinstance(step, bool) or not isinstance(step, int)):
        raise _error(event, "data.step must be an integer")
    conn.execute(
        "INSERT INTO messages (message_id, session_id, seq, role, status, model, step,"
        " created_at) VALUES (?, ?, ?, 'assistant', 'streaming', ?, ?, ?)",
        (
            _str(event, started.message_id, "messageId"),
            event.session_id,
            event.seq,
            _opt_str(event, started.model, "model"),
            step,
            event.time,
        ),
    )


def _assistant_message_ended(conn: sqlite3.Connection, event: StoredEvent) -> None:
    ended = _typed(event, ev.AssistantMessageEnded)
    message_id = _str(event, ended.message_id, "messageId")
    _require_assistant_message(conn, event, message_id)
    conn.execute(
        "UPDATE messages SET status = ?, finish_reason = ?, error = ?, ended_at = ?"
        " WHERE message_id = ?",
        (
            _choice(event, ended.status, "status", _END_STATUSES),
            _opt_str(event, ended.finish_reason, "finishReason"),
            None if ended.error is None else dumps(ended.error),
            event.time,
            message_id,
        ),
    )
    search_index.index_message(conn, event.session_id, message_id)


def _text_delta(conn: sqlite3.Connection, event: StoredEvent) -> None:
    _append_text(conn, event, _typed(event, ev.TextDelta), "text")


def _reasoning_delta(conn: sqlite3.Connection, event: StoredEvent) -> None:
    _append_text(conn, event, _typed(event, ev.ReasoningDelta), "reasoning")


def _append_text(
    conn: sqlite3.Connection,
    event: StoredEvent,
    delta: ev.TextDelta | ev.ReasoningDelta,
    part_type: str,
) -> None:
    message_id = _str(event, delta.message_id, "messageId")
    part_id, text = _str(event, delta.part_id, "partId"), _str(event, delta.text, "text")
    data = _existing_part(conn, event, part_id, message_id, part_type)
    if data is None:
        _require_assistant_message(conn, event, message_id)
        _insert_part(conn, event, message_id, part_id, part_type, {"text": text})
    else:
        data["text"] = str(data.get("text", "")) + text
        _update_part(conn, part_id, data)


def _reasoning_ended(conn: sqlite3.Connection, event: StoredEvent) -> None:
    ended = _typed(event, ev.ReasoningEnded)
    message_id, part_id = (
        _str(event, ended.message_id, "messageId"),
        _str(event, ended.part_id, "partId"),
    )
    data = _existing_part(conn, event, part_id, message_id, "reasoning")
    is_new = data is None
    if data is None:
        # Redacted thinking streams no text: its part first appears here.
        _require_assistant_message(conn, event, message_id)
        data = {"text": ""}
    for key, value in (("signature", ended.signature), ("redactedData", ended.redacted_data)):
        if value is not None:
            data[key] = _str(event, value, key)
    if is_new:
        _insert_part(conn, event, message_id, part_id, "reasoning", data)
    else:
        _update_part(conn, part_id, data)


# -- tool calls ------------------------------------------------------------------------------


def _tool_call_updated(conn: sqlite3.Connection, event: StoredEvent) -> None:
    call = _typed(event, ev.ToolCallUpdated)
    tool_call_id = _str(event, call.tool_call_id, "toolCallId")
    message_id = _str(event, call.message_id, "messageId")
    values: dict[str, str | None] = {
        "tool_name": _str(event, call.tool_name, "toolName"),
        "status": _choice(event, call.status, "status", _TOOL_STATUSES),
    }
    # The optional fields each have a column; an absent one keeps the stored value.
    if call.input is not None:
        values["input"] = _tool_input(event, call.input)
    for column, value in (
        ("output", call.output),
        ("error", call.error),
        ("title", call.title),
        ("kind", call.kind),
    ):
        if value is not None:
            values[column] = _str(event, value, column)
    row = _fetch_one(
        conn,
        "SELECT session_id, message_id FROM tool_calls WHERE tool_call_id = ?",
        (tool_call_id,),
    )
    if row is None:
        _require_assistant_message(conn, event, message_id)
        values.setdefault("input", "{}")
        _insert_tool_call(conn, event, tool_call_id, message_id, values)
        _insert_part(conn, event, message_id, tool_call_id, "tool_call", {})
    else:
        if row["session_id"] != event.session_id or row["message_id"] != message_id:
            raise _error(event, f"tool call {tool_call_id!r} belongs to another message")
        assignments = ", ".join(f"{column} = ?" for column in values)
        conn.execute(
            f"UPDATE tool_calls SET {assignments}, updated_at = ? WHERE tool_call_id = ?",
            (*values.values(), event.time, tool_call_id),
        )
    if values["status"] in search_index.FINAL_TOOL_STATUSES:
        search_index.index_tool_call(conn, tool_call_id)


def _tool_input(event: StoredEvent, value: object) -> str:
    if not isinstance(value, dict):
        raise _error(event, "data.input must be an object")
    return dumps(value)


def _insert_tool_call(
    conn: sqlite3.Connection,
    event: StoredEvent,
    tool_call_id: str,
    message_id: str,
    values: Mapping[str, str | None],
) -> None:
    columns = ", ".join(values)
    marks = ", ".join("?" for _ in values)
    conn.execute(
        f"INSERT INTO tool_calls (tool_call_id, session_id, message_id, {columns},"
        f" created_at, updated_at) VALUES (?, ?, ?, {marks}, ?, ?)",
        (tool_call_id, event.session_id, message_id, *values.values(), event.time, event.time),
    )


# -- parts and messages ----------------------------------------------------------------------


def _existing_part(
    conn: sqlite3.Connection, event: StoredEvent, part_id: str, message_id: str, part_type: str
) -> dict[str, Any] | None:
    """The stored data of ``part_id``, or None; it must be ``part_type`` in ``message_id``."""
    row = _fetch_one(conn, "SELECT message_id, type, data FROM parts WHERE part_id = ?", (part_id,))
    if row is None:
        return None
    if row["message_id"] != message_id or row["type"] != part_type:
        raise _error(event, f"part {part_id!r} is a {row['type']} part of another message")
    data: dict[str, Any] = json.loads(row["data"])
    return data


def _insert_part(
    conn: sqlite3.Connection,
    event: StoredEvent,
    message_id: str,
    part_id: str,
    part_type: str,
    data: dict[str, Any],
) -> None:
    """Insert a part after the message's last one: parts stay where they first appeared."""
    conn.execute(
        "INSERT INTO parts (part_id, message_id, session_id, position, type, data)"
        " VALUES (?, ?, ?, (SELECT COALESCE(MAX(position) + 1, 0) FROM parts"
        " WHERE message_id = ?), ?, ?)",
        (part_id, message_id, event.session_id, message_id, part_type, dumps(data)),
    )


def _update_part(conn: sqlite3.Connection, part_id: str, data: dict[str, Any]) -> None:
    conn.execute("UPDATE parts SET data = ? WHERE part_id = ?", (dumps(data), part_id))


def _require_assistant_message(
    conn: sqlite3.Connection, event: StoredEvent, message_id: str
) -> None:
    row = _fetch_one(
        conn, "SELECT session_id, role FROM messages WHERE message_id = ?", (message_id,)
    )
    if row is None or row["session_id"] != event.session_id or row["role"] != "assistant":
        raise _error(event, f"no assistant message {message_id!r} was started in this session")


def _require_session(conn: sqlite3.Connection, event: StoredEvent) -> None:
    row = _fetch_one(conn, "SELECT 1 FROM sessions WHERE session_id = ?", (event.session_id,))
    if row is None:
        raise _error(event, "the session has no session_created event")


# -- reading event data ----------------------------------------------------------------------


def _error(event: StoredEvent, problem: str) -> ProjectionError:
    return ProjectionError(
        f"cannot apply {event.type} event seq {event.seq} of session {event.session_id!r}:"
        f" {problem}"
    )


def _clean(text: str) -> str:
    """Text for a TEXT column: lone surrogates (unstorable as UTF-8) become U+FFFD."""
    return _SURROGATE.sub("\ufffd", text)


E = TypeVar("E", bound=ev.Event)


def _typed(event: StoredEvent, kind: type[E]) -> E:
    """The event, decoded: a projector's own type (a missing field is a ProjectionError)."""
    try:
        typed = event.event
    except EventDataError as exc:
        raise _error(event, str(exc)) from exc
    if not isinstance(typed, kind):
        raise _error(event, f"not a {kind.TYPE} event")
    return typed


def _str(event: StoredEvent, value: object, key: str) -> str:
    """``value`` (the field stored under ``key``) checked to be a string."""
    if not isinstance(value, str):
        raise _error(event, f"data.{key} must be a string")
    return _clean(value)


def _opt_str(event: StoredEvent, value: object, key: str) -> str | None:
    return None if value is None else _str(event, value, key)


def _int(event: StoredEvent, value: object, key: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _error(event, f"data.{key} must be an integer")
    return value


def _choice(event: StoredEvent, value: object, key: str, allowed: Collection[str]) -> str:
    if value not in allowed:
        raise _error(event, f"data.{key} must be one of {', '.join(sorted(allowed))}")
    return str(value)


def _context_noted(conn: sqlite3.Connection, event: StoredEvent) -> None:
    """A context note joins the conversation as a user-role message of its own."""
    noted = _typed(event, ev.ContextNoted)
    message_id = _str(event, noted.message_id, "messageId")
    conn.execute(
        "INSERT INTO messages (message_id, session_id, seq, role, status, created_at, ended_at)"
        " VALUES (?, ?, ?, 'user', 'completed', ?, ?)",
        (message_id, event.session_id, event.seq, event.time, event.time),
    )
    conn.execute(
        "INSERT INTO parts (part_id, message_id, session_id, position, type, data)"
        " VALUES (?, ?, ?, 0, 'text', ?)",
        (
            f"{message_id}.0",
            message_id,
            event.session_id,
            dumps({"text": _str(event, noted.text, "text")}),
        ),
    )


def _permission_resolved(conn: sqlite3.Connection, event: StoredEvent) -> None:
    """Remember "allow for this session" / "always allow" answers as saved approvals (a
    replay adds nothing that is there already, a revoked one included)."""
    resolved = _typed(event, ev.PermissionResolved)
    kind = resolved.option_kind
    if kind not in ("allow_session", "allow_always"):
        return
    permission = _str(event, resolved.permission, "permission")
    patterns = resolved.always
    if not isinstance(patterns, list) or not all(isinstance(p, str) for p in patterns):
        raise _error(event, "data.always must be a list of patterns")
    if kind == "allow_session":
        scope, scope_id = "session", event.session_id
    else:
        row = _fetch_one(
            conn,
            "SELECT workspace_folder FROM sessions WHERE session_id = ?",
            (event.session_id,),
        )
        scope, scope_id = "project", str(row["workspace_folder"]) if row else ""
    conn.executemany(
        "INSERT OR IGNORE INTO saved_approvals (scope, scope_id, permission, pattern, session_id,"
        " seq, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
        [
            (scope, scope_id, permission, p, event.session_id, event.seq, event.time)
            for p in patterns
        ],
    )


def _revert_committed(conn: sqlite3.Connection, event: StoredEvent) -> None:
    """The messages a committed revert dropped are gone for search too."""
    dropped = _typed(event, ev.RevertCommitted).dropped
    if not isinstance(dropped, list) or not all(isinstance(m, str) for m in dropped):
        raise _error(event, "data.dropped must be a list of message ids")
    search_index.forget_messages(conn, dropped)


PROJECTORS: Final[Mapping[str, Projector]] = {
    "session_created": _session_created,
    "permission_resolved": _permission_resolved,
    "context_noted": _context_noted,
    "user_message_admitted": _user_message_admitted,
    "user_message_promoted": _user_message_promoted,
    "assistant_message_started": _assistant_message_started,
    "text_delta": _text_delta,
    "reasoning_delta": _reasoning_delta,
    "reasoning_ended": _reasoning_ended,
    "tool_call_updated": _tool_call_updated,
    "assistant_message_ended": _assistant_message_ended,
    "usage_updated": _usage_updated,
    "state_changed": _state_changed,
    "title_set": _title_set,
    "config_changed": _config_changed,
    "revert_committed": _revert_committed,
}


MESSAGE_EVENTS: Final = (
    "user_message_promoted",
    "context_noted",
    "assistant_message_started",
    "text_delta",
    "reasoning_delta",
    "reasoning_ended",
    "tool_call_updated",
    "assistant_message_ended",
)
"""The event types whose projector adds or changes the transcript message named by their
``messageId`` (and only that one): what ``transcript_changes`` follows."""


def _fetch_one(
    conn: sqlite3.Connection, sql: str, params: tuple[Any, ...] = ()
) -> sqlite3.Row | None:
    row: sqlite3.Row | None = conn.execute(sql, params).fetchone()
    return row
