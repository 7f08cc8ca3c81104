"""The standing fault and load suite: provider faults through the fake LLM, resource limits,
concurrent sessions. Each test ends in a completed turn or a clear error, never a hang.

``Agent`` runs ``lsp-agent run`` as a real process against the fake LLM, with tiny retry
waits and a short stream idle timeout from the user config file, so the suite stays fast.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.provider_env import provider_env

KEY = "sk-reliability-test-key"
MODELS = {"anthropic": "anthropic/claude-test", "openai": "openai/gpt-test"}
IDLE_TIMEOUT = 1.0
"""The stream idle timeout the suite runs with (the default is 300 s)."""
RUN_TIMEOUT = 60.0
"""No run of the suite gets near this: reaching it means the agent hung."""


def write_user_config(home: Path, config: dict[str, Any]) -> None:
    folder = home / ".config" / "lsp-agent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps(config))


def fast_config(**retry: Any) -> dict[str, Any]:
    """Tiny retry waits, a short idle timeout, titles off (one request less to think about)."""
    return {
        "retry": {
            "max_retries": 2,
            "initial_delay": 0.01,
            "stream_idle_timeout": IDLE_TIMEOUT,
            **retry,
        },
        "title": {"enabled": False},
        "snapshots": False,
    }


_MEASURED = """
import atexit, resource, sys
report = sys.argv.pop(1)
peak = lambda: str(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
atexit.register(lambda: open(report, "w").write(peak()))
from lsp_agent.cli import main
raise SystemExit(main())
"""
"""``lsp-agent`` that writes its own peak RSS (KiB, its children not included) to argv[1]."""


@attrs.define
class Agent:
    """``lsp-agent run`` in ``workspace`` against one fake LLM server."""

    workspace: Path
    home: Path

    def configure(self, **retry: Any) -> None:
        write_user_config(self.home, fast_config(**retry))

    def run(
        self, server: FakeLLMServer, provider: str, *args: str, prompt: str = "go"
    ) -> subprocess.CompletedProcess[str]:
        return run_cli(
            "run",
            "--yes",
            "--model",
            MODELS[provider],
            *args,
            prompt,
            cwd=self.workspace,
            env=provider_env(server, KEY, provider),
            timeout=RUN_TIMEOUT,
        )

    def run_measured(
        self, server: FakeLLMServer, provider: str, *args: str, prompt: str = "go"
    ) -> tuple[subprocess.CompletedProcess[str], int]:
        """``run``, and the agent process's peak resident memory in KiB."""
        report = self.workspace.parent / "peak-rss"
        command = [sys.executable, "-c", _MEASURED, str(report), "run", "--yes", "--model"]
        result = subprocess.run(
            [*command, MODELS[provider], *args, prompt],
            cwd=self.workspace,
            env={**os.environ, **provider_env(server, KEY, provider)},
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT,
            check=False,
        )
        return result, int(report.read_text())

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=self.workspace, timeout=RUN_TIMEOUT)

    def session(self, run: subprocess.CompletedProcess[str]) -> dict[str, Any]:
        """``sessions show --json`` of the session ``run`` named in its summary line."""
        found = re.search(r"^session (ses_\w+)", run.stderr, re.MULTILINE)
        assert found is not None, run.stderr
        shown = self.cli("sessions", "show", found.group(1), "--json")
        assert shown.returncode == 0, shown.stderr
        return dict(json.loads(shown.stdout))


@pytest.fixture
def agent(tmp_path: Path, isolated_home: Path) -> Agent:
    workspace = (tmp_path / "ws").resolve()
    workspace.mkdir()
    created = Agent(workspace=workspace, home=isolated_home)
    created.configure()
    return created


def tool_calls(session: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in session["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    ]


def statuses(session: dict[str, Any]) -> list[tuple[str, str]]:
    return [(m["role"], m["status"]) for m in session["messages"]]


def no_traceback(stderr: str) -> None:
    assert "Traceback" not in stderr, stderr
    assert len(stderr.strip().splitlines()) <= 6, stderr
