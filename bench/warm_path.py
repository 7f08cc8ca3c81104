"""``lsp-agent run`` through the warm process (docs/configuration.md "Warm path"), measured like
the cold row (``run_path.ours``): the same task, a fresh client process each time.

The warm process is started by an uncounted first run (:func:`start_warm`), lives in the
bench's own runtime folder, and is stopped by its pid at the end (:func:`stop_warm`). The
process figures (CPU, peak RSS) are the client's and its run's child, not the warm process's.
"""

from __future__ import annotations

import os
import re
import signal
import time
from pathlib import Path

from bench.run_path import RunSample, ours
from lsp_agent.system.procfs import read_stat
from lsp_agent.testing.fake_llm import FakeLLMServer

_LISTENING = re.compile(r"daemon: pid (\d+) listening on ")


def runtime_dir(home: Path) -> Path:
    """Short (a socket's path is limited to 108 bytes) and private to this bench."""
    path = home / "rt"
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    return path


def warm_env(home: Path) -> dict[str, str]:
    return {"LSP_AGENT_NO_DAEMON": "0", "XDG_RUNTIME_DIR": str(runtime_dir(home))}


def warm(
    server: FakeLLMServer, workspace: Path, home: Path, *, provider: str, timeout: float = 120
) -> RunSample:
    """One counted warm run (the warm process must be up: :func:`start_warm`)."""
    return ours(
        server, workspace, home, provider=provider, timeout=timeout, extra_env=warm_env(home)
    )


def start_warm(server: FakeLLMServer, workspace: Path, home: Path, *, provider: str) -> None:
    """The uncounted first run, which starts the warm process and lets it load."""
    warm(server, workspace, home, provider=provider, timeout=300)


def warm_pids(home: Path) -> list[int]:
    folder = runtime_dir(home) / "lsp-agent"
    logs = "".join(p.read_text() for p in folder.glob("*.log")) if folder.is_dir() else ""
    return [int(pid) for pid in _LISTENING.findall(logs)]


def stop_warm(home: Path) -> None:
    """Stop the warm processes this bench started, by pid."""
    for pid in warm_pids(home):
        try:
            os.kill(pid, signal.SIGTERM)
        except ProcessLookupError:
            continue
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline and _running(pid):
            time.sleep(0.05)


def _running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie its new parent has not reaped yet does not count)."""
    stat = read_stat(pid)
    return stat is not None and stat.state not in ("Z", "X")
