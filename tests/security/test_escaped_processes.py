"""Finding 7: processes that leave the command's process group (``setsid``, ``setsid -f``, a
double fork with ``setsid()``) outlived ``lsp-agent run`` and were invisible to recovery.

Now the sandbox's PID namespace ends them with the command; with the sandbox off, the
supervisor (a child subreaper) does. Both are checked through a real ``lsp-agent run``, and
after the agent itself is killed mid-command.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux /proc")

MODES = [
    pytest.param(
        "required",
        marks=pytest.mark.skipif(
            shutil.which("bwrap") is None, reason="bubblewrap is not installed (CI installs it)"
        ),
    ),
    "off",
]

ESCAPES = """
import os, subprocess, sys, time
subprocess.run(["setsid", "-f", "sleep", "{token}1"], check=True)
subprocess.Popen(["setsid", "sleep", "{token}2"])
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execvp("sleep", ["sleep", "{token}3"])
    os._exit(0)
time.sleep(0.3)
print("STARTED", flush=True)
time.sleep(float(sys.argv[1]))
"""


def running_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                argv = (entry / "cmdline").read_bytes().split(b"\0")
            except OSError:
                continue
            if any(arg.startswith(token.encode()) for arg in argv[1:2]):
                found.append(int(entry.name))
    return found


def wait_until(predicate: Any, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.05)
    return predicate()


def prepare(workspace: Path, home: Path, mode: str, token: str) -> None:
    (workspace / "probe.py").write_text(ESCAPES.format(token=token))
    config = home / ".config" / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"sandbox": mode}))


def script(seconds: float) -> list[dict[str, Any]]:
    command = {"command": f"python3 probe.py {seconds}", "timeout": 600_000}
    return [{"tool_calls": [{"name": "bash", "input": command}]}, {"text": "done"}]


@pytest.mark.parametrize("mode", MODES)
def test_nothing_outlives_a_run(workspace: Path, isolated_home: Path, mode: str) -> None:
    token = f"7{len(mode)}31"
    prepare(workspace, isolated_home, mode, token)
    with running_fake_llm(script(0)) as server:
        result = run_cli(
            "run",
            "--yes",
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env={"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "k"},
        )
        sent = json.dumps([r.body for r in server.requests])

    assert result.returncode == 0, result.stderr
    assert "STARTED" in sent
    assert running_with(token) == []


@pytest.mark.parametrize("mode", MODES)
def test_nothing_outlives_an_agent_killed_mid_command_and_recovery_closes_it(
    workspace: Path, isolated_home: Path, mode: str
) -> None:
    token = f"6{len(mode)}42"
    prepare(workspace, isolated_home, mode, token)
    with running_fake_llm(script(1000)) as server:
        agent = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent",
                "run",
                "--yes",
                "--model",
                "anthropic/claude-test",
                "go",
            ],
            cwd=workspace,
            env={
                **os.environ,
                "ANTHROPIC_BASE_URL": server.anthropic_base_url,
                "ANTHROPIC_API_KEY": "k",
            },
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            assert wait_until(lambda: len(running_with(token)) >= 3, 60), "never started"
        finally:
            agent.send_signal(signal.SIGKILL)  # no cleanup code of the agent runs
            agent.wait()
        assert wait_until(lambda: running_with(token) == [], 15), running_with(token)

    listing = run_cli("sessions", "list", "--json", cwd=workspace)  # opening the store recovers
    (session,) = json.loads(listing.stdout)["sessions"]
    history = run_cli("sessions", "history", session["sessionId"], "--json", cwd=workspace)
    types = [event["type"] for event in json.loads(history.stdout)["events"]]
    assert types.count("process_started") == types.count("process_ended") == 1
