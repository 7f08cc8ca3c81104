"""`lsp-agent doctor` exit codes, and extended thinking carried across tool turns."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import running_fake_llm
from tests.support.user_config import write_user_config

KEY = "sk-doctor-SECRET-0000"


def cli(*args: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_doctor_passes_with_a_missing_key_as_a_warning(tmp_path: Path) -> None:
    result = cli("doctor", cwd=tmp_path, LSP_AGENT_MODEL="anthropic/claude-sonnet-4-5")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert any(line.startswith("ok") and "git" in line for line in lines)
    assert any(line.startswith("ok") and "rg" in line for line in lines)
    assert any(line.startswith("ok") and "database" in line for line in lines)
    assert any(line.startswith("warn") and "ANTHROPIC_API_KEY is not set" in line for line in lines)


def test_doctor_names_the_key_variable_never_its_value(tmp_path: Path) -> None:
    with running_fake_llm([]) as server:  # doctor tests the endpoint: keep it on loopback
        result = cli(
            "doctor",
            cwd=tmp_path,
            LSP_AGENT_MODEL="anthropic/claude-test",
            ANTHROPIC_API_KEY=KEY,
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
        )
    assert result.returncode == 0, result.stdout
    assert "ANTHROPIC_API_KEY is set" in result.stdout
    assert KEY not in result.stdout + result.stderr


def test_doctor_fails_on_an_invalid_config_file_naming_file_and_key(tmp_path: Path) -> None:
    write_user_config({"model": "anthropic/x", "retry": {"max_retrys": 3}})
    result = cli("doctor", cwd=tmp_path)
    assert result.returncode == 1
    assert "config.json" in result.stdout
    assert "retry.max_retrys" in result.stdout


def test_doctor_fails_without_a_model(tmp_path: Path) -> None:
    result = cli("doctor", cwd=tmp_path)
    assert result.returncode == 1
    assert "LSP_AGENT_MODEL" in result.stdout


def test_anthropic_thinking_blocks_and_signatures_survive_tool_turns(tmp_path: Path) -> None:
    write_user_config({"thinking": {"enabled": True, "budget_tokens": 2000}})
    (tmp_path / "a.py").write_text("x = 1\n")
    script = [
        {
            "thinking": "I should read a.py",
            "signature": "sig-abc-123",
            "tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}],
        },
        {"text": "x is one."},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--json",
            "--model",
            "anthropic/claude-test",
            "what is x",
            cwd=tmp_path,
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            ANTHROPIC_API_KEY=KEY,
        )
        assert result.returncode == 0, result.stderr
        bodies = [r.body for r in server.requests if r.turn != "side"]
    assert bodies[0]["thinking"] == {"type": "enabled", "budget_tokens": 2000}
    assistant = next(m for m in bodies[1]["messages"] if m["role"] == "assistant")
    kinds = [block["type"] for block in assistant["content"]]
    assert kinds[0] == "thinking"
    assert assistant["content"][0]["signature"] == "sig-abc-123"
    assert assistant["content"][0]["thinking"] == "I should read a.py"
    assert "tool_use" in kinds
    updates = [json.loads(line)["update"] for line in result.stdout.splitlines()]
    thought = "".join(u["text"] for u in updates if u["sessionUpdate"] == "agent_thought_chunk")
    assert thought == "I should read a.py"


@pytest.mark.parametrize("budget", [1024, 20000])
def test_openai_reasoning_effort_and_reasoning_deltas(tmp_path: Path, budget: int) -> None:
    write_user_config({"thinking": {"enabled": True, "budget_tokens": budget}})
    with running_fake_llm([{"thinking": "pondering", "text": "done"}]) as server:
        result = cli(
            "run",
            "--json",
            "--model",
            "openai/gpt-test",
            "think",
            cwd=tmp_path,
            OPENAI_BASE_URL=server.openai_base_url,
            OPENAI_API_KEY=KEY,
        )
        assert result.returncode == 0, result.stderr
        (body,) = [r.body for r in server.requests if r.turn != "side"]
    assert body["reasoning_effort"] == ("low" if budget < 2000 else "high")
    updates = [json.loads(line)["update"] for line in result.stdout.splitlines()]
    thought = "".join(u["text"] for u in updates if u["sessionUpdate"] == "agent_thought_chunk")
    assert thought.strip() == "pondering"
