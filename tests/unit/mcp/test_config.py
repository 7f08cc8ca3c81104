"""The ``mcp`` key: both server shapes, and where a project file may set it."""

from pathlib import Path

import pytest

from lsp_agent.config.load import load_settings
from lsp_agent.config.settings import (
    DEFAULT_PERMISSION_RULES,
    InvalidConfig,
    McpLocalServer,
    McpRemoteServer,
)


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")


@pytest.fixture
def folders(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    user = tmp_path / "xdg" / "lsp-agent" / "config.json"
    env = {"HOME": str(tmp_path / "home"), "XDG_CONFIG_HOME": str(tmp_path / "xdg")}
    return workspace, user, env


LOCAL = (
    '{"type": "local", "command": ["prog", "--flag"], "environment": {"TOKEN": "{env:T}"},'
    ' "timeout_ms": 5000, "read_only_tools": ["look"]}'
)
REMOTE = '{"type": "remote", "url": "https://example.test/mcp", "headers": {"X-Key": "{env:K}"}}'


def test_both_shapes_parse_with_their_defaults(folders: tuple[Path, Path, dict[str, str]]) -> None:
    workspace, user, env = folders
    _write(user, f'{{"mcp": {{"here": {LOCAL}, "there": {REMOTE}}}}}')
    servers = load_settings(workspace=workspace, env=env).mcp
    here, there = servers["here"], servers["there"]
    assert isinstance(here, McpLocalServer)
    assert isinstance(there, McpRemoteServer)
    assert here.command == ["prog", "--flag"]
    assert here.environment == {"TOKEN": "{env:T}"}
    assert (here.timeout_ms, here.enabled, here.read_only_tools) == (5000, True, ["look"])
    assert there.headers == {"X-Key": "{env:K}"}
    assert there.timeout_ms == 30_000


@pytest.mark.parametrize(
    "entry",
    [
        '{"type": "local", "command": []}',
        '{"type": "local"}',
        '{"type": "remote", "url": "ftp://x"}',
        '{"type": "elsewhere", "url": "https://x"}',
        '{"type": "local", "command": ["p"], "colour": "red"}',
    ],
)
def test_malformed_entries_are_refused_naming_the_key(
    folders: tuple[Path, Path, dict[str, str]], entry: str
) -> None:
    workspace, user, env = folders
    _write(user, f'{{"mcp": {{"bad": {entry}}}}}')
    with pytest.raises(InvalidConfig, match="mcp"):
        load_settings(workspace=workspace, env=env)


def test_an_untrusted_project_starts_no_server(folders: tuple[Path, Path, dict[str, str]]) -> None:
    workspace, _user, env = folders
    _write(workspace / ".lsp-agent.json", f'{{"mcp": {{"here": {LOCAL}}}}}')
    settings = load_settings(workspace=workspace, env=env)
    assert settings.mcp == {}
    assert any("'mcp' is ignored" in warning for warning in settings.warnings)


def test_a_trusted_project_adds_servers_but_marks_no_tool_read_only(
    folders: tuple[Path, Path, dict[str, str]],
) -> None:
    workspace, user, env = folders
    _write(user, f'{{"trusted_folders": ["{workspace}"]}}')
    _write(workspace / ".lsp-agent.json", f'{{"mcp": {{"here": {LOCAL}}}}}')
    settings = load_settings(workspace=workspace, env=env)
    assert settings.mcp["here"].command == ["prog", "--flag"]
    assert settings.mcp["here"].read_only_tools == []
    assert settings.read_only_mcp == []
    rules = settings.permission_rules
    assert not any(rule.permission == "mcp" and rule.action == "allow" for rule in rules)
    assert any("read_only_tools' is ignored" in warning for warning in settings.warnings)


def test_the_user_files_read_only_tools_are_literal_allow_rules(
    folders: tuple[Path, Path, dict[str, str]],
) -> None:
    workspace, user, env = folders
    server = '{"type": "local", "command": ["db"], "read_only_tools": ["get*"]}'
    _write(user, f'{{"mcp": {{"db": {server}}}}}')
    settings = load_settings(workspace=workspace, env=env)
    assert settings.read_only_mcp == ["db:get[*]"]
    rules = settings.permission_rules
    (rule,) = [r for r in rules if r.permission == "mcp" and r.action == "allow"]
    assert rule.pattern == "db:get[*]"


def test_the_old_read_only_opt_in_is_dropped_with_a_warning(
    folders: tuple[Path, Path, dict[str, str]],
) -> None:
    workspace, user, env = folders
    _write(user, '{"mcp": {"db": {"type": "local", "command": ["db"], "allow_read_only": true}}}')
    settings = load_settings(workspace=workspace, env=env)
    assert settings.read_only_mcp == []
    assert any("allow_read_only' is no longer honoured" in w for w in settings.warnings)


def test_mcp_tools_are_asked_by_default() -> None:
    assert ("mcp", "*", "ask") in {
        (r.permission, r.pattern, r.action) for r in DEFAULT_PERMISSION_RULES
    }
