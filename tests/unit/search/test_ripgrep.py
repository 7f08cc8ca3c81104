"""Running rg: early stop, timeouts, failures, and how output records are cut."""

from __future__ import annotations

import asyncio
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from lsp_agent.search.ripgrep import (
    MAX_RECORD_BYTES,
    RgDone,
    RgFailure,
    find_rg,
    run_rg,
)


def script(path: Path, body: str) -> str:
    path.write_text("#!/bin/sh\n" + body)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return str(path)


def collector() -> tuple[list[bytes], Callable[[bytes], bool]]:
    seen: list[bytes] = []

    def take(record: bytes) -> bool:
        seen.append(record)
        return True

    return seen, take


def alive(pid: int) -> bool:
    """Running, not a zombie (a container's init may never reap an orphan)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


def test_rg_is_found_beside_the_interpreter_or_on_path() -> None:
    found = find_rg()

    assert found is not None
    assert os.access(found, os.X_OK)


async def test_records_are_fed_until_the_caller_has_enough(ws: Path) -> None:
    for n in range(500):
        (ws / f"f{n}.txt").write_text("x\n")
    seen: list[bytes] = []

    def take(record: bytes) -> bool:
        seen.append(record)
        return len(seen) < 3

    result = await run_rg(
        ["--files", "--null"], cwd=str(ws), target=str(ws), on_record=take, separator=b"\0"
    )

    assert result == RgDone(stopped=True)
    assert len(seen) == 3
    assert all(record.startswith(f"{ws}/f".encode()) for record in seen)


async def test_a_complete_run_is_not_stopped(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")
    seen, take = collector()

    result = await run_rg(["--files"], cwd=str(ws), target=str(ws), on_record=take)

    assert result == RgDone(stopped=False)
    assert seen == [f"{ws}/a.txt".encode()]


async def test_long_records_keep_only_their_start(ws: Path) -> None:
    (ws / "a.txt").write_text("y" * (3 * MAX_RECORD_BYTES) + "\nshort\n")
    seen, take = collector()

    await run_rg(
        ["--no-filename", "--regexp=y|short"],
        cwd=str(ws),
        target=str(ws / "a.txt"),
        on_record=take,
    )

    assert seen == [b"y" * MAX_RECORD_BYTES, b"short"]


async def test_a_timeout_kills_the_whole_process_group(tmp_path: Path) -> None:
    pid_file = tmp_path / "child.pid"
    fake = script(tmp_path / "slow-rg", f"sleep 120 &\necho $! > {pid_file}\nwait\n")
    started = time.monotonic()

    result = await run_rg(
        [], cwd=str(tmp_path), target=".", on_record=lambda r: True, timeout=0.5, executable=fake
    )

    assert isinstance(result, RgFailure)
    assert result.message.startswith("search timed out after 0.5 s")
    assert time.monotonic() - started < 120  # the sleep never completed
    child = int(pid_file.read_text())
    for _ in range(100):
        if not alive(child):
            break
        await asyncio.sleep(0.01)
    assert not alive(child)


async def test_exit_status_2_reports_the_first_lines_of_stderr(tmp_path: Path) -> None:
    lines = "".join(f"echo problem {n} >&2\n" for n in range(20))
    fake = script(tmp_path / "bad-rg", lines + "exit 2\n")

    result = await run_rg(
        [], cwd=str(tmp_path), target=".", on_record=lambda r: True, executable=fake
    )

    assert result == RgFailure(message="\n".join(f"problem {n}" for n in range(10)))


async def test_exit_status_1_means_no_matches(ws: Path) -> None:
    (ws / "a.txt").write_text("x\n")

    result = await run_rg(
        ["--regexp=absent"], cwd=str(ws), target=str(ws), on_record=lambda r: True
    )

    assert result == RgDone(stopped=False)


async def test_the_users_ripgrep_config_is_ignored(
    ws: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    config = tmp_path / "ripgreprc"
    config.write_text("--files-without-match\n--glob=!*.txt\n")
    monkeypatch.setenv("RIPGREP_CONFIG_PATH", str(config))
    (ws / "a.txt").write_text("needle\n")
    seen, take = collector()

    await run_rg(
        ["--regexp=needle", "--with-filename"],
        cwd=str(ws),
        target=str(ws),
        on_record=take,
    )

    assert seen == [f"{ws}/a.txt:needle".encode()]


async def test_an_unrunnable_rg_is_a_failure(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-rg")

    result = await run_rg(
        [], cwd=str(tmp_path), target=".", on_record=lambda r: True, executable=missing
    )

    assert isinstance(result, RgFailure)
    assert result.message.startswith(f"cannot run {missing}: ")
