"""Saved approvals as rows: what the gate reads, what ``permissions list`` shows, and revoking.

"Always allow" answers belong to the project (the workspace folder URI) and outlive the
session that gave them; "allow for this session" answers belong to their session. A row per
answer (the ``permission_resolved`` event that gave it, storage/projections.py); revoking
marks the rows ``revoked_at`` instead of deleting them, so a replay of the log never brings
one back (migrations/0006_saved_approvals.sql).
"""

from __future__ import annotations

import sqlite3
from typing import Literal

import attrs

Scope = Literal["session", "project"]

__all__ = ["SavedApproval", "Scope", "active", "drop_session", "revoke"]


@attrs.frozen(kw_only=True)
class SavedApproval:
    """One saved allow: ``pattern`` of ``permission``, for ``scope`` (``scope_id`` is the
    workspace folder URI or the session id). ``session_id`` gave it first."""

    scope: Scope
    scope_id: str
    permission: str
    pattern: str
    session_id: str
    created_at: str


_ACTIVE = (
    "SELECT scope, scope_id, permission, pattern, MIN(session_id) AS session_id,"
    " MIN(created_at) AS created_at FROM saved_approvals WHERE revoked_at IS NULL"
)
_GROUP = " GROUP BY scope, scope_id, permission, pattern ORDER BY MIN(created_at), MIN(seq)"


def active(
    conn: sqlite3.Connection, *, workspace_folder: str | None, session_id: str | None
) -> list[SavedApproval]:
    """The approvals in force, oldest first: the project's (``workspace_folder``; None: every
    project's) and, with ``session_id``, that session's; without it, every session's of the
    project (every session's at all when ``workspace_folder`` is None too)."""
    sql, params = _ACTIVE, []
    if session_id is not None:
        sql += " AND ((scope = 'session' AND scope_id = ?) OR (scope = 'project' AND scope_id = ?))"
        params += [session_id, workspace_folder or ""]
    elif workspace_folder is not None:
        sql += (
            " AND ((scope = 'project' AND scope_id = ?) OR (scope = 'session' AND scope_id IN"
            " (SELECT session_id FROM sessions WHERE workspace_folder = ?)))"
        )
        params += [workspace_folder, workspace_folder]
    rows = conn.execute(sql + _GROUP, params).fetchall()
    return [
        SavedApproval(
            scope=row["scope"],
            scope_id=row["scope_id"],
            permission=row["permission"],
            pattern=row["pattern"],
            session_id=row["session_id"],
            created_at=row["created_at"],
        )
        for row in rows
    ]


def revoke(
    conn: sqlite3.Connection,
    *,
    scope: Scope,
    scope_id: str,
    permission: str,
    pattern: str,
    now: str,
) -> int:
    """Mark the approval revoked; how many rows were in force (0: there was none)."""
    cursor = conn.execute(
        "UPDATE saved_approvals SET revoked_at = ? WHERE scope = ? AND scope_id = ?"
        " AND permission = ? AND pattern = ? AND revoked_at IS NULL",
        (now, scope, scope_id, permission, pattern),
    )
    return cursor.rowcount


def drop_session(conn: sqlite3.Connection, session_id: str) -> None:
    """A deleted session's own approvals go with it; the project's stay."""
    conn.execute(
        "DELETE FROM saved_approvals WHERE scope = 'session' AND scope_id = ?", (session_id,)
    )
