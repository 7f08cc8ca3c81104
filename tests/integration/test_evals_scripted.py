"""``python -m evals --scripted`` end to end: every task's oracle, played by the fake model
through the real ``lsp-agent run`` (and the serve set through ``lsp-agent serve`` and the
scripted editor), satisfies its hidden checker — and the harness does fail a run that does not."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import attrs
import pytest

from evals.suite import Settings, run_one
from evals.task import say
from evals.tasks import TASKS
from lsp_agent.testing.fake_llm import running_fake_llm

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.e2e


def test_every_task_is_solved_by_its_oracle_through_the_real_agent(tmp_path: Path) -> None:
    out = tmp_path / "report"
    done = subprocess.run(
        [sys.executable, "-m", "evals", "--scripted", "--jobs", "2", "--out", str(out)],
        cwd=ROOT, capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-3000:]
    report = json.loads((out / "results.json").read_text())
    rows = report["results"]
    assert {r["task"] for r in rows if r["front"] == "run"} == {t.name for t in TASKS}
    assert {r["task"] for r in rows if r["front"] == "serve"} == {t.name for t in TASKS if t.serve}
    assert len({r["task"] for r in rows}) >= 20
    for row in rows:
        assert row["solved"], row
        assert row["error"] is None, row
        assert row["steps"] >= 1, row
        assert row["input_tokens"] > 0, row
        assert row["output_tokens"] > 0, row
        assert row["wall_s"] > 0, row
    assert {r["model"] for r in rows} == {"anthropic/eval-oracle", "openai/eval-oracle"}
    table = (out / "results.md").read_text()
    assert f"{len(rows)}/{len(rows)} solved" in table
    assert "| fix-mean | serve | yes |" in table
    has_chart = (out / "results.png").is_file()
    assert has_chart == ("No chart" not in table)


def test_a_run_that_does_not_do_the_task_is_not_solved(tmp_path: Path) -> None:
    task = next(task for task in TASKS if task.name == "fix-leap-year")
    lazy = attrs.evolve(task, oracle=lambda _root: [say("Done, the test passes now.")])
    result = run_one(
        lazy, "run", Settings(model=None, scripted=True, timeout=300, work=tmp_path), 1
    )
    assert not result.solved
    assert result.error is None
    assert "hidden check failed" in result.reason
    assert result.steps == 1


def test_a_script_not_played_to_its_end_is_an_error(tmp_path: Path) -> None:
    """The agent stopped before the oracle's last step: the trajectory was not followed."""
    task = next(task for task in TASKS if task.name == "answer-caller")
    extra = attrs.evolve(
        task, oracle=lambda root: [*task.oracle(root), say("an answer nobody asks for")]
    )
    result = run_one(
        extra, "run", Settings(model=None, scripted=True, timeout=300, work=tmp_path), 0
    )
    assert not result.solved
    assert result.error is not None
    assert "1 turns not played" in result.error


def test_a_model_behind_openai_base_url_is_measured(tmp_path: Path) -> None:
    """Not scripted: the model named by --model, reached through the caller's OPENAI_BASE_URL
    (here the fake, standing in for llama.cpp, Ollama or vLLM), and its usage reported."""
    task = next(task for task in TASKS if task.name == "answer-caller")
    out = tmp_path / "report"
    with running_fake_llm({"turns": list(task.oracle(tmp_path))}) as server:
        env = {
            **os.environ,
            "OPENAI_BASE_URL": server.openai_base_url,
            "OPENAI_API_KEY": "local-none",
        }
        done = subprocess.run(
            [sys.executable, "-m", "evals", "--model", "openai/qwen3-coder", "--tasks",
             "answer-caller", "--no-serve", "--out", str(out)],
            cwd=ROOT, env=env, capture_output=True, text=True, timeout=300,
        )  # fmt: skip
        served = [r for r in server.requests if r.body and r.body.get("tools")]
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    [row] = json.loads((out / "results.json").read_text())["results"]
    assert row["model"] == "openai/qwen3-coder"
    assert row["solved"], row
    assert row["steps"] == 2
    assert {r.body["model"] for r in served} == {"qwen3-coder"}
    assert row["input_tokens"] > 0
