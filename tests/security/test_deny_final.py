"""Issue 31 point 5: a configured deny is final. A layer below the user's (the project's
``.lsp-agent.json``, trusted or not, and the editor's settings) may tighten but never turn a
deny of the user's own layers into ``ask`` or ``allow``, for every permission and every
pattern form; ``--yes`` never approves what such a deny covers. Today's example: a project
``{"rm *": "ask"}`` plus ``--yes`` ran ``rm``."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.config.load import load_settings
from lsp_agent.core.modes import mode_rules
from lsp_agent.core.permission.rules import Rule, decide, hidden
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-deny-final-SECRET-5512"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}


def _user(tmp_path: Path, config: dict[str, Any]) -> None:
    path = tmp_path / "xdg" / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(config))


def _rules(
    tmp_path: Path,
    user: dict[str, Any],
    project: dict[str, Any] | None = None,
    *,
    trusted: bool = False,
    editor: dict[str, Any] | None = None,
    extra: dict[str, Any] | None = None,
) -> tuple[Rule, ...]:
    """The rules ``app.agent_options`` gives the core, from real config files."""
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    env = _env(tmp_path)
    _user(tmp_path, {**user, **({"trusted_folders": [str(ws)]} if trusted else {})})
    if project is not None:
        (ws / ".lsp-agent.json").write_text(json.dumps(project))
    if extra is not None:
        (tmp_path / "extra.json").write_text(json.dumps(extra))
        env["LSP_AGENT_CONFIG"] = str(tmp_path / "extra.json")
    settings = load_settings(workspace=ws, env=env, init_options=editor)
    return tuple(
        Rule(
            permission=r.permission,
            pattern=r.pattern,
            action=r.action,
            source=r.source,
            below_user=r.below_user,
        )
        for r in settings.permission_rules
    )


# (permission, the user's deny, the resource asked for, a looser project rule set)
CASES = [
    ("bash", {"rm *": "deny"}, "rm x", {"rm *": "ask"}),
    ("bash", {"rm *": "deny"}, "rm -rf x", {"rm -rf *": "ask"}),
    ("bash", {"rm *": "deny"}, "rm -rf x", {"rm -rf x": "allow"}),
    ("bash", {"rm *": "deny"}, "rm x", {"*": "allow"}),
    ("bash", {"git push *": "deny"}, "git push origin", {"git *": "allow"}),
    ("edit", "deny", "src/a.py", "ask"),
    ("edit", {"secrets/*": "deny"}, "secrets/key.txt", {"secrets/key.txt": "allow"}),
    ("external_directory", {"/etc/*": "deny"}, "/etc/passwd", {"/etc/passwd": "ask"}),
    ("webfetch", {"https://evil.test/*": "deny"}, "https://evil.test/x", "allow"),
    ("mcp", {"db:drop*": "deny"}, "db:drop_table", {"db:*": "allow"}),
    ("task", "deny", "general", "allow"),
    ("bash_network", {"curl *": "deny"}, "curl x", {"curl *": "ask"}),
]


@pytest.mark.parametrize(("permission", "user", "resource", "project"), CASES)
def test_a_trusted_projects_rules_never_lift_the_users_deny(
    tmp_path: Path, permission: str, user: Any, resource: str, project: Any
) -> None:
    rules = _rules(
        tmp_path,
        {"permission": {permission: user}},
        {"permission": {permission: project}},
        trusted=True,
    )
    assert decide(permission, [resource], rules).action == "deny"


@pytest.mark.parametrize(("permission", "user", "resource", "project"), CASES)
def test_the_editors_settings_never_lift_the_users_deny(
    tmp_path: Path, permission: str, user: Any, resource: str, project: Any
) -> None:
    rules = _rules(
        tmp_path, {"permission": {permission: user}}, editor={"permission": {permission: project}}
    )
    assert decide(permission, [resource], rules).action == "deny"


def test_an_untrusted_project_may_add_asks_but_not_lift_a_deny_with_them(tmp_path: Path) -> None:
    rules = _rules(
        tmp_path, {"permission": {"bash": {"rm *": "deny"}}}, {"permission": {"bash": "ask"}}
    )
    assert decide("bash", ["rm x"], rules).action == "deny"
    assert decide("bash", ["ls"], rules).action == "ask"


def test_a_project_wide_allow_keeps_the_users_deny(tmp_path: Path) -> None:
    rules = _rules(
        tmp_path, {"permission": {"bash": {"rm *": "deny"}}}, {"permission": "allow"}, trusted=True
    )
    assert decide("bash", ["rm x"], rules).action == "deny"
    assert decide("bash", ["ls"], rules).action == "allow"  # what the user did not deny


def test_the_project_may_still_tighten(tmp_path: Path) -> None:
    rules = _rules(
        tmp_path,
        {"permission": {"bash": {"*": "allow"}}},
        {"permission": {"bash": {"rm *": "deny"}}},
    )
    assert decide("bash", ["rm x"], rules).action == "deny"
    assert decide("bash", ["ls"], rules).action == "allow"


def test_the_users_own_later_layer_may_lift_the_users_deny(tmp_path: Path) -> None:
    """LSP_AGENT_CONFIG is the user's (a file they point at), not the project's."""
    rules = _rules(
        tmp_path,
        {"permission": {"bash": {"rm *": "deny"}}},
        extra={"permission": {"bash": {"rm *.tmp": "allow"}}},
    )
    assert decide("bash", ["rm a.tmp"], rules).action == "allow"
    assert decide("bash", ["rm a.py"], rules).action == "deny"


def test_a_denied_tool_stays_hidden_whatever_the_project_says(tmp_path: Path) -> None:
    rules = _rules(
        tmp_path, {"permission": {"edit": "deny"}}, {"permission": {"edit": "allow"}}, trusted=True
    )
    assert hidden("edit", rules)
    assert decide("edit", ["a.py"], rules).action == "deny"


def test_saved_approvals_and_plan_mode_keep_the_final_deny(tmp_path: Path) -> None:
    rules = _rules(
        tmp_path, {"permission": {"bash": {"rm *": "deny"}}}, {"permission": {"bash": "ask"}}
    )
    saved = [Rule(permission="bash", pattern="rm *", action="allow", source="saved")]
    assert decide("bash", ["rm x"], [*rules, *mode_rules("plan")], saved).action == "deny"


# --- end to end: `lsp-agent run --yes` ------------------------------------------------------


def _run_yes(ws: Path, calls: list[dict[str, Any]]) -> tuple[int, list[dict[str, Any]], str]:
    script: list[dict[str, Any]] = [{"tool_calls": [call]} for call in calls]
    script.append({"text": "finished"})
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli("run", "--yes", "--model", "anthropic/claude-test", "go", cwd=ws, env=env)
        bodies = [r.body for r in server.requests if r.turn != "side"]
    results = [
        block
        for message in bodies[-1]["messages"]
        if isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    return result.returncode, results, result.stderr


@pytest.mark.parametrize(
    "project",
    [
        {"permission": {"bash": {"rm *": "ask"}}},  # the reported case (an untrusted project)
        {"permission": {"bash": {"rm -f *": "ask", "*": "ask"}}},
        {"permission": "ask"},
    ],
)
def test_run_yes_never_runs_what_the_user_denied_whatever_the_project_asks(
    tmp_path: Path, project: dict[str, Any]
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "victim").write_text("keep me\n")
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"permission": {"bash": {"rm *": "deny"}}, "sandbox": "off"}))
    (ws / ".lsp-agent.json").write_text(json.dumps(project))

    code, results, stderr = _run_yes(
        ws,
        [
            {"name": "bash", "input": {"command": "rm victim"}},
            {"name": "bash", "input": {"command": "rm -f victim"}},
        ],
    )

    assert code in (0, 4), stderr
    assert (ws / "victim").read_text() == "keep me\n"
    assert len(results) == 2
    assert all(block.get("is_error") for block in results)
    assert all("rm *" in json.dumps(block) for block in results)  # the rule that denied it


# --- the mode: a layer below the user's may not lift plan mode's limits -------------------------


@pytest.mark.parametrize("where", ["project", "trusted_project", "editor"])
def test_a_lower_layer_cannot_switch_the_users_plan_mode_to_build(
    tmp_path: Path, where: str
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path)
    user: dict[str, Any] = {"mode": "plan"}
    if where == "trusted_project":
        user["trusted_folders"] = [str(ws)]
    _user(tmp_path, user)
    editor = None
    if where == "editor":
        editor = {"mode": "build"}
    else:
        (ws / ".lsp-agent.json").write_text(json.dumps({"mode": "build"}))
    settings = load_settings(workspace=ws, env=env, init_options=editor)
    assert settings.mode == "plan"
    assert any("'mode' 'build' is ignored" in warning for warning in settings.warnings)


def test_a_lower_layer_may_choose_plan_and_the_command_line_may_choose_build(
    tmp_path: Path,
) -> None:
    ws = tmp_path / "ws"
    ws.mkdir()
    env = _env(tmp_path)
    _user(tmp_path, {})
    (ws / ".lsp-agent.json").write_text(json.dumps({"mode": "plan"}))
    assert load_settings(workspace=ws, env=env).mode == "plan"  # tightening is fine
    _user(tmp_path, {"mode": "plan"})
    flags = {"mode": "build"}  # `run --mode build`: the person's own choice
    assert load_settings(workspace=ws, env=env, cli_overrides=flags).mode == "build"
