"""The agent's own overhead per step, measured against the fake LLM server.

Runs ``lsp-agent run`` as a real process with a script of N ``read`` tool calls and a final
answer, then reads the fake server's request log:

- step overhead: from the end of one streamed response (last byte written by the server) to
  the arrival of the next model request — everything the agent does in between (parse the
  stream, record events, run the tool, rebuild the request, serialize it, send it);
- start → first request: from just before the process is spawned to the first model request;
- peak RSS of the agent process (from wait4's rusage).

Both clocks are CLOCK_MONOTONIC of this machine, so times from the two processes compare.

    python bench/step_overhead.py [--steps 50] [--runs 3] [--provider anthropic|openai]
"""

from __future__ import annotations

import argparse
import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import running_fake_llm

MODELS = {"anthropic": "anthropic/claude-bench", "openai": "openai/gpt-bench"}


def script(steps: int) -> list[dict[str, Any]]:
    call = {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]}
    return [call] * steps + [{"text": "done"}]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))
    return ordered[index]


def one_run(steps: int, provider: str) -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp, running_fake_llm(script(steps)) as server:
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "a.py").write_text("".join(f"line_{i} = {i}\n" for i in range(200)))
        env = {
            **os.environ,
            "HOME": str(root / "home"),
            "XDG_CONFIG_HOME": str(root / "home" / ".config"),
            "LSP_AGENT_DATA_DIR": str(root / "data"),
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "bench-key",
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "bench-key",
        }
        argv = [sys.executable, "-m", "lsp_agent", "run", "--max-steps", str(steps + 10)]
        argv += ["--model", MODELS[provider], "read a.py repeatedly"]
        started = time.monotonic()
        proc = subprocess.Popen(
            argv, cwd=workspace, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )
        _, status, rusage = os.wait4(proc.pid, 0)
        proc.returncode = os.waitstatus_to_exitcode(status)
        stderr = proc.stderr.read().decode() if proc.stderr else ""
        if proc.returncode != 0:
            raise SystemExit(f"lsp-agent exited {proc.returncode}:\n{stderr}")
        model = [r for r in server.requests if r.turn != "side"]
    if len(model) != steps + 1:
        raise SystemExit(f"expected {steps + 1} model requests, saw {len(model)}")
    gaps = []
    for before, after in itertools.pairwise(model):
        assert before.ended_monotonic is not None
        gaps.append((after.arrived_monotonic - before.ended_monotonic) * 1000)
    return {
        "gaps_ms": gaps,
        "first_request_ms": (model[0].arrived_monotonic - started) * 1000,
        "peak_rss_mb": rusage.ru_maxrss / 1024,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--steps", type=int, default=50)
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--provider", choices=sorted(MODELS), default="anthropic")
    args = parser.parse_args()
    runs = [one_run(args.steps, args.provider) for _ in range(args.runs)]
    gaps = [g for run in runs for g in run["gaps_ms"]]
    medians = [statistics.median(run["gaps_ms"]) for run in runs]
    starts = [run["first_request_ms"] for run in runs]
    rss = [run["peak_rss_mb"] for run in runs]
    cores = os.cpu_count()
    print(f"provider {args.provider}, {args.steps} read steps x {args.runs} runs, {cores} cores")
    median, p95 = statistics.median(gaps), percentile(gaps, 0.95)
    print(
        f"step overhead: median {median:.2f} ms, p95 {p95:.2f} ms, "
        f"min {min(gaps):.2f}, max {max(gaps):.2f} (per-run medians "
        + ", ".join(f"{m:.2f}" for m in medians)
        + ")"
    )
    print(
        f"start -> first request: median {statistics.median(starts):.0f} ms "
        f"(runs: {', '.join(f'{s:.0f}' for s in starts)})"
    )
    print(f"peak RSS: {max(rss):.1f} MB (runs: {', '.join(f'{r:.1f}' for r in rss)})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
