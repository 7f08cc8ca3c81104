"""One ``lsp-agent run`` (a fresh process) doing the scripted task, measured.

``--yes`` answers the edit's permission ask, as a user at the terminal would.
"""

from __future__ import annotations

import sys
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

    @property
    def exit_ms(self) -> float:
        """Last answer written → the process gone (what it does after its work)."""
        ended = self.process.started + self.process.wall_s
        return (ended - self.turn.last_answer_monotonic) * 1000


def check_edited(workspace: Path) -> None:
    text = (workspace / "hello.py").read_text()
    if "Goodbye" not in text or "Hello" in text:
        raise RuntimeError(f"the task did not edit hello.py: {text!r}")


def warm_env(home: Path, *, warm: bool) -> dict[str, str]:
    """The warm path on (its socket in the run's own runtime folder) or off."""
    if not warm:
        return {"LSP_AGENT_NO_DAEMON": "1"}
    runtime = home / "run"
    runtime.mkdir(parents=True, exist_ok=True, mode=0o700)
    return {"XDG_RUNTIME_DIR": str(runtime), "LSP_AGENT_NO_DAEMON": "0"}


def ours(
    server: FakeLLMServer,
    workspace: Path,
    home: Path,
    *,
    provider: str,
    warm: bool = False,
    timeout: float = 120,
) -> RunSample:
    """One run; ``warm``: through the warm process (issue 38's daemon), else in its own
    process from a cold start (the warm path switched off)."""
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
        **warm_env(home, warm=warm),
    )
    argv = [sys.executable, "-m", "lsp_agent", "run", "--yes", "--model", MODELS[provider], PROMPT]
    process = run_measured(argv, cwd=workspace, env=env, out=home / "measured.json",
                           timeout=timeout)  # fmt: skip
    if process.returncode != 0:
        raise RuntimeError(f"lsp-agent run exited {process.returncode}: {process.stderr_tail}")
    check_edited(workspace)
    return RunSample(turn=turn_times(server.requests, process.started), process=process)
