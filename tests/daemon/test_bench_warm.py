"""The bench's warm row (bench/warm_path.py): the counted run is the warm process's, does the
task, and the warm process is stopped afterwards; the cold row stays cold."""

from __future__ import annotations

from pathlib import Path

from bench.run_path import ours
from bench.warm_path import start_warm, stop_warm, warm, warm_pids
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.daemon.conftest import logs, running


def test_the_warm_row_runs_in_the_warm_process_and_the_cold_row_does_not(tmp_path: Path) -> None:
    home, workspace = tmp_path / "h", tmp_path / "ws"
    workspace.mkdir()
    with running_fake_llm() as server:
        try:
            cold = ours(server, workspace, home, provider="anthropic")
            assert warm_pids(home) == []  # the cold row left no warm process
            start_warm(server, workspace, home, provider="anthropic")
            sample = warm(server, workspace, home, provider="anthropic")
            (pid,) = warm_pids(home)
            assert running(pid)
        finally:
            stop_warm(home)
    assert sample.turn.requests == cold.turn.requests == 3
    assert logs(home / "rt").count(" exited 0") == 2  # the start and the counted run
    assert not running(pid)
