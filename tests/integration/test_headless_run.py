"""`lsp-agent run` end to end: a real subprocess, the official SDKs, the fake LLM server."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

API_KEY = "sk-test-7f3c9a1e-SECRET-value"
A_PY = "import sys\n\nprint('hello from a.py')\n"


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "a.py").write_text(A_PY)
    return workspace


def model_requests(server: FakeLLMServer) -> list[dict[str, Any]]:
    return [
        r.body
        for r in server.requests
        if r.turn != "side" and r.path.endswith(("messages", "completions"))
    ]


def model_records(server: FakeLLMServer) -> list[Any]:
    return [r for r in server.requests if r.turn != "side"]


@pytest.fixture
def read_then_answer() -> Iterator[FakeLLMServer]:
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]},
        {"text": "It prints a greeting."},
    ]
    with running_fake_llm(script) as server:
        yield server


def test_anthropic_turn_reads_a_file_and_answers(
    read_then_answer: FakeLLMServer, workspace: Path
) -> None:
    result = run_cli(
        "run",
        "--model",
        "anthropic/claude-test",
        "what does a.py do",
        cwd=workspace,
        env=provider_env(read_then_answer, API_KEY),
    )
    assert result.returncode == 0, result.stderr
    assert "It prints a greeting." in result.stdout
    assert "Read a.py" in result.stderr
    first, second = model_requests(read_then_answer)
    assert first["tools"][0]["name"] == "read"
    assert first["stream"] is True
    headers = read_then_answer.requests[0].headers
    assert API_KEY in (
        headers.get("x-api-key"),
        headers.get("authorization", "").removeprefix("Bearer "),
    )
    assert "anthropic-version" in headers
    tool_results = [
        block
        for message in second["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert len(tool_results) == 1
    content = json.dumps(tool_results[0]["content"])
    assert "3: print('hello from a.py')" in content
    assert "1: import sys" in content


def test_openai_turn_reads_a_file_and_answers(
    read_then_answer: FakeLLMServer, workspace: Path
) -> None:
    result = run_cli(
        "run",
        "--model",
        "openai/gpt-test",
        "what does a.py do",
        cwd=workspace,
        env=provider_env(read_then_answer, API_KEY, "openai"),
    )
    assert result.returncode == 0, result.stderr
    assert "It prints a greeting." in result.stdout
    first, second = model_requests(read_then_answer)
    assert first["stream_options"] == {"include_usage": True}
    assert first["stream"] is True
    headers = read_then_answer.requests[0].headers
    assert headers["authorization"] == f"Bearer {API_KEY}"
    tool_messages = [m for m in second["messages"] if m["role"] == "tool"]
    assert len(tool_messages) == 1
    assert "3: print('hello from a.py')" in json.dumps(tool_messages[0]["content"])


def test_rate_limits_are_retried_then_the_turn_succeeds(workspace: Path) -> None:
    script = [{"status": 429, "times": 2, "retry_after": 0, "then": {"text": "finally"}}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "hi",
            cwd=workspace,
            env=provider_env(server, API_KEY),
        )
        assert result.returncode == 0, result.stderr
        assert "finally" in result.stdout
        assert [r.status for r in model_records(server)] == [429, 429, 200]
        assert result.stderr.count("retrying") == 2


def test_a_rejected_key_fails_at_once_naming_the_variable(workspace: Path) -> None:
    with running_fake_llm([{"status": 401}]) as server:
        result = run_cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "hi",
            cwd=workspace,
            env=provider_env(server, API_KEY),
        )
        assert result.returncode == 1
        assert "ANTHROPIC_API_KEY" in result.stderr
        assert API_KEY not in result.stderr
        assert len(server.requests) == 1


def test_a_missing_model_says_what_to_set(workspace: Path) -> None:
    result = run_cli("run", "hi", cwd=workspace)
    assert result.returncode == 2  # a config mistake: nothing ran
    assert "LSP_AGENT_MODEL" in result.stderr
    assert "lsp-agent doctor" in result.stderr


def test_a_missing_key_names_the_variable(workspace: Path) -> None:
    with running_fake_llm([{"text": "unused"}]) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url}
        result = run_cli("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
        assert result.returncode == 1
        assert "ANTHROPIC_API_KEY" in result.stderr
        assert server.requests == []


def session_id_of(server_cwd: Path) -> str:
    listing = run_cli("sessions", "list", "--json", cwd=server_cwd)
    assert listing.returncode == 0, listing.stderr
    sessions = json.loads(listing.stdout)["sessions"]
    assert len(sessions) == 1
    return str(sessions[0]["sessionId"])


def test_sessions_show_has_the_whole_turn_in_the_contract_shape(
    read_then_answer: FakeLLMServer, workspace: Path
) -> None:
    result = run_cli(
        "run",
        "--model",
        "anthropic/claude-test",
        "what does a.py do",
        cwd=workspace,
        env=provider_env(read_then_answer, API_KEY),
    )
    assert result.returncode == 0, result.stderr
    listing = json.loads(run_cli("sessions", "list", "--json", cwd=workspace).stdout)
    (summary,) = listing["sessions"]
    assert summary["workspaceFolder"] == workspace.resolve().as_uri()
    assert set(summary) == {
        "sessionId",
        "title",
        "workspaceFolder",
        "createdAt",
        "updatedAt",
        "state",
        "usage",
    }
    shown = run_cli("sessions", "show", summary["sessionId"], "--json", cwd=workspace)
    assert shown.returncode == 0, shown.stderr
    data = json.loads(shown.stdout)
    assert data["session"]["sessionId"] == summary["sessionId"]
    assert data["session"]["state"] == "idle"
    assert data["session"]["usage"]["outputTokens"] > 0
    user, call, answer = data["messages"]
    assert user["role"] == "user"
    assert user["parts"] == [{"type": "text", "text": "what does a.py do"}]
    (tool_part,) = call["parts"]
    assert tool_part["type"] == "tool_call"
    assert tool_part["toolName"] == "read"
    assert tool_part["status"] == "completed"
    assert tool_part["input"] == {"file_path": "a.py"}
    assert "hello from a.py" in tool_part["output"]
    assert answer["role"] == "assistant"
    assert answer["status"] == "completed"
    assert answer["parts"] == [{"type": "text", "text": "It prints a greeting."}]
    # elsewhere, --all still finds it
    other = workspace.parent / "elsewhere"
    other.mkdir()
    assert json.loads(run_cli("sessions", "list", "--json", cwd=other).stdout)["sessions"] == []
    everywhere = json.loads(run_cli("sessions", "list", "--all", "--json", cwd=other).stdout)
    assert [s["sessionId"] for s in everywhere["sessions"]] == [summary["sessionId"]]


def test_the_api_key_is_written_nowhere(read_then_answer: FakeLLMServer, workspace: Path) -> None:
    result = run_cli(
        "run",
        "--json",
        "--model",
        "anthropic/claude-test",
        "what does a.py do",
        cwd=workspace,
        env=provider_env(read_then_answer, API_KEY),
    )
    assert result.returncode == 0, result.stderr
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    files = [p for p in data_dir.rglob("*") if p.is_file()]
    assert files, "the run wrote nothing under LSP_AGENT_DATA_DIR"
    for path in files:
        assert API_KEY.encode() not in path.read_bytes(), path
    assert API_KEY not in result.stdout + result.stderr


def test_run_json_prints_one_update_per_event_with_gapless_seq(
    read_then_answer: FakeLLMServer, workspace: Path
) -> None:
    result = run_cli(
        "run",
        "--json",
        "--model",
        "anthropic/claude-test",
        "what does a.py do",
        cwd=workspace,
        env=provider_env(read_then_answer, API_KEY),
    )
    assert result.returncode == 0, result.stderr
    updates = [json.loads(line) for line in result.stdout.splitlines()]
    assert [u["seq"] for u in updates] == list(range(1, len(updates) + 1))
    kinds = {u["update"]["sessionUpdate"] for u in updates}
    assert {"user_message", "agent_message_chunk", "tool_call_update", "state_update"} <= kinds
    assert updates[-1]["update"]["sessionUpdate"] in ("state_update", "session_info_update")


@pytest.mark.parametrize("target", ["../secret.txt", "ABSOLUTE", "link.txt"])
def test_reads_outside_the_workspace_are_refused(workspace: Path, target: str) -> None:
    secret = workspace.parent / "secret.txt"
    secret.write_text("TOP-SECRET-CONTENT\n")
    (workspace / "link.txt").symlink_to(secret)
    path = str(secret) if target == "ABSOLUTE" else target
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": path}}]},
        {"text": "I cannot read it."},
    ]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "read it",
            cwd=workspace,
            env=provider_env(server, API_KEY),
        )
        assert result.returncode == 4, result.stderr  # 4: the external_directory ask was refused
        second = model_requests(server)[1]
        results = [
            block
            for message in second["messages"]
            if isinstance(message["content"], list)
            for block in message["content"]
            if block.get("type") == "tool_result"
        ]
        assert results[0]["is_error"] is True
        assert "outside the workspace" in json.dumps(results[0]["content"])
        for record in server.requests:
            assert "TOP-SECRET-CONTENT" not in json.dumps(record.body)


def test_the_step_limit_forces_a_final_answer_and_exits_3(workspace: Path) -> None:
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]},
        {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]},
        {"text": "never reached"},
    ]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run",
            "--max-steps",
            "2",
            "--model",
            "anthropic/claude-test",
            "loop",
            cwd=workspace,
            env=provider_env(server, API_KEY),
        )
        assert result.returncode == 3, result.stderr
        first, last = model_requests(server)
        assert last["tools"] == first["tools"]
        assert last["tool_choice"] == {"type": "none"}
        assert first["tool_choice"] == {"type": "auto"}
        assert "MAXIMUM STEPS REACHED" in json.dumps(last["messages"][-1])


def test_run_continues_a_session(workspace: Path) -> None:
    with running_fake_llm([{"text": "first"}, {"text": "second"}]) as server:
        env = provider_env(server, API_KEY)
        first = run_cli("run", "--model", "anthropic/claude-test", "one", cwd=workspace, env=env)
        assert first.returncode == 0, first.stderr
        session_id = session_id_of(workspace)
        again = run_cli(
            "run",
            "--session",
            session_id,
            "--model",
            "anthropic/claude-test",
            "two",
            cwd=workspace,
            env=env,
        )
        assert again.returncode == 0, again.stderr
        assert "second" in again.stdout
        last = model_requests(server)[-1]
        assert [m["role"] for m in last["messages"]] == ["user", "assistant", "user"]


def test_an_unknown_session_is_bad_usage(workspace: Path) -> None:
    env = {"LSP_AGENT_MODEL": "anthropic/claude-test", "ANTHROPIC_API_KEY": API_KEY}
    result = run_cli("run", "--session", "ses_nope", "hi", cwd=workspace, env=env)
    assert result.returncode == 2
    assert "ses_nope" in result.stderr


def test_an_invalid_config_file_is_bad_usage_naming_file_and_key(workspace: Path) -> None:
    (workspace / ".lsp-agent.json").write_text('{"modle": "x"}')
    env = {"LSP_AGENT_MODEL": "anthropic/claude-test"}
    result = run_cli("run", "hi", cwd=workspace, env=env)
    assert result.returncode == 2
    assert ".lsp-agent.json" in result.stderr
    assert "modle" in result.stderr


def test_version() -> None:
    result = run_cli("--version", cwd=Path.cwd())
    assert result.returncode == 0
    assert result.stdout.startswith("lsp-agent ")


@pytest.mark.parametrize(
    ("tool", "args"),
    [
        ("grep", {"pattern": "TOP-SECRET", "path": "../outside"}),
        ("grep", {"pattern": "TOP-SECRET", "path": "/"}),
        ("grep", {"pattern": "TOP-SECRET", "path": "linked"}),
        ("grep", {"pattern": "TOP-SECRET"}),
        ("glob", {"pattern": "**/*.txt", "path": "OUTSIDE"}),
        ("glob", {"pattern": "**/*.txt"}),
        ("list", {"path": "linked"}),
        ("list", {}),
    ],
)
def test_searches_never_bring_outside_content_into_a_request(
    workspace: Path, tool: str, args: dict[str, str]
) -> None:
    outside = workspace.parent / "outside"
    outside.mkdir()
    (outside / "secret-name.txt").write_text("TOP-SECRET-CONTENT\n")
    (workspace / "linked").symlink_to(outside, target_is_directory=True)
    if args.get("path") == "OUTSIDE":
        args = {**args, "path": str(outside)}
    script = [{"tool_calls": [{"name": tool, "input": args}]}, {"text": "done"}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run",
            "--model",
            "anthropic/claude-test",
            "search",
            cwd=workspace,
            env=provider_env(server, API_KEY),
        )
        assert result.returncode in (0, 4), result.stderr  # 4: an outside path was asked, refused
        bodies = json.dumps([r.body for r in server.requests])
    assert "TOP-SECRET-CONTENT" not in bodies
    assert "secret-name" not in bodies
