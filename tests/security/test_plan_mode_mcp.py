"""Issue 31 point 9: plan mode covers MCP. An MCP tool runs in plan mode only if the user's
own config file lists it in ``mcp.<server>.read_only_tools``; a server's ``readOnlyHint``
(the former ``allow_read_only`` opt-in), a configured allow, a saved approval, a project
file's list: none of them lets a tool run unasked in plan mode, and ``--yes`` approves no
plan-mode ask."""

from __future__ import annotations

import contextlib
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.config.load import load_settings
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.permission.rules import Rule, decide
from lsp_agent.core.turn.loop import TurnConfig
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.mcp_servers import stdio_command
from tests.support.provider_env import provider_env
from tests.support.user_config import write_user_config

KEY = "sk-plan-mcp-SECRET-4417"
SERVER = "probe"


def _captured(tmp_path: Path, user: dict[str, Any], project: dict[str, Any] | None, mode: str):
    """The rules a plan-mode (or build-mode) call is decided by, from real config files."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    user_file = tmp_path / "xdg" / "lsp-agent" / "config.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text(json.dumps({**user, "trusted_folders": [str(ws)]}))
    if project is not None:
        (ws / ".lsp-agent.json").write_text(json.dumps(project))
    settings = load_settings(workspace=ws, env=env)
    rules = tuple(
        Rule(
            permission=r.permission,
            pattern=r.pattern,
            action=r.action,
            source=r.source,
            below_user=r.below_user,
        )
        for r in settings.permission_rules
    )
    config = TurnConfig(
        model=ModelInfo(provider="p", model="m"),
        system_prompt="",
        workspace_roots=(str(ws),),
        mode=mode,
        rules=rules,
        read_only_mcp=tuple(settings.read_only_mcp),
    )
    return config.captured_rules()


def _server(**extra: Any) -> dict[str, Any]:
    return {"type": "local", "command": ["probe-mcp"], **extra}


def test_a_tool_the_user_lists_runs_in_plan_mode_and_no_other(tmp_path: Path) -> None:
    rules = _captured(
        tmp_path,
        {"mcp": {SERVER: _server(read_only_tools=["echo"])}},
        None,
        "plan",
    )
    assert decide("mcp", ["probe:echo"], rules).action == "allow"
    assert decide("mcp", ["probe:env"], rules).action == "ask"
    assert decide("mcp", ["probe:echo2"], rules).action == "ask"  # the name is exact


@pytest.mark.parametrize(
    ("user", "project"),
    [
        # a configured allow: fine in build mode, asked in plan mode
        ({"mcp": {SERVER: _server()}, "permission": {"mcp": {"probe:*": "allow"}}}, None),
        ({"mcp": {SERVER: _server()}, "permission": "allow"}, None),
        # the server's own annotation, trusted by the old opt-in: not any more
        ({"mcp": {SERVER: _server(allow_read_only=True)}}, None),
        # a (trusted) project cannot mark tools read-only
        (
            {"mcp": {SERVER: _server()}},
            {"mcp": {SERVER: _server(read_only_tools=["env"])}},
        ),
        # a wildcard in the list is the tool's name, not a pattern
        ({"mcp": {SERVER: _server(read_only_tools=["*"])}}, None),
    ],
)
def test_nothing_else_lets_an_mcp_tool_run_unasked_in_plan_mode(
    tmp_path: Path, user: dict[str, Any], project: dict[str, Any] | None
) -> None:
    rules = _captured(tmp_path, user, project, "plan")
    assert decide("mcp", ["probe:env"], rules).action == "ask"


def test_saved_approvals_do_not_lift_plan_modes_ask(tmp_path: Path) -> None:
    rules = _captured(tmp_path, {"mcp": {SERVER: _server()}}, None, "plan")
    saved = [Rule(permission="mcp", pattern="probe:env", action="allow", source="saved")]
    assert decide("mcp", ["probe:env"], rules, saved).action == "ask"


def test_the_users_deny_still_wins_over_the_read_only_list(tmp_path: Path) -> None:
    user = {
        "mcp": {SERVER: _server(read_only_tools=["echo"])},
        "permission": {"mcp": {"probe:echo": "deny"}},
    }
    for mode in ("plan", "build"):
        assert decide("mcp", ["probe:echo"], _captured(tmp_path, user, None, mode)).action == (
            "deny"
        )


def test_build_mode_keeps_configured_allows(tmp_path: Path) -> None:
    user = {"mcp": {SERVER: _server()}, "permission": {"mcp": {"probe:*": "allow"}}}
    assert decide("mcp", ["probe:env"], _captured(tmp_path, user, None, "build")).action == (
        "allow"
    )


# --- end to end: `lsp-agent run --mode plan --yes` with a real MCP server -----------------------


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "mcp-server.pid"
    yield path
    if path.exists():
        with contextlib.suppress(ProcessLookupError, ValueError):
            os.kill(int(path.read_text()), signal.SIGKILL)


def _results(server: FakeLLMServer) -> list[tuple[str, bool]]:
    out = []
    for body in server.model_bodies()[1:]:
        (block,) = [b for b in body["messages"][-1]["content"] if b.get("type") == "tool_result"]
        content = block.get("content")
        text = content if isinstance(content, str) else json.dumps(content)
        out.append((text, bool(block.get("is_error"))))
    return out


@pytest.mark.parametrize(
    ("listed", "hint", "echo_runs"),
    [(["echo"], False, True), ([], True, False), ([], False, False)],
)
def test_run_plan_yes_runs_only_the_tools_the_user_lists(
    workspace: Path,
    fake_llm: FakeLLMServer,
    pid_file: Path,
    listed: list[str],
    hint: bool,
    echo_runs: bool,
) -> None:
    server: dict[str, Any] = {
        "type": "local",
        "command": stdio_command(pid_file),
        "read_only_tools": listed,
    }
    if hint:
        server["allow_read_only"] = True  # `echo` is marked readOnlyHint by the server
    write_user_config({"mcp": {SERVER: server}, "permission": {"mcp": {"probe:env": "allow"}}})
    fake_llm.set_script(
        [
            {"tool_calls": [{"name": f"{SERVER}_echo", "input": {"text": "planned"}}]},
            {"tool_calls": [{"name": f"{SERVER}_env", "input": {}}]},
            {"text": "done"},
        ]
    )
    env = provider_env(fake_llm, KEY)
    result = run_cli(
        "run",
        "--model",
        "anthropic/claude-test",
        "--mode",
        "plan",
        "--yes",
        "go",
        cwd=workspace,
        env=env,
    )
    assert result.returncode == 4, result.stderr  # `env` is refused in plan mode, allow or not
    (echoed, echo_failed), (env_text, env_failed) = _results(fake_llm)
    assert echo_failed is not echo_runs, echoed
    if echo_runs:
        assert "planned" in echoed
    assert env_failed, env_text
    assert "PATH=" not in env_text  # the tool never ran
    assert "plan mode" in env_text
