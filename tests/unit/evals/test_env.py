"""The environment a task's agent runs in."""

from __future__ import annotations

from pathlib import Path

from evals.env import agent_env


def test_a_task_agent_runs_cold_so_no_warm_process_outlives_its_home(tmp_path: Path) -> None:
    env = agent_env(tmp_path, config={})
    assert env["LSP_AGENT_NO_DAEMON"] == "1"
    assert env["HOME"] == str(tmp_path)
