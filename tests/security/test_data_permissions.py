"""Finding 11: under umask 022 other local users could read every transcript. The data folder
is ``0700`` and the database (with ``-wal``/``-shm``), spill files and transcripts ``0600``,
whatever the umask; looser modes left by an older version are tightened at open."""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.storage.db import DB_FILENAME
from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.workspace.spill import write_spill

KEY = "sk-permissions-test-0123456789"


@pytest.fixture(autouse=True)
def permissive_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


@pytest.fixture
def data_dir() -> Path:
    return Path(os.environ["LSP_AGENT_DATA_DIR"])


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def nobody_else(path: Path) -> bool:
    return mode(path) & 0o077 == 0


async def test_a_new_database_and_its_side_files_are_private(data_dir: Path) -> None:
    async with await open_store(data_dir) as store:
        await store.list_sessions()
        db = data_dir / DB_FILENAME
        sides = [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm")]
        assert all(side.exists() for side in sides)  # WAL mode: both exist while open
        assert mode(data_dir) == 0o700
        assert mode(db) == 0o600
        for side in sides:
            assert mode(side) == 0o600, side


async def test_loose_modes_left_by_an_older_version_are_tightened(data_dir: Path) -> None:
    async with await open_store(data_dir):
        pass
    db = data_dir / DB_FILENAME
    aside = data_dir / f"{DB_FILENAME}.corrupt-20250101T000000Z"
    aside.write_bytes(b"old")
    wal = db.with_name(db.name + "-wal")
    wal.write_bytes(b"")
    for path, loose in ((data_dir, 0o755), (db, 0o644), (aside, 0o644), (wal, 0o666)):
        path.chmod(loose)
    async with await open_store(data_dir):
        pass
    assert mode(data_dir) == 0o700
    for path in (db, aside):
        assert mode(path) == 0o600, path
    if wal.exists():
        assert mode(wal) == 0o600


def test_spill_files_and_their_folders_are_private(data_dir: Path) -> None:
    root = data_dir / "tool-output"
    (root / "ses1").mkdir(parents=True, mode=0o755)
    root.chmod(0o755)
    path = write_spill(root, "ses1", "call1", b"x" * 100)
    assert mode(path) == 0o600
    assert mode(path.parent) == 0o700
    assert mode(root) == 0o700


def test_a_real_run_under_umask_022_leaves_nothing_readable_by_others(
    tmp_path: Path, data_dir: Path
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    # Enough output to be spilled to a file in the data folder.
    command = {"command": "seq 1 200000", "description": "count"}
    script = [{"tool_calls": [{"name": "bash", "input": command}]}, {"text": "done"}]
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli(
            "run", "--yes", "--model", "anthropic/claude-test", "count",
            cwd=ws, env=env, timeout=120,
        )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert mode(data_dir) == 0o700
    spilled = list((data_dir / "tool-output").rglob("*.txt"))
    assert spilled, "the output was expected to spill"
    everything = [data_dir / DB_FILENAME, *spilled]
    for path in everything:
        assert nobody_else(path), (path, oct(mode(path)))
    with contextlib.suppress(FileNotFoundError):
        for path in (data_dir / "transcripts").rglob("*"):
            assert nobody_else(path), path


def test_transcripts_written_for_plain_clients_are_private(data_dir: Path) -> None:
    from lsp_agent.lsp.plain import _write  # the one writer of transcript files

    folder = data_dir / "transcripts"
    folder.mkdir(parents=True, mode=0o755)
    folder.chmod(0o755)
    path = folder / "ses1.md"
    _write(path, "the whole session")
    assert mode(path) == 0o600
    assert mode(folder) == 0o700
