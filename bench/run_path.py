"""One ``lsp-agent run`` (a fresh process) doing the scripted task, measured.

``--yes`` answers the edit's permission ask, as a user at the terminal would.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

import attrs

from bench.measured import Measured, run_measured
from bench.turns import TurnTimes, turn_times
from bench.workload import PROMPT, isolated_env, reset_hello, task_script
from lsp_agent.testing.fake_llm import FakeLLMServer

MODELS = {"anthropic": "anthropic/claude-bench", "openai": "openai/gpt-bench"}


@attrs.frozen(kw_only=True)
class RunSample:
    """One counted run of one agent: its turn's times and its process figures."""

    turn: TurnTimes
    process: Measured


def check_edited(workspace: Path) -> None:
    text = (workspace / "hello.py").read_text()
    if "Goodbye" not in text or "Hello" in text:
        raise RuntimeError(f"the task did not edit hello.py: {text!r}")


def ours(
    server: FakeLLMServer,
    workspace: Path,
    home: Path,
    *,
    provider: str,
    timeout: float = 120,
    extra_env: Mapping[str, str] | None = None,
) -> RunSample:
    reset_hello(workspace)
    server.set_script(task_script(workspace / "hello.py"))
    server.clear_log()
    env = isolated_env(
        home,
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        ANTHROPIC_API_KEY="bench-key",
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="bench-key",
        PWD=str(workspace),
        **(extra_env or {}),
    )
    argv = [sys.executable, "-m", "lsp_agent", "run", "--yes", "--model", MODELS[provider], PROMPT]
    process = run_measured(argv, cwd=workspace, env=env, out=home / "measured.json",
                           timeout=timeout)  # fmt: skip
    if process.returncode != 0:
        raise RuntimeError(f"lsp-agent run exited {process.returncode}: {process.stderr_tail}")
    check_edited(workspace)
    return RunSample(turn=turn_times(server.requests, process.started), process=process)
