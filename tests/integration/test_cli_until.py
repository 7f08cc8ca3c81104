"""``lsp-agent run --until CMD``: the agent works until CMD passes, each attempt visible, bounded
by attempts; Ctrl-C during a check still ends the run."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-until-SECRET-7788"
MODEL = ("--model", "anthropic/claude-test")
CHECK = "cat state.txt; grep -q green state.txt"


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "state.txt").write_text("red: test_parse failed\n")
    return workspace


def until_events(workspace: Path, session_id: str) -> list[dict[str, Any]]:
    result = run_cli("sessions", "history", session_id, "--json", cwd=workspace)
    assert result.returncode == 0, result.stderr
    data = json.loads(result.stdout)
    events = data["events"] if isinstance(data, dict) else data
    return [e["data"] for e in events if e["type"] == "until_checked"]


def session_of(stderr: str) -> str:
    last = stderr.strip().splitlines()[-1]
    assert last.startswith("session "), stderr
    return last.split()[1]


def test_until_ends_when_the_command_passes_on_the_second_attempt(workspace: Path) -> None:
    script = [
        {"text": "I looked; it should be fine."},
        {
            "tool_calls": [
                {"name": "write", "input": {"file_path": "state.txt", "content": "green\n"}}
            ]
        },
        {"text": "Fixed it."},
    ]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", *MODEL, "--yes", "--until", CHECK, "make it pass",
            cwd=workspace, env=provider_env(server, KEY),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    assert f"attempt 1/5: {CHECK} exited 1; its output goes to the agent" in lines
    assert f"attempt 2/5: {CHECK} exited 0" in lines
    assert (workspace / "state.txt").read_text() == "green\n"
    # The second turn's prompt is the failure: the command and the end of its output.
    assert len(bodies) == 3
    second = bodies[1]["messages"][-1]["content"]
    text = "\n".join(block["text"] for block in second if block.get("type") == "text")
    assert f"`{CHECK}` still fails" in text
    assert "attempt 1 of 5" in text
    assert "red: test_parse failed" in text
    checks = until_events(workspace, session_of(result.stderr))
    assert [(c["attempt"], c["verdict"], c.get("exitCode")) for c in checks] == [
        (1, "retry", 1),
        (2, "passed", 0),
    ]


def test_until_stops_at_the_bound_with_exit_5_and_says_so(workspace: Path) -> None:
    script = [{"text": "Nothing to do."}, {"text": "Still nothing."}, {"text": "never sent"}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", *MODEL, "--until", CHECK, "--max-attempts", "2", "make it pass",
            cwd=workspace, env=provider_env(server, KEY),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 5, result.stderr
    assert len(bodies) == 2
    assert f"attempt 2/2: {CHECK} exited 1; no attempts left" in result.stderr
    assert f"stopped: {CHECK} still fails after 2 attempts" in result.stderr
    checks = until_events(workspace, session_of(result.stderr))
    assert [c["verdict"] for c in checks] == ["retry", "attempts"]


def test_until_options_without_until_are_bad_usage(workspace: Path) -> None:
    result = run_cli("run", *MODEL, "--max-attempts", "3", "hi", cwd=workspace)
    assert result.returncode == 2
    assert "go with --until" in result.stderr
    result = run_cli("run", *MODEL, "--until", "true", "--max-attempts", "0", "hi", cwd=workspace)
    assert result.returncode == 2
    assert "--max-attempts must be at least 1" in result.stderr


def test_ctrl_c_during_a_check_interrupts_the_run(workspace: Path) -> None:
    check = "touch started; sleep 60"
    with running_fake_llm([{"text": "done"}]) as server:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "run", *MODEL, "--until", check, "go"],
            cwd=workspace,
            env={**os.environ, **provider_env(server, KEY)},
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        try:
            deadline = time.monotonic() + 60
            while not (workspace / "started").exists():
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, "the check never started"
                time.sleep(0.05)
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, err
    assert "interrupted" in err
    assert "Traceback" not in err


def test_until_stops_once_the_run_has_cost_max_cost(workspace: Path) -> None:
    script = [{"text": "Nothing to do."}, {"text": "never sent"}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", "--model", "anthropic/claude-sonnet-4-5", "--until", CHECK,
            "--max-cost", "0.000001", "make it pass",
            cwd=workspace, env=provider_env(server, KEY),
        )  # fmt: skip
        bodies = server.model_bodies()
    assert result.returncode == 5, result.stderr
    assert len(bodies) == 1
    assert f"attempt 1/5: {CHECK} exited 1; the cost bound is reached" in result.stderr
    assert f"stopped: {CHECK} still fails; the cost bound was reached" in result.stderr
