"""The SQLite database: one file, opened with our PRAGMAs and migrated to the latest schema.

Migrations are the package's ``migrations/NNNN_name.sql`` files, numbered from 0001 without
gaps. Each one is applied once, in its own ``BEGIN IMMEDIATE`` transaction that also records
it in ``schema_migrations``; a second process opening the same file at the same time waits
(``busy_timeout``) and then finds the migration already applied.

Connections run in autocommit mode (``isolation_level=None``): every transaction is an
explicit ``BEGIN`` … ``COMMIT``.

:func:`open_checked_db` (what the event store opens) first runs ``PRAGMA quick_check``. A
corrupt file (or one that is not a database at all) is never used: it is renamed, with its
``-wal``/``-shm`` files, to ``lsp-agent.db.corrupt-<UTC time>`` (``…-wal``, ``…-shm``) next
to it, a warning says so, and a fresh database is created in its place. A busy or locked
database is not corruption and is never moved.

Transcripts are private (docs/security.md "The data folder"): the folder is made ``0700``
and the database ``0600`` before SQLite opens it — SQLite gives the ``-wal`` and ``-shm``
files the database file's mode — and looser modes found at open (an older version, a
permissive umask) are tightened, the side files and moved-aside copies included.
"""

from __future__ import annotations

import contextlib
import logging
import os
import re
import shutil
import sqlite3
from collections.abc import Callable, Iterable, Iterator, Sequence
from datetime import UTC, datetime
from importlib import resources
from pathlib import Path
from typing import Any, Final, TypeVar

import aiosqlite
import attrs

from lsp_agent.core.errors import LspAgentError
from lsp_agent.system.private_files import PRIVATE_FILE_MODE, private_folder, tighten

_T = TypeVar("_T")

_log = logging.getLogger(__name__)

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


class DatabaseCorrupt(StorageError):
    """The file fails ``PRAGMA quick_check`` or is not an SQLite database at all."""


@attrs.frozen(kw_only=True)
class MovedAside:
    """A corrupt database that was renamed out of the way (a fresh one took its place)."""

    original: Path
    moved_to: Path
    reason: str

    def message(self) -> str:
        return (
            f"lsp-agent: the database {self.original} is corrupt ({self.reason}); it was moved"
            f" aside to {self.moved_to} and a fresh, empty database was created"
        )


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


def is_corruption(error: BaseException) -> bool:
    """Whether an SQLite error means the file is damaged (not merely busy, locked or full)."""
    name = getattr(error, "sqlite_errorname", None)
    if isinstance(name, str):
        return name.startswith(("SQLITE_CORRUPT", "SQLITE_NOTADB"))
    text = str(error).lower()
    return "malformed" in text or "not a database" in text


async def quick_check(conn: aiosqlite.Connection) -> list[str]:
    """The problems ``PRAGMA quick_check`` finds ([] when the database is fine)."""
    rows = await fetch_all(conn, "PRAGMA quick_check")
    problems = [str(row[0]) for row in rows]
    return [] if problems == ["ok"] else problems


async def open_checked_db(path: Path) -> tuple[aiosqlite.Connection, MovedAside | None]:
    """Like :func:`open_db`, but a corrupt file is moved aside first (and reported).

    Returns the migrated connection and, if the file was corrupt, where it went.
    """
    make_private(path)
    identity = _identity(path)
    conn, problem = await _connect_checked(path)
    moved: MovedAside | None = None
    if problem is not None:
        moved = await _move_aside(path, problem, identity, conn)
        if moved is not None:
            _log.warning("%s", moved.message())
        make_private(path)  # the fresh database too
        conn, problem = await _connect_checked(path)
        if problem is not None:
            await conn.close()
            raise DatabaseCorrupt(f"the database {path} is corrupt: {problem}")
    try:
        await migrate(conn)
    except BaseException:
        await conn.close()
        raise
    return conn, moved


async def _connect_checked(path: Path) -> tuple[aiosqlite.Connection, str | None]:
    """Connect and run ``quick_check`` before anything writes: (connection, None) with our
    PRAGMAs set, or (the still open connection, what is wrong) for a corrupt file.

    The connection is left open on corruption so that SQLite, closing it, cannot delete the
    ``-wal``/``-shm`` files before they are set aside with the database.
    """
    conn = await aiosqlite.connect(path, isolation_level=None)
    try:
        conn.row_factory = sqlite3.Row
        await execute(conn, PRAGMAS[0])  # busy_timeout: a busy database is waited for
        try:
            problems = await quick_check(conn)
        except sqlite3.DatabaseError as error:
            if not is_corruption(error):
                raise
            return conn, str(error)
        if problems:
            more = f" (+{len(problems) - 1} more)" if len(problems) > 1 else ""
            return conn, f"quick_check: {problems[0]}{more}"
        for pragma in PRAGMAS[1:]:
            await execute(conn, pragma)
    except BaseException:
        await conn.close()
        raise
    return conn, None


def make_private(path: Path) -> None:
    """The database's folder ``0700`` and the database with its side files ``0600``,
    created so when missing (before SQLite creates them with the umask's mode)."""
    private_folder(path.parent)
    try:
        os.close(os.open(path, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o600))
    except OSError as error:  # SQLite says what is wrong when it opens the file
        _log.debug("could not create %s: %s", path, error)
    for suffix in ("", *_SIDE_FILES):
        tighten(_with_suffix(path, suffix), PRIVATE_FILE_MODE)
    for aside in path.parent.glob(f"{path.name}.corrupt-*"):
        tighten(aside, PRIVATE_FILE_MODE)


def _identity(path: Path) -> tuple[int, int] | None:
    try:
        info = path.stat()
    except OSError:
        return None
    return info.st_dev, info.st_ino


_SIDE_FILES = ("-wal", "-shm", "-journal")


async def _move_aside(
    path: Path, reason: str, identity: tuple[int, int] | None, conn: aiosqlite.Connection
) -> MovedAside | None:
    """Rename the corrupt ``path`` (and its side files) to ``<name>.corrupt-<UTC time>``,
    closing ``conn`` (the connection that found it corrupt) on the way.

    Under an exclusive lock on the folder, so two processes that found the same corruption
    do not both move: the second finds a file other than the one it checked (or none) and
    moves nothing (None). Raises ``StorageError`` if the file cannot be moved.
    """
    with _folder_lock(path.parent):
        current = _identity(path)
        if current is None or (identity is not None and current != identity):
            await conn.close()
            return None  # another process moved it already; the caller opens what is there
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        target = path.with_name(f"{path.name}.corrupt-{stamp}")
        counter = 1
        while any(_with_suffix(target, s).exists() for s in ("", *_SIDE_FILES)):
            target = path.with_name(f"{path.name}.corrupt-{stamp}.{counter}")
            counter += 1
        try:
            # Second names for the side files first: closing may delete the originals.
            for suffix in _SIDE_FILES:
                _second_name(_with_suffix(path, suffix), _with_suffix(target, suffix))
            await conn.close()
            for suffix in _SIDE_FILES:
                _drop_original(_with_suffix(path, suffix), _with_suffix(target, suffix))
            os.replace(path, target)
        except OSError as error:
            await conn.close()  # (closing twice is harmless)
            raise StorageError(
                f"the database {path} is corrupt ({reason}) and could not be moved aside: {error}"
            ) from error
    return MovedAside(original=path, moved_to=target, reason=reason)


def _with_suffix(path: Path, suffix: str) -> Path:
    return path.with_name(path.name + suffix)


def _second_name(original: Path, aside: Path) -> None:
    """``aside`` names the same file as ``original`` (a copy where links are not possible)."""
    try:
        os.link(original, aside)
    except FileNotFoundError:
        return
    except OSError:
        shutil.copy2(original, aside)


def _drop_original(original: Path, aside: Path) -> None:
    """Remove ``original`` if it is still there (``aside`` already holds it): a stale WAL
    left next to the fresh database would be replayed into it."""
    if not original.exists():
        return
    if aside.exists():
        original.unlink()
    else:
        os.replace(original, aside)


@contextlib.contextmanager
def _folder_lock(folder: Path) -> Iterator[None]:
    """An exclusive ``flock`` on the folder itself (a no-op where there is none)."""
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX
        yield
        return
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        yield
        return
    try:
        with contextlib.suppress(OSError):  # a file system without flock: best effort
            fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


async def open_db(path: Path) -> aiosqlite.Connection:
    """Create the parent folder, open the database and migrate it to the latest version."""
    make_private(path)
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
