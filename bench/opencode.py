"""opencode, the agent compared against: installed from npm into a cache folder, one run.

It is pointed at the fake LLM as an OpenAI-compatible provider (the ``@ai-sdk/openai-compatible``
adapter it bundles) with a model id that gets its ``edit`` tool, and its network side jobs
(update checks, the models catalog, LSP downloads, default plugins) are switched off so that
it talks only to loopback.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import npm_install
from bench.measured import run_measured
from bench.run_path import RunSample, check_edited
from bench.turns import turn_times
from bench.workload import PROMPT, isolated_env, reset_hello, task_script
from lsp_agent.testing.fake_llm import FakeLLMServer

VERSION = "1.18.33"
PACKAGE = f"opencode-ai@{VERSION}"
MODEL = "bench/bench-model"


def install(cache: Path, timeout: float = 600) -> Path | str:
    """The opencode binary, installed on first use; or why it is not available."""
    return npm_install.install(cache / f"opencode-{VERSION}", PACKAGE, "opencode", timeout)


def config(server: FakeLLMServer) -> dict[str, object]:
    return {
        "$schema": "https://opencode.ai/config.json",
        "model": MODEL,
        "small_model": MODEL,
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "bench": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "bench",
                "options": {"baseURL": server.openai_base_url, "apiKey": "bench-key"},
                "models": {"bench-model": {"name": "bench model", "tool_call": True}},
            }
        },
    }


def one_run(
    binary: Path, server: FakeLLMServer, workspace: Path, home: Path, timeout: float = 180
) -> RunSample:
    reset_hello(workspace)
    server.set_script(task_script(workspace / "hello.py", opencode=True))
    server.clear_log()
    config_file = home / "opencode-bench.json"
    home.mkdir(parents=True, exist_ok=True)
    config_file.write_text(json.dumps(config(server)))
    env = isolated_env(
        home,
        OPENCODE_CONFIG=str(config_file),
        OPENCODE_DISABLE_AUTOUPDATE="1",
        OPENCODE_DISABLE_MODELS_FETCH="1",
        OPENCODE_DISABLE_LSP_DOWNLOAD="1",
        OPENCODE_DISABLE_DEFAULT_PLUGINS="1",
        OPENCODE_DISABLE_SHARE="1",
        PWD=str(workspace),
    )
    argv = [str(binary), "run", "--model", MODEL, PROMPT]
    process = run_measured(argv, cwd=workspace, env=env, out=home / "measured.json",
                           timeout=timeout)  # fmt: skip
    if process.returncode != 0:
        raise RuntimeError(f"opencode exited {process.returncode}: {process.stderr_tail}")
    check_edited(workspace)
    return RunSample(turn=turn_times(server.requests, process.started), process=process)
