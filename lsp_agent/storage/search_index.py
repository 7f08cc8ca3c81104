"""Full-text search over every session: the index projection and the query.

The index (``search_entries`` and its FTS5 table ``search_text``, migration 0003) is written by
the projectors in the append's transaction, once per finished piece of text: a user message
when it is promoted, an assistant message's text and reasoning parts when it ends, a tool
call's input and its output (or error) when it reaches a final status. Streamed deltas never
touch it, so the hot path pays once per message or tool call, not per chunk. A committed revert
drops its messages from the index; deleting a session cascades to its entries.

A query is the user's words, never FTS5 syntax: each word (or ``"quoted phrase"``) is quoted
for FTS5 so that no input can be a syntax error, a trailing ``*`` asks for a prefix, and every
term must occur in the same piece of text. Hits are one per message, best (bm25) first.
"""

from __future__ import annotations

import json
import re
import sqlite3
from typing import Any, Final, Literal

import attrs

from lsp_agent.core.errors import LspAgentError

SearchKind = Literal["user", "assistant", "reasoning", "tool_input", "tool_output"]

DEFAULT_LIMIT: Final = 20
MAX_LIMIT: Final = 200
_SNIPPET_TOKENS: Final = 24
FINAL_TOOL_STATUSES: Final = frozenset({"completed", "failed", "cancelled", "interrupted"})
_TERM = re.compile(r'"([^"]*)"?|(\S+)')


class SearchQueryError(LspAgentError):
    """A query that cannot be searched for (nothing to search, or one SQLite refused)."""


@attrs.frozen(kw_only=True)
class SearchHit:
    """One message that matches: where it is and the matching text around the words."""

    session_id: str
    title: str
    message_id: str
    snippet: str
    updated_at: str
    """When the session was last updated."""
    time: str
    """When the matching message was written (each hit its own; a session's hits share
    ``updated_at``)."""
    kind: SearchKind
    """What matched: the user's words, the answer, reasoning, a tool's input or output."""

    def to_json(self) -> dict[str, Any]:
        return {
            "sessionId": self.session_id,
            "title": self.title,
            "messageId": self.message_id,
            "snippet": self.snippet,
            "updatedAt": self.updated_at,
            "time": self.time,
            "kind": self.kind,
        }


# -- the index (called by the projectors, inside the append's transaction) -------------------


def index_message(conn: sqlite3.Connection, session_id: str, message_id: str) -> None:
    """Index the text and reasoning parts of a finished message: a user message that has just
    joined the conversation, an assistant message that has just ended."""
    rows = conn.execute(
        "SELECT p.part_id, p.type, p.data, m.role FROM parts AS p"
        " JOIN messages AS m ON m.message_id = p.message_id"
        " WHERE p.message_id = ? AND p.type IN ('text', 'reasoning') ORDER BY p.position",
        (message_id,),
    ).fetchall()
    for row in rows:
        data = json.loads(row["data"])
        if "attachment" in data:
            continue  # not the user's words: what a link or mention named
        text = str(data.get("text", ""))
        if row["role"] == "user":
            kind: SearchKind = "user"
        else:
            kind = "assistant" if row["type"] == "text" else "reasoning"
        _put(conn, session_id, message_id, row["part_id"], kind, text)


def index_tool_call(conn: sqlite3.Connection, tool_call_id: str) -> None:
    """Index a tool call's input and output once its status is final (again if it changes)."""
    row = conn.execute(
        "SELECT session_id, message_id, status, input, output, error FROM tool_calls"
        " WHERE tool_call_id = ?",
        (tool_call_id,),
    ).fetchone()
    if row is None or row["status"] not in FINAL_TOOL_STATUSES:
        return
    session_id, message_id = row["session_id"], row["message_id"]
    _put(conn, session_id, message_id, f"{tool_call_id}:input", "tool_input", row["input"])
    output = f"{row['output'] or ''}\n{row['error'] or ''}".strip("\n")
    _put(conn, session_id, message_id, f"{tool_call_id}:output", "tool_output", output)


def forget_messages(conn: sqlite3.Connection, message_ids: list[str]) -> None:
    """Drop the entries of messages a committed revert dropped for good."""
    conn.executemany(
        "DELETE FROM search_entries WHERE message_id = ?", [(mid,) for mid in message_ids]
    )


def _put(
    conn: sqlite3.Connection,
    session_id: str,
    message_id: str,
    source_id: str,
    kind: SearchKind,
    text: str,
) -> None:
    """Replace the entry of ``source_id`` (none for empty text); the triggers keep FTS in step."""
    conn.execute("DELETE FROM search_entries WHERE source_id = ?", (source_id,))
    if text:
        conn.execute(
            "INSERT INTO search_entries (session_id, message_id, source_id, kind, text)"
            " VALUES (?, ?, ?, ?, ?)",
            (session_id, message_id, source_id, kind, text),
        )


# -- the query ------------------------------------------------------------------------------


def fts_query(query: str) -> str:
    """The FTS5 expression for the user's ``query``: every term quoted, so nothing in it is
    syntax. ``SearchQueryError`` when it holds no word to search for."""
    terms: list[str] = []
    for match in _TERM.finditer(query):
        phrase, word = match[1], match[2]
        prefix = False
        if word is not None:
            prefix = word.endswith("*")
            phrase = word.rstrip("*")
        if phrase is None or not any(ch.isalnum() for ch in phrase):
            continue
        quoted = '"' + phrase.replace('"', '""') + '"'
        terms.append(quoted + " *" if prefix else quoted)
    if not terms:
        raise SearchQueryError(
            f"nothing to search for in {query.strip()!r}: give at least one word"
            if query.strip()
            else "nothing to search for: the query is empty"
        )
    return " ".join(terms)


_SEARCH_SQL = f"""
SELECT e.session_id, e.message_id, e.kind, s.title, s.updated_at,
       COALESCE(m.created_at, s.updated_at) AS time,
       snippet(search_text, 0, '', '', '…', {_SNIPPET_TOKENS}) AS snippet
FROM search_text
JOIN search_entries AS e ON e.entry_id = search_text.rowid
JOIN sessions AS s ON s.session_id = e.session_id
LEFT JOIN messages AS m ON m.message_id = e.message_id
WHERE search_text MATCH ? AND (? IS NULL OR s.workspace_folder = ?)
ORDER BY bm25(search_text), s.updated_at DESC, e.entry_id
"""


def search(
    conn: sqlite3.Connection, query: str, workspace_folder: str | None, limit: int
) -> list[SearchHit]:
    """The best ``limit`` messages matching ``query`` (in ``workspace_folder``'s sessions only,
    when given), one hit per message."""
    expression = fts_query(query)
    limit = max(1, min(limit, MAX_LIMIT))
    hits: list[SearchHit] = []
    seen: set[str] = set()
    try:
        cursor = conn.execute(_SEARCH_SQL, (expression, workspace_folder, workspace_folder))
        try:
            for row in cursor:
                if row["message_id"] in seen:
                    continue
                seen.add(row["message_id"])
                hits.append(
                    SearchHit(
                        session_id=row["session_id"],
                        title=row["title"],
                        message_id=row["message_id"],
                        snippet=row["snippet"],
                        updated_at=row["updated_at"],
                        time=row["time"],
                        kind=row["kind"],
                    )
                )
                if len(hits) >= limit:
                    break
        finally:
            cursor.close()
    except sqlite3.OperationalError as error:
        if "fts5" not in str(error).lower() and "match" not in str(error).lower():
            raise
        raise SearchQueryError(f"cannot search for {query!r}: {error}") from error
    return hits
