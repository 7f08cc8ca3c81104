"""Claude Code, the other agent compared against: installed from npm into a cache folder, one
``claude -p`` run of the task.

It talks to the fake LLM as its Anthropic endpoint (``ANTHROPIC_BASE_URL``) with its network
side jobs off (``CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC``: no update check, telemetry or
error reports), so it talks only to loopback. The script uses its own tool names, ``Read`` and
``Edit``. ``--dangerously-skip-permissions`` answers the edit's ask as ``--yes`` does ours; as
root Claude Code refuses it unless ``IS_SANDBOX=1`` says the machine is a sandbox.
"""

from __future__ import annotations

import os
from pathlib import Path

from bench import npm_install
from bench.measured import run_measured
from bench.run_path import RunSample, check_edited
from bench.turns import turn_times
from bench.workload import PROMPT, isolated_env, reset_hello, task_script
from lsp_agent.testing.fake_llm import FakeLLMServer

VERSION = "2.1.332"
PACKAGE = f"@anthropic-ai/claude-code@{VERSION}"
MODEL = "claude-bench"
NAME = f"Claude Code {VERSION}"


def install(cache: Path, timeout: float = 600) -> Path | str:
    """The ``claude`` binary, installed on first use; or why it is not available."""
    return npm_install.install(cache / f"claude-code-{VERSION}", PACKAGE, "claude", timeout)


def one_run(
    binary: Path, server: FakeLLMServer, workspace: Path, home: Path, timeout: float = 180
) -> RunSample:
    reset_hello(workspace)
    server.set_script(task_script(workspace / "hello.py", claude_code=True))
    server.clear_log()
    env = isolated_env(
        home,
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        ANTHROPIC_API_KEY="bench-key",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        PWD=str(workspace),
    )
    if os.geteuid() == 0:
        env["IS_SANDBOX"] = "1"
    argv = [str(binary), "-p", PROMPT, "--model", MODEL, "--dangerously-skip-permissions"]
    process = run_measured(argv, cwd=workspace, env=env, out=home / "measured.json",
                           timeout=timeout)  # fmt: skip
    if process.returncode != 0:
        raise RuntimeError(f"claude exited {process.returncode}: {process.stderr_tail}")
    check_edited(workspace)
    return RunSample(turn=turn_times(server.requests, process.started), process=process)
