"""``lsp-agent review`` as a user runs it (issue 37 §1): one ``path:line: severity: message``
line per finding on stdout, the summary on stderr, exit 1 for an error finding, 0 for
warnings alone, 2 when the review cannot run; ``--staged`` and ``--base`` pick the diff."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.support.hostile_repo import git
from tests.support.provider_env import provider_env

KEY = "sk-cli-review-SECRET-1234"
MODEL = {"LSP_AGENT_MODEL": "anthropic/claude-test"}


def repository(ws: Path) -> None:
    (ws / "src").mkdir()
    (ws / "src" / "stats.py").write_text("def mean(v):\n    return sum(v) / len(v)\n")
    git(ws, "init", "-q")
    git(ws, "add", "-A")
    git(ws, "commit", "-qm", "first")
    git(ws, "branch", "base-line")
    (ws / "src" / "stats.py").write_text("def mean(v):\n    return sum(v) / (len(v) - 1)\n")


def report(severity: str, message: str, line: int = 2) -> dict[str, Any]:
    call = {"path": "src/stats.py", "line": line, "severity": severity, "message": message}
    return {"tool_calls": [{"name": "report_finding", "input": call}]}


def test_an_error_finding_is_printed_as_a_compiler_line_and_exits_1(workspace: Path) -> None:
    repository(workspace)
    with open(workspace / "src" / "stats.py", "a", encoding="utf-8") as f:
        f.write(f"API_KEY = '{KEY}'  # pasted by mistake\n")
    script = [report("error", "off by one:\n divides by len - 1"), {"text": "One bug."}]
    with running_fake_llm(script) as server:
        result = run_cli("review", cwd=workspace, env={**provider_env(server, KEY), **MODEL})
        sent = str(server.model_bodies()[0]["messages"])
    assert result.returncode == 1, result.stderr
    assert result.stdout == "src/stats.py:2: error: off by one: divides by len - 1\n"
    assert "One bug." in result.stderr
    assert "+    return sum(v) / (len(v) - 1)" in sent
    assert KEY not in sent  # the secret filter masks the diff too
    assert "[redacted:" in sent


def test_warnings_alone_exit_0_and_json_lists_them(workspace: Path) -> None:
    repository(workspace)
    script = [report("warning", "an empty list divides by zero", 1), {"text": "Fine otherwise."}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "review",
            "--base",
            "base-line",
            "--json",
            cwd=workspace,
            env={**provider_env(server, KEY), **MODEL},
        )
    assert result.returncode == 0, result.stderr
    [finding] = json.loads(result.stdout)
    assert finding["path"] == "src/stats.py"
    assert finding["line"] == 1
    assert finding["severity"] == "warning"


def test_nothing_staged_is_no_finding_and_no_model_call(workspace: Path) -> None:
    repository(workspace)
    with running_fake_llm([]) as server:
        result = run_cli(
            "review", "--staged", cwd=workspace, env={**provider_env(server, KEY), **MODEL}
        )
        assert server.model_bodies() == []
    assert result.returncode == 0, result.stderr
    assert result.stdout == ""
    assert "No changes to review (the staged changes)." in result.stderr


def test_a_review_that_cannot_run_exits_2(workspace: Path) -> None:
    with running_fake_llm([]) as server:
        env = {**provider_env(server, KEY), **MODEL}
        outside = run_cli("review", cwd=workspace, env=env)
        repository(workspace)
        unknown = run_cli("review", "--base", "nope", cwd=workspace, env=env)
        both = run_cli("review", "--staged", "--base", "x", cwd=workspace, env=env)
    assert outside.returncode == 2
    assert "not in a git repository" in outside.stderr
    assert unknown.returncode == 2
    assert "no such revision: nope" in unknown.stderr
    assert both.returncode == 2  # argparse: not allowed together
