"""Long sessions: measured context, compaction, overflow recovery (fake server usage is
proportional to the request size: about one token per four bytes)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-compaction-test"
SECTIONS = [
    "## Objective",
    "## Important Details",
    "## Work State",
    "## Next Move",
    "## Relevant Files",
]
HIDE = {
    p: "deny"
    for p in (
        "edit",
        "bash",
        "webfetch",
        "todowrite",
        "question",
        "skill",
        "task",
        "list",
        "glob",
        "grep",
    )
}


@pytest.fixture
def workspace(workspace: Path) -> Path:
    for name in ("big1.txt", "big2.txt", "big3.txt", "big4.txt", "big5.txt"):
        (workspace / name).write_text(
            "".join(f"{name} line {i} with some words to fill it\n" for i in range(110))
        )
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(
        json.dumps(
            {
                # room for the build prompt (about 2,000 tokens) besides the tools and the files
                "providers": {
                    "anthropic": {
                        "models": {"claude-test": {"context_window": 8000, "max_output": 1000}}
                    }
                },
                "compaction": {"keep_recent_tokens": 1200},
                "title": {"enabled": False},
                "permission": HIDE,
            }
        )
    )
    return workspace


def read(name: str) -> dict[str, Any]:
    return {"tool_calls": [{"name": "read", "input": {"file_path": name}}]}


def calls(server: FakeLLMServer) -> list[Any]:
    """Model calls only (not the token counter)."""
    return [r for r in server.requests if r.path.endswith("/messages")]


def summary_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in calls(server) if not r.body.get("tools")]


def model_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [r.body for r in calls(server) if r.body.get("tools")]


def session_id(cwd: Path) -> str:
    return str(
        json.loads(cli("sessions", "list", "--json", cwd=cwd, env={}).stdout)["sessions"][0][
            "sessionId"
        ]
    )


def test_a_long_turn_compacts_and_keeps_going(workspace: Path) -> None:
    script = [
        read("big1.txt"),
        read("big2.txt"),
        read("big3.txt"),
        read("big4.txt"),
        {"text": "done"},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--json",
            "--model",
            "anthropic/claude-test",
            "read them all",
            cwd=workspace,
            env=provider_env(server, KEY),
        )
        assert result.returncode == 0, result.stderr
        summaries = summary_requests(server)
        models = model_requests(server)
        counted = [r for r in server.requests if r.path.endswith("/count_tokens")]
    assert summaries, "no summary request was made"
    assert counted, "the provider's token counter was never asked near the limit"
    prompt = json.dumps(summaries[0]["messages"])
    for heading in SECTIONS:
        assert heading in prompt
    with_checkpoint = [
        b for b in models if "<conversation-checkpoint>" in json.dumps(b["messages"])
    ]
    assert with_checkpoint
    sizes = [len(json.dumps(b)) for b in models]
    first_after = models.index(with_checkpoint[0])
    assert sizes[first_after] < max(sizes[:first_after])
    # the newest messages stay verbatim: the last read's numbered lines are still there
    assert "big4.txt line 1 " in json.dumps(models[-1]["messages"])
    updates = [json.loads(line)["update"] for line in result.stdout.splitlines()]
    phases = [u["phase"] for u in updates if u["sessionUpdate"] == "compaction_update"]
    assert phases[:2] == ["started", "ended"]
    sid = session_id(workspace)
    history = json.loads(cli("sessions", "history", sid, "--json", cwd=workspace, env={}).stdout)
    outputs = json.dumps([e["data"] for e in history["events"] if e["type"] == "tool_call_updated"])
    assert "big1.txt line 1 " in outputs  # nothing deleted


def test_a_second_compaction_updates_the_first_summary(workspace: Path) -> None:
    script = [read(f"big{i}.txt") for i in (1, 2, 3, 4, 5, 1, 2, 3)] + [{"text": "done"}]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "read",
            cwd=workspace,
            env=provider_env(server, KEY),
        )
        assert result.returncode == 0, result.stderr
        summaries = summary_requests(server)
    assert len(summaries) >= 2
    first_text = "Test title"  # what the fake server answers to requests without tools
    assert "<previous-summary>" not in json.dumps(summaries[0])
    assert f"<previous-summary>\\n{first_text}" in json.dumps(summaries[1])


def test_an_overflow_compacts_once_and_retries(workspace: Path) -> None:
    script = [
        read("big1.txt"),
        read("big2.txt"),
        {"error": "context_overflow"},
        {"text": "recovered"},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env=provider_env(server, KEY),
        )
        assert result.returncode == 0, result.stderr
        assert "recovered" in result.stdout
        assert len(summary_requests(server)) == 1
        statuses = [r.status for r in calls(server) if r.body.get("tools")]
    assert statuses.count(400) == 1


def test_a_second_overflow_fails_clearly(workspace: Path) -> None:
    script = [
        read("big1.txt"),
        read("big2.txt"),
        {"error": "context_overflow", "times": 2, "then": {"text": "never"}},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env=provider_env(server, KEY),
        )
    assert result.returncode == 1
    assert "still too long" in result.stderr


def test_sessions_compact_compacts_an_idle_session(workspace: Path) -> None:
    script = [read("big1.txt"), {"text": "one"}, read("big2.txt"), {"text": "two"}]
    with running_fake_llm(script) as server:
        env = provider_env(server, KEY)
        assert (
            cli("run", "--model", "anthropic/claude-test", "a", cwd=workspace, env=env).returncode
            == 0
        )
        sid = session_id(workspace)
        assert (
            cli(
                "run",
                "--session",
                sid,
                "--model",
                "anthropic/claude-test",
                "b",
                cwd=workspace,
                env=env,
            ).returncode
            == 0
        )
        before = len(summary_requests(server))
        result = cli("sessions", "compact", sid, cwd=workspace, env=env)
        assert result.returncode == 0, result.stderr
        assert "compacted" in result.stdout
        assert len(summary_requests(server)) == before + 1
    history = json.loads(cli("sessions", "history", sid, "--json", cwd=workspace, env={}).stdout)
    ended = [e["data"] for e in history["events"] if e["type"] == "compaction_ended"]
    assert ended[-1]["auto"] is False
    assert ended[-1]["summary"]
