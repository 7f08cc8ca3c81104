"""The SQLite database: one file, opened with our PRAGMAs and migrated to the latest schema.

Migrations are the package's ``migrations/NNNN_name.sql`` files, numbered from 0001 without
gaps. Each one is applied once, in its own ``BEGIN IMMEDIATE`` transaction that also records
it in ``schema_migrations``; a second process opening the same file at the same time waits
(``busy_timeout``) and then finds the migration already applied.

Connections run in autocommit mode (``isolation_level=None``): every transaction is an
explicit ``BEGIN`` … ``COMMIT``.
"""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeVar

import aiosqlite
import attrs

from lsp_agent.core.errors import LspAgentError

_T = TypeVar("_T")

DB_FILENAME: Final = "lsp-agent.db"

PRAGMAS: Final = (
    # First, so that the others (journal_mode needs a lock) wait for a busy database.
    "PRAGMA busy_timeout = 5000",
    "PRAGMA journal_mode = WAL",
    "PRAGMA synchronous = NORMAL",
    "PRAGMA foreign_keys = ON",
)

_MIGRATION_FILE = re.compile(r"^(\d{4})_([A-Za-z0-9_]+)\.sql$")

_MIGRATIONS_TABLE = """
CREATE TABLE IF NOT EXISTS schema_migrations (
    version INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    applied_at TEXT NOT NULL
)
"""


class StorageError(LspAgentError):
    """The database cannot be used: a broken migration, or a schema newer than this code."""


@attrs.frozen(kw_only=True)
class Migration:
    version: int
    name: str
    sql: str


def available_migrations() -> tuple[Migration, ...]:
    """The migrations shipped in the package, in version order (checked: 1, 2, 3, …)."""
    folder = resources.files("lsp_agent.storage").joinpath("migrations")
    found: list[Migration] = []
    for entry in folder.iterdir():
        match = _MIGRATION_FILE.match(entry.name)
        if match is not None:
            sql = entry.read_text(encoding="utf-8")
            found.append(Migration(version=int(match[1]), name=match[2], sql=sql))
    found.sort(key=lambda m: m.version)
    versions = [m.version for m in found]
    if versions != list(range(1, len(found) + 1)):
        raise StorageError(f"migrations must be numbered 1, 2, 3, … without gaps; found {versions}")
    return tuple(found)


def latest_version() -> int:
    """The schema version this code expects."""
    return available_migrations()[-1].version


def split_statements(script: str) -> list[str]:
    """Split a migration into statements (``CREATE TRIGGER … BEGIN … END;`` stays whole).

    One statement per line at most: a line is only ever the end of one statement.
    """
    statements: list[str] = []
    pending = ""
    for line in script.splitlines(keepends=True):
        pending += line
        if sqlite3.complete_statement(pending):
            if _has_code(pending):
                statements.append(pending.strip())
            pending = ""
    if _has_code(pending):
        raise StorageError(f"incomplete SQL statement at the end of a migration: {pending!r}")
    return statements


def _has_code(sql: str) -> bool:
    return any(line.strip() and not line.strip().startswith("--") for line in sql.splitlines())


async def execute(conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()) -> None:
    """Run one statement whose rows (if any) nobody needs."""
    await conn.execute_fetchall(sql, params)


async def fetch_all(
    conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()
) -> list[sqlite3.Row]:
    return list(await conn.execute_fetchall(sql, params))


async def fetch_one(
    conn: aiosqlite.Connection, sql: str, params: Iterable[Any] = ()
) -> sqlite3.Row | None:
    rows = await fetch_all(conn, sql, params)
    return rows[0] if rows else None


async def in_connection_thread(
    conn: aiosqlite.Connection, work: Callable[[sqlite3.Connection], _T]
) -> _T:
    """Run ``work`` on the underlying ``sqlite3`` connection, in aiosqlite's worker thread.

    aiosqlite hops threads once per statement; a transaction of a dozen statements (an append
    and its projections) is much cheaper as one call. aiosqlite has no public API for this,
    so this is the one place that uses its internals (covered by the storage tests).
    """
    raw: sqlite3.Connection = conn._conn
    result: _T = await conn._execute(work, raw)  # type: ignore[no-untyped-call]
    return result


async def connect(path: Path) -> aiosqlite.Connection:
    """Open ``path`` (no migrations) with rows as ``sqlite3.Row`` and our PRAGMAs."""
    conn = await aiosqlite.connect(path, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        for pragma in PRAGMAS:
            await execute(conn, pragma)
    except BaseException:
        await conn.close()
        raise
    return conn


async def open_db(path: Path) -> aiosqlite.Connection:
    """Create the parent folder, open the database and migrate it to the latest version."""
    path.parent.mkdir(parents=True, exist_ok=True)
    conn = await connect(path)
    try:
        await migrate(conn)
    except BaseException:
        await conn.close()
        raise
    return conn


async def schema_version(conn: aiosqlite.Connection) -> int:
    """The highest migration applied to this database (0 for a fresh one)."""
    table = await fetch_one(
        conn, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_migrations'"
    )
    if table is None:
        return 0
    row = await fetch_one(conn, "SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations")
    return int(row["v"]) if row is not None else 0


async def migrate(
    conn: aiosqlite.Connection, migrations: Sequence[Migration] | None = None
) -> list[int]:
    """Apply the migrations this database lacks; returns their versions ([] when up to date)."""
    todo = available_migrations() if migrations is None else tuple(migrations)
    known = max((m.version for m in todo), default=0)
    await execute(conn, _MIGRATIONS_TABLE)
    current = await schema_version(conn)
    if current > known:
        raise StorageError(
            f"the database schema is version {current}, newer than this lsp-agent knows "
            f"({known}); upgrade lsp-agent"
        )
    applied: list[int] = []
    for migration in todo:
        if migration.version > current and await _apply(conn, migration):
            applied.append(migration.version)
    return applied


async def _apply(conn: aiosqlite.Connection, migration: Migration) -> bool:
    """Apply one migration in its own transaction; False if another process got there first."""
    await execute(conn, "BEGIN IMMEDIATE")
    try:
        done = await fetch_one(
            conn, "SELECT 1 FROM schema_migrations WHERE version = ?", (migration.version,)
        )
        if done is None:
            for statement in split_statements(migration.sql):
                await execute(conn, statement)
            await execute(
                conn,
                "INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)",
                (migration.version, migration.name, datetime.now(UTC).isoformat()),
            )
    except sqlite3.Error as exc:
        await conn.rollback()
        raise StorageError(
            f"migration {migration.version:04d}_{migration.name} failed: {exc}"
        ) from exc
    except BaseException:
        await conn.rollback()
        raise
    await conn.commit()
    return done is None
