"""The warm path's tests: a private runtime folder per test (short: a socket's path is limited
to 108 bytes), the warm path turned back on, and every warm process a test started stopped
by its pid afterwards."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from lsp_agent.system.procfs import read_stat

TIMEOUT = 120
LISTENING = re.compile(r"daemon: pid (\d+) listening on ")


@pytest.fixture
def runtime_dir() -> Iterator[Path]:
    path = Path(tempfile.mkdtemp(prefix="lad-", dir="/tmp"))
    path.chmod(0o700)
    try:
        yield path
    finally:
        for pid in warm_pids(path):
            stop(pid)
        shutil.rmtree(path, ignore_errors=True)


def folder(runtime_dir: Path) -> Path:
    return runtime_dir / "lsp-agent"


def logs(runtime_dir: Path) -> str:
    return "".join(p.read_text() for p in sorted(folder(runtime_dir).glob("*.log")))


def warm_pids(runtime_dir: Path) -> list[int]:
    """Every warm process started under ``runtime_dir``, in start order (from the logs)."""
    if not folder(runtime_dir).is_dir():
        return []
    return [int(pid) for pid in LISTENING.findall(logs(runtime_dir))]


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet does not count)."""
    stat = read_stat(pid)
    return stat is not None and stat.state not in ("Z", "X")


def stop(pid: int) -> None:
    if not running(pid):
        return
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + 10
    while running(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    if running(pid):
        os.kill(pid, signal.SIGKILL)


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def warm_env(runtime_dir: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "LSP_AGENT_NO_DAEMON"}
    env["XDG_RUNTIME_DIR"] = str(runtime_dir)
    env.update(extra)
    return env


def lsp_agent(
    *args: str, cwd: Path, env: dict[str, str], stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env=env,
        input=stdin if stdin is not None else "",
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        check=False,
    )
