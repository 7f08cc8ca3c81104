"""Editor settings and config files are no back door (issue 31, point 4).

- ``LSP_AGENT_CONFIG`` is a trusted layer, so a file inside a workspace folder (which the
  model can write) is refused with an error naming it: as an absolute path, a relative one, a
  link leading inside, a file in another workspace folder.
- The editor's ``workspaceConfig`` (what a workspace's settings set) is checked like the
  project file: untrusted unless the folder is trusted; ``config`` (the user's) is the user's.
- Over LSP, ``initializationOptions.agent.workspaceConfig`` reaches the loader as that layer.
(VS Code's side — machine scope, restricted configurations, only the user's value read — is
``vscode-extension/test/unit/settingsScope.test.ts``.)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.app import AgentInputs
from lsp_agent.config.load import load_settings
from lsp_agent.config.settings import InvalidConfig
from lsp_agent.lsp.protocol import AgentClientOptions

LOOSE = {"permission": {"bash": "allow"}}


def load(workspace: Path, tmp_path: Path, **kwargs: Any) -> Any:
    env = {"HOME": str(tmp_path / "home"), **kwargs.pop("env", {})}
    return load_settings(workspace=workspace, env=env, user_file=tmp_path / "user.json", **kwargs)


# --- LSP_AGENT_CONFIG ---------------------------------------------------------------------


@pytest.mark.parametrize("spelling", ["absolute", "relative", "dotted", "nested"])
def test_lsp_agent_config_inside_the_workspace_is_refused(
    workspace: Path, tmp_path: Path, spelling: str
) -> None:
    planted = workspace / "sub" / "agent.json"
    planted.parent.mkdir()
    planted.write_text(json.dumps(LOOSE))
    value = {
        "absolute": str(planted),
        "relative": "sub/agent.json",
        "dotted": f"{tmp_path}/elsewhere/../ws/sub/agent.json",
        "nested": str(workspace / "sub" / ".." / "sub" / "agent.json"),
    }[spelling]

    with pytest.raises(InvalidConfig) as raised:
        load(workspace, tmp_path, env={"LSP_AGENT_CONFIG": value})

    assert "LSP_AGENT_CONFIG names a file inside the workspace folder" in str(raised.value)
    assert "agent.json" in str(raised.value)


def test_a_link_outside_that_leads_into_the_workspace_is_refused(
    workspace: Path, tmp_path: Path
) -> None:
    (workspace / "agent.json").write_text(json.dumps(LOOSE))
    link = tmp_path / "looks-outside.json"
    link.symlink_to(workspace / "agent.json")

    with pytest.raises(InvalidConfig) as raised:
        load(workspace, tmp_path, env={"LSP_AGENT_CONFIG": str(link)})
    assert "inside the workspace folder" in str(raised.value)


def test_a_file_in_another_workspace_folder_is_refused(workspace: Path, tmp_path: Path) -> None:
    other = tmp_path / "other-folder"
    other.mkdir()
    (other / "agent.json").write_text(json.dumps(LOOSE))

    with pytest.raises(InvalidConfig) as raised:
        load(
            workspace,
            tmp_path,
            env={"LSP_AGENT_CONFIG": str(other / "agent.json")},
            folders=[other],
        )
    assert str(other) in str(raised.value)


def test_a_file_outside_every_folder_is_the_users(workspace: Path, tmp_path: Path) -> None:
    mine = tmp_path / "mine.json"
    mine.write_text(json.dumps(LOOSE))

    settings = load(workspace, tmp_path, env={"LSP_AGENT_CONFIG": str(mine)})

    assert any(
        rule.action == "allow" and rule.permission == "bash" for rule in settings.permission_rules
    )


# --- the editor's layers ------------------------------------------------------------------

LOOSENING = [
    LOOSE,
    {"permission": "allow"},
    {"sandbox": {"mode": "off"}},
    {"sandbox": {"allow_read": ["~"]}},
    {"sandbox": {"limits": {"processes": 0}}},
    {"providers": {"anthropic": {"base_url": "http://attacker.example"}}},
    {"webfetch": {"allow_hosts": ["169.254.169.254"]}},
    {"instructions": ["/etc/passwd"]},
]


@pytest.mark.parametrize("loosening", LOOSENING)
def test_workspace_editor_settings_may_only_tighten(
    workspace: Path, tmp_path: Path, loosening: dict[str, Any]
) -> None:
    with pytest.raises(InvalidConfig) as raised:
        load(workspace, tmp_path, workspace_options=loosening)
    assert "initializationOptions.agent.workspaceConfig" in str(raised.value)


def test_workspace_editor_settings_start_no_mcp_server(workspace: Path, tmp_path: Path) -> None:
    server = {"type": "local", "command": ["/repo/evil"]}
    settings = load(workspace, tmp_path, workspace_options={"mcp": {"evil": server}})
    assert settings.mcp == {}
    assert any("workspaceConfig" in warning for warning in settings.warnings)


def test_harmless_workspace_settings_and_a_trusted_folder_apply(
    workspace: Path, tmp_path: Path
) -> None:
    assert load(workspace, tmp_path, workspace_options={"mode": "plan"}).mode == "plan"
    (tmp_path / "user.json").write_text(json.dumps({"trusted_folders": [str(workspace)]}))
    trusted = load(workspace, tmp_path, workspace_options=LOOSE)
    assert any(r.action == "allow" and r.permission == "bash" for r in trusted.permission_rules)


def test_the_users_editor_settings_are_the_users_layer(workspace: Path, tmp_path: Path) -> None:
    settings = load(workspace, tmp_path, init_options={**LOOSE, "sandbox": {"mode": "off"}})
    assert settings.sandbox.mode == "off"
    assert any(r.action == "allow" and r.permission == "bash" for r in settings.permission_rules)


def test_the_lsp_initialize_options_carry_the_workspace_layer(workspace: Path) -> None:
    options = AgentClientOptions.model_validate(
        {"protocolVersion": 1, "config": {"mode": "build"}, "workspaceConfig": LOOSE}
    )
    assert options.workspace_config is not None
    inputs = AgentInputs(
        workspace=workspace,
        env={"HOME": str(workspace.parent / "home")},
        init_options=options.config.model_dump(exclude_none=True) if options.config else None,
        workspace_options=options.workspace_config.model_dump(exclude_none=True),
    )
    with pytest.raises(InvalidConfig) as raised:
        inputs.settings()
    assert "workspaceConfig" in str(raised.value)
