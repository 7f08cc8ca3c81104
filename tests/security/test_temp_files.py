"""Finding 10: a SIGKILL during ``write`` or ``apply_patch`` left ``*.tmp`` files in the
workspace that nothing removed. Now the next process to open the database removes a dead
writer's temporary files — and never a live writer's, nor a user's own ``*.tmp``."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.system.procfs import start_ticks
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from lsp_agent.workspace.temp_files import TempJournal, create_temp, parse_temp_name, use_journal

KEY = "sk-temp-files-test-0123456789"
DEAD_PID = 2**22 + 4321
"""Above Linux's largest pid_max: no process can have it."""
KILL_TIMEOUT = 120.0

# Runs the real `lsp-agent` with one change, made only here in the test: the fsync of a
# temporary file in the workspace announces itself (a marker file) and then waits forever,
# so the test can SIGKILL the process exactly between creating the file and renaming it.
PAUSED_CLI = """
import os, sys, time
workspace, marker = os.environ["PAUSE_WORKSPACE"], os.environ["PAUSE_MARKER"]
real_fsync = os.fsync
def fsync(fd):
    try:
        path = os.readlink(f"/proc/self/fd/{fd}")
    except OSError:
        path = ""
    if path.startswith(workspace + os.sep) and path.endswith(".tmp"):
        open(marker, "w").close()
        time.sleep(3600)
    return real_fsync(fd)
os.fsync = fsync
sys.argv[0] = "lsp-agent"
from lsp_agent.cli import main
raise SystemExit(main())
"""


@pytest.fixture
def journal_dir() -> Path:
    return Path(os.environ["LSP_AGENT_DATA_DIR"]) / "temp-files"


@pytest.fixture(autouse=True)
def no_journal_left() -> Iterator[None]:
    """Tests that install a journal in this process take it out again."""
    yield
    use_journal(None)


def leave_temp(folder: Path, journal_dir: Path, pid: int, ticks: int, target: str) -> Path:
    """What a writer with this identity leaves when it dies between create and rename."""
    journal_dir.mkdir(parents=True, exist_ok=True)
    with (journal_dir / f"{pid}-{ticks}").open("a") as journal:
        journal.write(json.dumps(str(folder)) + "\n")
    temp = folder / f".{target}.lsp-agent-{pid}-{ticks}-0badc0de.tmp"
    temp.write_text("half a file")
    return temp


def next_start(workspace: Path) -> None:
    result = run_cli("sessions", "list", cwd=workspace)
    assert result.returncode == 0, result.stderr


def test_a_dead_writers_temporary_files_are_removed_at_the_next_start(
    workspace: Path, journal_dir: Path
) -> None:
    (workspace / "src").mkdir()
    temps = [
        leave_temp(workspace, journal_dir, DEAD_PID, 777, "a.py"),
        leave_temp(workspace / "src", journal_dir, DEAD_PID, 777, "b.py"),
    ]
    next_start(workspace)
    assert not any(t.exists() for t in temps)
    assert not (journal_dir / f"{DEAD_PID}-777").exists()


def test_only_our_names_with_the_dead_owners_identity_are_removed(
    workspace: Path, journal_dir: Path
) -> None:
    dead = leave_temp(workspace, journal_dir, DEAD_PID, 777, "a.py")
    mine = os.getpid()
    keep = [
        workspace / "notes.tmp",  # the user's own
        workspace / ".a.py.0badc0de.tmp",  # an older version's name: not provably ours
        workspace / f".a.py.lsp-agent-{DEAD_PID}-778-0badc0de.tmp",  # another identity
        workspace / f".a.py.lsp-agent-{mine}-{start_ticks(mine)}-0badc0de.tmp",  # alive
        workspace / f"a.py.lsp-agent-{DEAD_PID}-777-0badc0de.tmp",  # no leading dot
        workspace / f".a.py.lsp-agent-{DEAD_PID}-777-0badc0de.tmp.bak",
    ]
    for path in keep:
        path.write_text("keep me")
    link = workspace / f".x.lsp-agent-{DEAD_PID}-777-00000000.tmp"
    link.symlink_to(workspace / "notes.tmp")  # a link is never ours: left alone
    next_start(workspace)
    assert not dead.exists()
    assert all(path.exists() for path in keep)
    assert link.is_symlink()


def test_a_live_writers_temporary_file_is_never_removed(workspace: Path, journal_dir: Path) -> None:
    with subprocess.Popen(["sleep", "300"]) as live:
        try:
            ticks = start_ticks(live.pid)
            assert ticks is not None
            temp = leave_temp(workspace, journal_dir, live.pid, ticks, "a.py")
            next_start(workspace)
            assert temp.exists()
            assert (journal_dir / f"{live.pid}-{ticks}").exists()
        finally:
            live.kill()
    # The same pid and start ticks never come back: once it is gone, so is its file.
    next_start(workspace)
    assert not temp.exists()


def test_temporary_names_carry_the_writer_and_the_folder_is_recorded_first(
    workspace: Path, journal_dir: Path
) -> None:
    use_journal(TempJournal(journal_dir))
    temp, fd = create_temp(str(workspace), "x" * 250 + ".py")
    os.close(fd)
    name = os.path.basename(temp)
    assert len(os.fsencode(name)) <= 255
    assert parse_temp_name(name) == (os.getpid(), start_ticks(os.getpid()))
    journal = journal_dir / f"{os.getpid()}-{start_ticks(os.getpid())}"
    assert json.loads(journal.read_text().splitlines()[0]) == str(workspace)
    assert journal.stat().st_mode & 0o077 == 0  # private, like everything in the data folder
    os.unlink(temp)


def kill_mid_write(workspace: Path, tmp_path: Path, call: dict[str, Any]) -> None:
    """Run `lsp-agent run` with ``call`` as the model's tool call; SIGKILL it while the
    tool's temporary file exists; then start again and check it is gone."""
    marker = tmp_path / "paused"
    script = [{"tool_calls": [call]}, {"text": "done"}]
    with running_fake_llm(script) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": KEY,
            "PAUSE_WORKSPACE": os.path.realpath(workspace),
            "PAUSE_MARKER": str(marker),
        }
        argv = [sys.executable, "-c", PAUSED_CLI, "run", "--yes"]
        argv += ["--model", "anthropic/claude-test", "go"]
        devnull = subprocess.DEVNULL
        with subprocess.Popen(
            argv, cwd=workspace, env=env, stdin=devnull, stdout=devnull, stderr=devnull
        ) as process:
            deadline = time.monotonic() + KILL_TIMEOUT
            while not marker.exists():
                assert process.poll() is None, "the run ended before it wrote"
                assert time.monotonic() < deadline, "the write never started"
                time.sleep(0.05)
            os.kill(process.pid, signal.SIGKILL)
            process.wait()
    left = [p.name for p in workspace.rglob("*.tmp")]
    assert left, "the kill was expected to leave a temporary file"
    next_start(workspace)
    assert [p.name for p in workspace.rglob("*.tmp")] == []


def test_sigkill_during_write_leaves_no_temporary_file(workspace: Path, tmp_path: Path) -> None:
    call = {"name": "write", "input": {"file_path": "big.txt", "content": "x" * 100_000}}
    kill_mid_write(workspace, tmp_path, call)
    assert not (workspace / "big.txt").exists()


def test_sigkill_during_apply_patch_leaves_no_temporary_file(
    workspace: Path, tmp_path: Path
) -> None:
    patch = "*** Begin Patch\n*** Add File: pkg/new.py\n+x = 1\n*** End Patch\n"
    kill_mid_write(workspace, tmp_path, {"name": "apply_patch", "input": {"patch": patch}})
