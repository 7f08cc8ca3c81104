"""Issue 5's attack corpus and guarantees, end to end through `lsp-agent run --yes`."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm

PROVIDER_KEY = "sk-ant-PROVIDER-KEY-must-never-leak-0123"
OTHER_SECRET = "ghp_OTHER-TOKEN-must-be-redacted-4567"


@pytest.fixture
def workspace(workspace: Path, tmp_path: Path) -> Path:
    (workspace / "a.py").write_text("print('hi')\n")
    (tmp_path / "outside.txt").write_text("OUTSIDE-CONTENT\n")
    return workspace


def run_calls(
    workspace: Path,
    calls: list[tuple[str, dict[str, Any]]],
    *flags: str,
    env: dict[str, str] | None = None,
) -> tuple[subprocess.CompletedProcess[str], list[Any]]:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": name, "input": args}]} for name, args in calls
    ]
    script.append({"text": "finished"})
    with running_fake_llm(script) as server:
        full_env = {
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": PROVIDER_KEY,
        }
        full_env.update(env or {})
        result = cli(
            "run",
            "--yes",
            *flags,
            "--model",
            "anthropic/claude-test",
            "go",
            cwd=workspace,
            env=full_env,
        )
        bodies = [r.body for r in server.requests]
    return result, bodies


def tool_results(bodies: list[Any]) -> list[dict[str, Any]]:
    last = [b for b in bodies if b.get("tools")][-1]
    return [
        block
        for message in last["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


@pytest.mark.parametrize(
    "args",
    [
        {"command": "touch marker-root", "workdir": "/"},
        {"command": "cat ../outside.txt"},
        {"command": "cat OUTSIDE_ABS"},
        {"command": "cd .. && cat outside.txt"},
    ],
    ids=["workdir-root", "dotdot", "absolute", "cd-out"],
)
def test_bash_outside_the_workspace_is_refused(workspace: Path, args: dict[str, str]) -> None:
    outside = workspace.parent / "outside.txt"
    args = {k: v.replace("OUTSIDE_ABS", str(outside)) for k, v in args.items()}
    result, bodies = run_calls(workspace, [("bash", args)])
    assert result.returncode == 4, result.stderr  # 4: the ask was refused
    (block,) = tool_results(bodies)
    assert block["is_error"] is True
    assert "OUTSIDE-CONTENT" not in json.dumps(bodies)
    assert not Path("/marker-root").exists()


@pytest.mark.parametrize(
    "url",
    [
        "http://127.0.0.1:9/",
        "http://localhost:9/",
        "http://2130706433/",
        "http://[::1]:9/",
        "http://169.254.169.254/latest/meta-data/",
        "http://10.0.0.1/",
        "http://0x7f.1/",
    ],
)
def test_webfetch_to_private_addresses_is_refused_even_with_yes(workspace: Path, url: str) -> None:
    result, bodies = run_calls(workspace, [("webfetch", {"url": url})])
    assert result.returncode == 0, result.stderr
    (block,) = tool_results(bodies)
    assert block["is_error"] is True
    text = json.dumps(block["content"]).lower()
    assert any(word in text for word in ("private", "loopback", "link-local", "ambiguous", "refus"))


def test_printenv_leaks_no_provider_key_anywhere(workspace: Path, tmp_path: Path) -> None:
    env = {"GITHUB_TOKEN": OTHER_SECRET}
    result, bodies = run_calls(
        workspace, [("bash", {"command": "printenv; echo token=$GITHUB_TOKEN"})], env=env
    )
    assert result.returncode == 0, result.stderr
    sent = json.dumps(bodies)
    assert PROVIDER_KEY not in sent
    assert OTHER_SECRET not in sent
    assert "[redacted:GITHUB_TOKEN]" in sent  # visible to the command, never to the model
    assert "ANTHROPIC_API_KEY=" not in sent  # the agent's own keys are not even in its env
    places = [Path(os.environ["LSP_AGENT_DATA_DIR"]), Path(os.environ["HOME"]), workspace]
    for place in places:
        for path in place.rglob("*"):
            if path.is_file() and not path.is_symlink():
                data = path.read_bytes()
                assert PROVIDER_KEY.encode() not in data, path
                assert OTHER_SECRET.encode() not in data, path
    assert PROVIDER_KEY not in result.stdout + result.stderr


def test_a_configured_bash_deny_holds_against_yes(workspace: Path) -> None:
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"permission": {"bash": {"*": "deny"}}}))
    result, bodies = run_calls(workspace, [("bash", {"command": "touch pwned"})])
    assert result.returncode == 0, result.stderr
    assert not (workspace / "pwned").exists()
    # a "*" deny hides bash from the model; a call made anyway is refused, never run
    assert "bash" not in {t["name"] for t in bodies[0]["tools"]}
    (block,) = tool_results(bodies)
    assert block["is_error"] is True


def test_a_repeated_failing_call_is_withheld_and_the_turn_ends_normally(workspace: Path) -> None:
    calls = [("read", {"file_path": "missing.py"})] * 5
    result, bodies = run_calls(workspace, calls, "--json")
    assert result.returncode == 0, result.stderr
    assert "finished" in json.dumps(result.stdout)
    updates = [json.loads(line)["update"] for line in result.stdout.splitlines()]
    tool_updates = [u for u in updates if u["sessionUpdate"] == "tool_call_update"]
    failed = [u for u in tool_updates if u.get("status") == "failed"]
    assert len(failed) == 5
    assert "withheld" in json.dumps(failed[2]["content"])
    assert "is withheld" in json.dumps(failed[3]["content"])
    model_bodies = [b for b in bodies if b.get("tools")]
    assert "read" not in {t["name"] for t in model_bodies[-1]["tools"]}
    states = [u for u in updates if u["sessionUpdate"] == "state_update" and "stopReason" in u]
    assert states[-1]["stopReason"] == "end_turn"


def test_an_explore_subagent_cannot_write(workspace: Path) -> None:
    script = [
        {
            "tool_calls": [
                {
                    "name": "task",
                    "input": {
                        "description": "try to write",
                        "prompt": "write x",
                        "subagent_type": "explore",
                    },
                }
            ]
        },
        {"tool_calls": [{"name": "write", "input": {"file_path": "x.txt", "content": "no"}}]},
        {"text": "I cannot write."},
        {"text": "finished"},
    ]
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": PROVIDER_KEY}
        result = cli(
            "run", "--yes", "--model", "anthropic/claude-test", "go", cwd=workspace, env=env
        )
        bodies = [r.body for r in server.requests if r.body.get("tools")]
    assert result.returncode == 0, result.stderr
    assert not (workspace / "x.txt").exists()
    child_tools = {t["name"] for t in bodies[1]["tools"]}
    assert child_tools == {"read", "list", "glob", "grep"}
    assert "task" in {t["name"] for t in bodies[0]["tools"]}


def test_a_question_without_a_terminal_is_declined(workspace: Path) -> None:
    question = {"questions": [{"question": "Which file?", "options": [{"label": "a.py"}]}]}
    result, bodies = run_calls(workspace, [("question", question)])
    assert result.returncode == 0, result.stderr
    (block,) = tool_results(bodies)
    assert block["is_error"] is True
    assert "declined" in json.dumps(block["content"])
