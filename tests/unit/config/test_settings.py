from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

import platformdirs
import pytest

from lsp_agent.config import catalog
from lsp_agent.config.load import load_settings, load_settings_from_environment, user_config_file
from lsp_agent.config.resolve import agent_model_ref, resolve_model
from lsp_agent.config.settings import (
    DEFAULT_PERMISSION_RULES,
    InvalidConfig,
    ModelNotConfigured,
    PermissionRule,
    Settings,
)
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.models import ModelInfo


class Sandbox:
    """A home, an XDG config dir and a workspace, all under tmp_path."""

    def __init__(self, tmp_path: Path) -> None:
        self.root = tmp_path / "box"
        self.home = self.root / "home"
        self.xdg = self.root / "xdg"
        self.workspace = self.root / "project"
        for folder in (self.home, self.xdg, self.workspace):
            folder.mkdir(parents=True)
        self.env: dict[str, str] = {"HOME": str(self.home), "XDG_CONFIG_HOME": str(self.xdg)}

    @property
    def user_file(self) -> Path:
        return self.xdg / "lsp-agent" / "config.json"

    @property
    def project_file(self) -> Path:
        return self.workspace / ".lsp-agent.json"

    def write(self, path: Path, data: Any) -> Path:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(data if isinstance(data, str) else json.dumps(data), encoding="utf-8")
        return path

    def user(self, data: Any) -> Path:
        return self.write(self.user_file, data)

    def project(self, data: Any) -> Path:
        return self.write(self.project_file, data)

    def extra(self, data: Any, name: str = "extra.json") -> Path:
        path = self.write(self.root / name, data)
        self.env["LSP_AGENT_CONFIG"] = str(path)
        return path

    def trust_project(self, **more: Any) -> None:
        self.user({"trusted_folders": [str(self.workspace)], **more})

    def load(
        self,
        *,
        cli: dict[str, Any] | None = None,
        init: dict[str, Any] | None = None,
    ) -> Settings:
        return load_settings(
            workspace=self.workspace, env=self.env, cli_overrides=cli, init_options=init
        )


@pytest.fixture
def box(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Sandbox:
    sandbox = Sandbox(tmp_path)
    monkeypatch.setenv("HOME", str(sandbox.home))
    monkeypatch.setenv("XDG_CONFIG_HOME", str(sandbox.xdg))
    for name in ("LSP_AGENT_MODEL", "LSP_AGENT_CONFIG", "ANTHROPIC_BASE_URL", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return sandbox


def config_rules(settings: Settings) -> list[tuple[str, str, str, str]]:
    return [
        (rule.permission, rule.pattern, rule.action, rule.source)
        for rule in settings.permission_rules
        if rule.source != "built-in"
    ]


# --- locations --------------------------------------------------------------------------------


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG rule is for Linux/BSD")
def test_user_file_follows_xdg_config_home_like_platformdirs(box: Sandbox) -> None:
    expected = Path(platformdirs.user_config_dir("lsp-agent")) / "config.json"
    assert expected == box.user_file
    assert user_config_file(box.env) == box.user_file
    assert user_config_file(dict(os.environ)) == expected


@pytest.mark.skipif(sys.platform in ("win32", "darwin"), reason="XDG rule is for Linux/BSD")
def test_user_file_falls_back_to_home_dot_config(box: Sandbox) -> None:
    assert user_config_file({"HOME": str(box.home)}) == (
        box.home / ".config" / "lsp-agent" / "config.json"
    )
    assert user_config_file({"HOME": str(box.home), "XDG_CONFIG_HOME": "  "}) == (
        box.home / ".config" / "lsp-agent" / "config.json"
    )


# --- defaults and sources ---------------------------------------------------------------------


def test_defaults_without_any_file(box: Sandbox) -> None:
    settings = box.load()
    assert settings.model is None
    assert settings.small_model is None
    assert settings.mode == "build"
    assert settings.max_steps == 50
    assert settings.snapshots is True
    assert settings.instructions == []
    assert settings.trusted_folders == []
    assert settings.providers == {}
    assert settings.retry.max_retries == 2
    assert settings.title.enabled is True
    assert settings.thinking.enabled is False
    assert settings.thinking.budget_tokens == 4000
    assert settings.compaction.auto is True
    assert settings.compaction.reserve_tokens is None
    assert settings.compaction.keep_recent_tokens is None
    assert settings.tool_output.max_lines == 2000
    assert settings.tool_output.max_bytes == 51200
    assert settings.webfetch.allow_hosts == []
    assert settings.permission_rules == list(DEFAULT_PERMISSION_RULES)
    assert settings.sources == []
    assert settings.project_trusted is False


def test_default_permission_rules_follow_the_contract() -> None:
    actions = {rule.permission: rule.action for rule in DEFAULT_PERMISSION_RULES}
    for name in ("read", "list", "glob", "grep", "todowrite", "question", "diagnostics"):
        assert actions[name] == "allow"
    for name in ("task", "skill"):
        assert actions[name] == "allow"
    for name in ("edit", "bash", "webfetch", "external_directory"):
        assert actions[name] == "ask"
    assert all(rule.pattern == "*" for rule in DEFAULT_PERMISSION_RULES)


def test_sources_list_the_files_read_in_layer_order(box: Sandbox) -> None:
    user = box.user({"max_steps": 10})
    project = box.project({"max_steps": 11})
    extra = box.extra({"max_steps": 12})
    settings = box.load(init={"max_steps": 13}, cli={"max_steps": 14})
    assert settings.sources == [str(user), str(project), str(extra)]
    assert settings.max_steps == 14


# --- layer order ------------------------------------------------------------------------------


def test_each_layer_overrides_the_one_below(box: Sandbox) -> None:
    box.env["LSP_AGENT_MODEL"] = "anthropic/from-env"
    assert box.load().model == "anthropic/from-env"
    box.user({"model": "anthropic/from-user"})
    assert box.load().model == "anthropic/from-user"
    box.project({"model": "anthropic/from-project"})
    assert box.load().model == "anthropic/from-project"
    box.extra({"model": "anthropic/from-extra"})
    assert box.load().model == "anthropic/from-extra"
    init = {"model": "anthropic/from-editor"}
    assert box.load(init=init).model == "anthropic/from-editor"
    cli = {"model": "anthropic/from-cli"}
    assert box.load(init=init, cli=cli).model == "anthropic/from-cli"


def test_lsp_agent_model_is_used_when_no_file_sets_a_model(box: Sandbox) -> None:
    box.env["LSP_AGENT_MODEL"] = "openai/gpt-4.1"
    box.user({"max_steps": 7})
    settings = box.load()
    assert settings.model == "openai/gpt-4.1"
    assert settings.max_steps == 7


def test_blank_lsp_agent_model_is_ignored(box: Sandbox) -> None:
    box.env["LSP_AGENT_MODEL"] = "  "
    assert box.load().model is None


def test_invalid_lsp_agent_model_names_the_variable(box: Sandbox) -> None:
    box.env["LSP_AGENT_MODEL"] = "claude"
    with pytest.raises(InvalidConfig, match=r"^LSP_AGENT_MODEL: key 'model'"):
        box.load()


def test_cli_overrides_skip_none_values(box: Sandbox) -> None:
    box.user({"mode": "plan", "max_steps": 9})
    settings = box.load(cli={"model": None, "mode": None, "max_steps": 3})
    assert settings.mode == "plan"
    assert settings.max_steps == 3


def test_cli_overrides_are_validated(box: Sandbox) -> None:
    with pytest.raises(InvalidConfig, match=r"^command line: key 'mode'"):
        box.load(cli={"mode": "yolo"})
    with pytest.raises(InvalidConfig, match=r"^command line: unknown key 'turbo'"):
        box.load(cli={"turbo": True})


def test_init_options_merge_over_files_and_are_named_in_errors(box: Sandbox) -> None:
    box.user({"thinking": {"enabled": True}})
    settings = box.load(init={"thinking": {"budget_tokens": 9000}, "snapshots": False})
    assert settings.thinking.enabled is True
    assert settings.thinking.budget_tokens == 9000
    assert settings.snapshots is False
    with pytest.raises(InvalidConfig, match=r"^initializationOptions: unknown key 'retry\.bar'"):
        box.load(init={"retry": {"bar": 1}})


def test_init_options_may_configure_providers(box: Sandbox) -> None:
    init = {
        "providers": {
            "local": {
                "type": "openai-compatible",
                "base_url": "http://127.0.0.1:8080/v1",
                "api_key_env": "LOCAL_KEY",
            }
        }
    }
    settings = box.load(init=init)
    assert settings.providers["local"].base_url == "http://127.0.0.1:8080/v1"


# --- merge rules ------------------------------------------------------------------------------


def test_objects_merge_per_key(box: Sandbox) -> None:
    box.trust_project(
        retry={"max_retries": 5},
        compaction={"auto": False},
        providers={"local": {"type": "openai-compatible", "base_url": "http://h:1/v1"}},
    )
    box.project(
        {
            "compaction": {"reserve_tokens": 1000},
            "providers": {"local": {"models": {"m": {"context_window": 4096}}}},
        }
    )
    settings = box.load()
    assert settings.retry.max_retries == 5
    assert settings.compaction.auto is False
    assert settings.compaction.reserve_tokens == 1000
    local = settings.providers["local"]
    assert local.type == "openai-compatible"
    assert local.base_url == "http://h:1/v1"
    assert local.models["m"].context_window == 4096


def test_model_overrides_merge_per_field_across_layers(box: Sandbox) -> None:
    box.user({"providers": {"anthropic": {"models": {"x": {"context_window": 1000}}}}})
    box.project({"providers": {"anthropic": {"models": {"x": {"max_output": 10}}}}})
    override = box.load().providers["anthropic"].models["x"]
    assert (override.context_window, override.max_output) == (1000, 10)


def test_arrays_replace(box: Sandbox) -> None:
    box.user({"instructions": ["a.md", "b.md"], "webfetch": {"allow_hosts": ["h1", "h2"]}})
    box.project({"instructions": ["c.md"]})
    settings = box.load(init={"webfetch": {"allow_hosts": ["h3"]}})
    assert settings.instructions == ["c.md"]
    assert settings.webfetch.allow_hosts == ["h3"]


def test_null_means_not_set_here(box: Sandbox) -> None:
    box.user({"max_steps": 9, "model": "openai/gpt-4.1", "compaction": {"reserve_tokens": 5}})
    box.project({"max_steps": None, "model": None, "compaction": {"reserve_tokens": None}})
    settings = box.load()
    assert settings.max_steps == 9
    assert settings.model == "openai/gpt-4.1"
    assert settings.compaction.reserve_tokens == 5


def test_permission_rules_of_later_layers_are_appended(box: Sandbox) -> None:
    user = box.user({"permission": {"bash": {"*": "ask", "git status*": "allow"}, "edit": "allow"}})
    project = box.project({"permission": {"bash": {"rm *": "deny"}}})
    extra = box.extra({"permission": {"webfetch": "deny"}})
    settings = box.load(
        init={"permission": {"edit": {"*.lock": "deny"}}},
        cli={"permission": "ask"},
    )
    assert settings.permission_rules[: len(DEFAULT_PERMISSION_RULES)] == list(
        DEFAULT_PERMISSION_RULES
    )
    assert config_rules(settings) == [
        ("bash", "*", "ask", str(user)),
        ("bash", "git status*", "allow", str(user)),
        ("edit", "*", "allow", str(user)),
        ("bash", "rm *", "deny", str(project)),
        ("webfetch", "*", "deny", str(extra)),
        ("edit", "*.lock", "deny", "initializationOptions"),
        ("*", "*", "ask", "command line"),
    ]


def test_permission_string_is_a_wildcard_rule(box: Sandbox) -> None:
    box.user({"permission": "deny"})
    assert config_rules(box.load()) == [("*", "*", "deny", str(box.user_file))]


def test_a_list_of_rule_objects_keeps_its_order(box: Sandbox) -> None:
    """For writers whose objects have no order (a Lua table from Neovim's ``server_config``)."""
    box.user({"permission": {"bash": [{"*": "ask"}, {"curl *": "deny"}, {"curl -I *": "allow"}]}})
    assert [rule[1:3] for rule in config_rules(box.load())] == [
        ("*", "ask"),
        ("curl *", "deny"),
        ("curl -I *", "allow"),
    ]


def test_permission_patterns_expand_home(box: Sandbox) -> None:
    box.user({"permission": {"external_directory": {"~/notes/*": "allow", "~": "deny"}}})
    patterns = [rule[1] for rule in config_rules(box.load())]
    assert patterns == [os.path.join(str(box.home), "notes/*"), str(box.home)]


def test_permission_rule_is_frozen() -> None:
    rule = PermissionRule(permission="bash", pattern="ls *", action="allow", source="x")
    with pytest.raises(ValueError, match="frozen"):
        rule.action = "deny"  # type: ignore[misc]


# --- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"foo": 1}, "foo"),
        ({"retry": {"max_retries": 1, "bar": 2}}, "retry.bar"),
        ({"providers": {"local": {"type": "openai", "url": "x"}}}, "providers.local.url"),
        (
            {"providers": {"anthropic": {"models": {"m": {"window": 1}}}}},
            "providers.anthropic.models.m.window",
        ),
        ({"permission_rules": []}, "permission_rules"),
        ({"sources": []}, "sources"),
    ],
)
def test_unknown_key_names_key_and_file(box: Sandbox, data: dict[str, Any], key: str) -> None:
    path = box.project(data)
    with pytest.raises(ConfigError) as info:
        box.load()
    assert str(info.value) == f"{path}: unknown key '{key}'"
    assert isinstance(info.value, InvalidConfig)
    assert info.value.source == str(path)
    assert info.value.key == key


def test_invalid_json_names_file_and_line(box: Sandbox) -> None:
    path = box.user('{\n  "model": "anthropic/x",\n  "max_steps": 5,,\n}\n')
    with pytest.raises(InvalidConfig) as info:
        box.load()
    message = str(info.value)
    assert message.startswith(f"{path}: invalid JSON at line 3,")


def test_top_level_must_be_an_object(box: Sandbox) -> None:
    path = box.project("[1, 2]")
    with pytest.raises(InvalidConfig, match="expected a JSON object") as info:
        box.load()
    assert info.value.source == str(path)


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"max_steps": "50"}, "max_steps"),
        ({"max_steps": 0}, "max_steps"),
        ({"mode": "fast"}, "mode"),
        ({"snapshots": "yes"}, "snapshots"),
        ({"instructions": "AGENTS.md"}, "instructions"),
        ({"model": "claude-sonnet-4-5"}, "model"),
        ({"retry": {"max_retries": -1}}, "retry.max_retries"),
        ({"thinking": {"budget_tokens": 10}}, "thinking.budget_tokens"),
        ({"tool_output": {"max_bytes": 1.5}}, "tool_output.max_bytes"),
        ({"providers": {"x": {"type": "gemini"}}}, "providers.x.type"),
        ({"providers": {"x": {"type": "openai", "base_url": "ftp://h"}}}, "providers.x.base_url"),
        (
            {"providers": {"anthropic": {"models": {"m": {"input_price": -1}}}}},
            "providers.anthropic.models.m.input_price",
        ),
        ({"permission": {"bash": {"ls *": "yes"}}}, "permission.bash.ls *"),
        ({"permission": {"bash": ["ls"]}}, "permission.bash.0"),
        ({"permission": {"bash": [{"*": "ask"}, {"ls *": "yes"}]}}, "permission.bash.1.ls *"),
        ({"permission": {"bash": 3}}, "permission.bash"),
        ({"permission": "maybe"}, "permission"),
        ({"permission": 3}, "permission"),
    ],
)
def test_wrong_type_names_file_and_key(box: Sandbox, data: dict[str, Any], key: str) -> None:
    path = box.user(data)
    with pytest.raises(InvalidConfig) as info:
        box.load()
    assert str(info.value).startswith(f"{path}: key '{key}': ")
    assert info.value.key == key


def test_api_key_env_must_be_a_name_and_the_value_is_not_echoed(box: Sandbox) -> None:
    secret = "sk-ant-api03-abcdef"
    box.user({"providers": {"anthropic": {"api_key_env": secret}}})
    with pytest.raises(InvalidConfig, match=r"providers\.anthropic\.api_key_env") as info:
        box.load()
    assert secret not in str(info.value)


def test_custom_provider_needs_a_type(box: Sandbox) -> None:
    path = box.user({"providers": {"local": {"base_url": "http://127.0.0.1:1/v1"}}})
    with pytest.raises(InvalidConfig) as info:
        box.load()
    assert str(info.value).startswith(f"{path}: key 'providers.local.type': required")


def test_type_set_in_another_layer_is_enough(box: Sandbox) -> None:
    box.user({"providers": {"local": {"type": "openai-compatible"}}})
    settings = box.load(init={"providers": {"local": {"base_url": "http://h/v1"}}})
    assert settings.providers["local"].type == "openai-compatible"


def test_builtin_provider_type_cannot_change(box: Sandbox) -> None:
    path = box.user({"providers": {"anthropic": {"type": "openai"}}})
    with pytest.raises(InvalidConfig) as info:
        box.load()
    assert str(info.value).startswith(f"{path}: key 'providers.anthropic.type'")


def test_unreadable_config_path_is_an_error(box: Sandbox) -> None:
    box.project_file.mkdir()
    with pytest.raises(InvalidConfig, match="cannot read") as info:
        box.load()
    assert info.value.source == str(box.project_file)


# --- LSP_AGENT_CONFIG -------------------------------------------------------------------------


def test_lsp_agent_config_is_merged_after_the_project_file(box: Sandbox) -> None:
    box.project({"mode": "plan", "max_steps": 3})
    box.extra({"max_steps": 4})
    settings = box.load()
    assert settings.mode == "plan"
    assert settings.max_steps == 4


def test_lsp_agent_config_relative_path_lands_in_the_workspace_and_is_refused(
    box: Sandbox,
) -> None:
    box.write(box.workspace / "conf" / "agent.json", {"max_steps": 8})
    box.env["LSP_AGENT_CONFIG"] = "conf/agent.json"
    with pytest.raises(InvalidConfig, match=r"conf/agent.json.*inside the workspace folder"):
        box.load()


def test_lsp_agent_config_missing_file_is_an_error(box: Sandbox) -> None:
    box.env["LSP_AGENT_CONFIG"] = str(box.root / "nope.json")
    with pytest.raises(InvalidConfig, match=r"file not found.*LSP_AGENT_CONFIG"):
        box.load()


def test_lsp_agent_config_may_set_providers(box: Sandbox) -> None:
    box.extra({"providers": {"openai": {"base_url": "http://proxy/v1", "api_key_env": "PK"}}})
    assert box.load().providers["openai"].api_key_env == "PK"


def test_errors_in_lsp_agent_config_name_that_file(box: Sandbox) -> None:
    path = box.extra({"oops": True})
    with pytest.raises(InvalidConfig, match=f"^{path}: unknown key 'oops'"):
        box.load()


# --- trust ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("data", "key"),
    [
        ({"permission": {"bash": {"git *": "allow"}}}, "permission.bash.git *"),
        ({"permission": {"edit": "allow"}}, "permission.edit"),
        ({"permission": "allow"}, "permission"),
        (
            {"providers": {"openai": {"base_url": "http://evil.example/v1"}}},
            "providers.openai.base_url",
        ),
        (
            {"providers": {"anthropic": {"api_key_env": "OTHER_KEY"}}},
            "providers.anthropic.api_key_env",
        ),
        ({"trusted_folders": ["/"]}, "trusted_folders"),
        ({"webfetch": {"allow_hosts": ["169.254.169.254"]}}, "webfetch.allow_hosts"),
        ({"completion": {"enabled": True}}, "completion.enabled"),
        ({"instructions": ["/etc/passwd"]}, "instructions.0"),
        ({"instructions": ["ok.md", "../../secret.md"]}, "instructions.1"),
        ({"instructions": ["~/.ssh/id_rsa"]}, "instructions.0"),
    ],
)
def test_untrusted_project_may_not_loosen(box: Sandbox, data: dict[str, Any], key: str) -> None:
    path = box.project(data)
    with pytest.raises(InvalidConfig) as info:
        box.load()
    assert str(info.value).startswith(f"{path}: key '{key}': ")
    assert "trusted_folders" in str(info.value)
    assert info.value.key == key


def test_untrusted_project_may_tighten_and_set_ordinary_keys(box: Sandbox) -> None:
    box.user({"permission": {"bash": "allow"}})
    path = box.project(
        {
            "model": "openai/gpt-4.1",
            "mode": "plan",
            "max_steps": 5,
            "instructions": ["docs/CONVENTIONS.md"],
            "permission": {"bash": {"rm *": "deny", "curl *": "ask"}, "edit": "ask"},
            "providers": {"local": {"type": "openai-compatible", "models": {"m": {}}}},
        }
    )
    settings = box.load()
    assert settings.project_trusted is False
    assert settings.mode == "plan"
    assert config_rules(settings)[1:] == [
        ("bash", "rm *", "deny", str(path)),
        ("bash", "curl *", "ask", str(path)),
        ("edit", "*", "ask", str(path)),
    ]


def test_trusted_project_may_do_anything(box: Sandbox) -> None:
    box.trust_project()
    box.project(
        {
            "permission": {"bash": {"git *": "allow"}},
            "providers": {"openai": {"base_url": "http://proxy/v1", "api_key_env": "PK"}},
            "webfetch": {"allow_hosts": ["localhost:8080"]},
        }
    )
    settings = box.load()
    assert settings.project_trusted is True
    assert ("bash", "git *", "allow", str(box.project_file)) in config_rules(settings)
    assert settings.providers["openai"].base_url == "http://proxy/v1"
    assert settings.webfetch.allow_hosts == ["localhost:8080"]


def test_trusted_folders_expand_tilde_and_resolve_symlinks(box: Sandbox) -> None:
    real = box.home / "src" / "proj"
    real.mkdir(parents=True)
    link = box.root / "link"
    link.symlink_to(real)
    box.user({"trusted_folders": ["~/src/proj"]})
    box.write(link / ".lsp-agent.json", {"permission": {"bash": "allow"}})
    settings = load_settings(workspace=link, env=box.env)
    assert settings.project_trusted is True
    assert settings.trusted_folders == ["~/src/proj"]


def test_trust_is_exact_not_for_subfolders(box: Sandbox) -> None:
    box.user({"trusted_folders": [str(box.root)]})
    box.project({"permission": {"bash": "allow"}})
    with pytest.raises(InvalidConfig, match=r"permission\.bash"):
        box.load()


def test_relative_trusted_folder_is_an_error(box: Sandbox) -> None:
    path = box.user({"trusted_folders": ["/abs", "src/proj"]})
    with pytest.raises(InvalidConfig, match=f"^{path}: key 'trusted_folders.1'"):
        box.load()


def test_trusted_folders_only_count_in_the_user_file(box: Sandbox) -> None:
    box.extra({"trusted_folders": [str(box.workspace)]})
    box.project({"permission": {"bash": "allow"}})
    with pytest.raises(InvalidConfig, match="untrusted project"):
        box.load(init={"trusted_folders": [str(box.workspace)]})


def test_trusted_folders_outside_the_user_file_are_ignored_with_a_warning(box: Sandbox) -> None:
    box.trust_project()
    box.project({"trusted_folders": ["/elsewhere"]})
    settings = box.load(init={"trusted_folders": ["/x"]})
    assert settings.trusted_folders == [str(box.workspace)]
    assert len(settings.warnings) == 2
    assert str(box.project_file) in settings.warnings[0]
    assert "initializationOptions" in settings.warnings[1]


# --- resolve_model ----------------------------------------------------------------------------


def test_resolve_anthropic_model_from_the_catalog(box: Sandbox) -> None:
    box.user({"model": "anthropic/claude-sonnet-4-5"})
    resolved = resolve_model(box.load())
    assert resolved.provider_type == "anthropic"
    assert resolved.api_key_env == "ANTHROPIC_API_KEY"
    assert resolved.base_url is None
    assert resolved.ref == "anthropic/claude-sonnet-4-5"
    assert resolved.info == catalog.CATALOG["anthropic/claude-sonnet-4-5"]


def test_resolve_openai_model_from_the_catalog(box: Sandbox) -> None:
    resolved = resolve_model(box.load(), "openai/gpt-4.1")
    assert resolved.provider_type == "openai"
    assert resolved.api_key_env == "OPENAI_API_KEY"
    assert resolved.info.context_window == catalog.CATALOG["openai/gpt-4.1"].context_window
    assert resolved.info.input_price == 2.0


def test_resolve_openai_compatible_provider(box: Sandbox) -> None:
    box.user(
        {
            "model": "local/qwen3-coder",
            "providers": {
                "local": {
                    "type": "openai-compatible",
                    "base_url": "http://127.0.0.1:11434/v1",
                    "api_key_env": "LOCAL_API_KEY",
                    "models": {"qwen3-coder": {"context_window": 32768}},
                }
            },
        }
    )
    resolved = resolve_model(box.load())
    assert resolved.provider_type == "openai-compatible"
    assert resolved.base_url == "http://127.0.0.1:11434/v1"
    assert resolved.api_key_env == "LOCAL_API_KEY"
    assert resolved.info == ModelInfo(
        provider="local", model="qwen3-coder", context_window=32768, max_output=8192
    )


def test_openai_compatible_without_api_key_env_sends_no_key(box: Sandbox) -> None:
    box.user({"providers": {"ollama": {"type": "openai-compatible", "base_url": "http://h/v1"}}})
    assert resolve_model(box.load(), "ollama/llama3").api_key_env is None


def test_openai_compatible_without_endpoint_is_an_error(box: Sandbox) -> None:
    box.user({"providers": {"ollama": {"type": "openai-compatible"}}})
    with pytest.raises(ConfigError, match=r"providers\.ollama\.base_url"):
        resolve_model(box.load(), "ollama/llama3")


def test_base_url_falls_back_to_the_sdk_variables(box: Sandbox) -> None:
    box.env["ANTHROPIC_BASE_URL"] = "http://anthropic-proxy"
    box.env["OPENAI_BASE_URL"] = "http://openai-proxy/v1"
    box.user({"providers": {"compat": {"type": "openai-compatible"}}})
    settings = box.load()
    assert resolve_model(settings, "anthropic/claude-haiku-4-5").base_url == (
        "http://anthropic-proxy"
    )
    assert resolve_model(settings, "openai/gpt-5").base_url == "http://openai-proxy/v1"
    assert resolve_model(settings, "compat/m").base_url == "http://openai-proxy/v1"


def test_configured_base_url_beats_the_sdk_variable(box: Sandbox) -> None:
    box.env["OPENAI_BASE_URL"] = "http://env/v1"
    box.user({"providers": {"openai": {"base_url": "http://conf/v1"}}})
    assert resolve_model(box.load(), "openai/gpt-5").base_url == "http://conf/v1"


def test_custom_provider_of_anthropic_type_uses_catalog_and_default_key(box: Sandbox) -> None:
    box.user({"providers": {"work": {"type": "anthropic", "base_url": "https://gw.example"}}})
    resolved = resolve_model(box.load(), "work/claude-opus-4-1")
    assert resolved.provider_type == "anthropic"
    assert resolved.api_key_env == "ANTHROPIC_API_KEY"
    assert resolved.info.provider == "work"
    assert resolved.info.ref == "work/claude-opus-4-1"
    assert resolved.info.output_price == 75.0


def test_unknown_provider(box: Sandbox) -> None:
    with pytest.raises(ConfigError) as info:
        resolve_model(box.load(), "mistral/large")
    assert str(info.value) == "unknown provider 'mistral' (configure it under providers)"


def test_missing_model_says_what_to_set(box: Sandbox) -> None:
    with pytest.raises(ModelNotConfigured) as info:
        resolve_model(box.load())
    assert isinstance(info.value, ConfigError)
    assert info.value.variable == "LSP_AGENT_MODEL"
    assert info.value.config_key == "model"
    assert "LSP_AGENT_MODEL" in str(info.value)
    assert "lsp-agent doctor" in str(info.value)


@pytest.mark.parametrize("ref", ["claude-sonnet-4-5", "anthropic/", "/gpt-4.1"])
def test_ref_must_be_provider_slash_model(box: Sandbox, ref: str) -> None:
    with pytest.raises(ConfigError, match="expected 'provider/model'"):
        resolve_model(box.load(), ref)


def test_model_names_may_contain_slashes(box: Sandbox) -> None:
    box.user({"providers": {"router": {"type": "openai-compatible", "base_url": "http://r/v1"}}})
    resolved = resolve_model(box.load(), "router/meta-llama/llama-3-70b")
    assert resolved.info.provider == "router"
    assert resolved.info.model == "meta-llama/llama-3-70b"


def test_config_overrides_catalog_per_field(box: Sandbox) -> None:
    box.user({"providers": {"anthropic": {"models": {"claude-sonnet-4-5": {"input_price": 2.5}}}}})
    info = resolve_model(box.load(), "anthropic/claude-sonnet-4-5").info
    base = catalog.CATALOG["anthropic/claude-sonnet-4-5"]
    assert info.input_price == 2.5
    assert info.output_price == base.output_price
    assert info.context_window == base.context_window
    assert info.cache_read_price == base.cache_read_price


def test_unknown_model_with_overrides(box: Sandbox) -> None:
    box.user(
        {
            "providers": {
                "anthropic": {
                    "models": {
                        "claude-test": {
                            "context_window": 200000,
                            "max_output": 8192,
                            "input_price": 3.0,
                            "output_price": 15.0,
                        }
                    }
                }
            }
        }
    )
    info = resolve_model(box.load(), "anthropic/claude-test").info
    assert (info.context_window, info.max_output, info.input_price, info.output_price) == (
        200000,
        8192,
        3.0,
        15.0,
    )


def test_unknown_model_gets_the_contract_defaults(box: Sandbox) -> None:
    info = resolve_model(box.load(), "openai/brand-new-model").info
    assert info.context_window == 128_000
    assert info.max_output == 8_192
    assert info.input_price is None
    assert info.output_price is None


def test_dated_snapshots_use_the_catalog_entry(box: Sandbox) -> None:
    info = resolve_model(box.load(), "anthropic/claude-sonnet-4-5-20250929").info
    assert info.model == "claude-sonnet-4-5-20250929"
    assert info.input_price == 3.0
    assert resolve_model(box.load(), "openai/gpt-4.1-2025-04-14").info.output_price == 8.0
    assert resolve_model(box.load(), "anthropic/claude-sonnet-4-20250514").info.max_output == 64000


def test_small_model_is_the_title_and_summary_fallback(box: Sandbox) -> None:
    box.user({"model": "anthropic/claude-sonnet-4-5"})
    assert agent_model_ref(box.load(), "title") is None  # the agent's default applies
    box.user({"model": "anthropic/claude-sonnet-4-5", "small_model": "anthropic/claude-haiku-4-5"})
    settings = box.load()
    assert agent_model_ref(settings, "title") == "anthropic/claude-haiku-4-5"
    assert agent_model_ref(settings, "summary") == "anthropic/claude-haiku-4-5"
    assert agent_model_ref(settings, "task") is None


# --- derived values, catalog, environment helper ----------------------------------------------


def test_compaction_defaults_derive_from_the_model() -> None:
    settings = Settings()
    big = ModelInfo(provider="a", model="b", context_window=200_000, max_output=64_000)
    small = ModelInfo(provider="a", model="b", context_window=16_000, max_output=8_192)
    assert settings.compaction.reserve_tokens_for(big) == 50_000
    assert settings.compaction.keep_recent_tokens_for(big) == 8_000
    assert settings.compaction.reserve_tokens_for(small) == 4_000
    assert settings.compaction.keep_recent_tokens_for(small) == 4_000
    tuned = Settings.model_validate({"compaction": {"reserve_tokens": 1, "keep_recent_tokens": 2}})
    assert tuned.compaction.reserve_tokens_for(big) == 1
    assert tuned.compaction.keep_recent_tokens_for(big) == 2


@pytest.mark.parametrize(
    "ref",
    [
        "anthropic/claude-sonnet-4-5",
        "anthropic/claude-opus-4-1",
        "anthropic/claude-haiku-4-5",
        "openai/gpt-4.1",
        "openai/gpt-4.1-mini",
        "openai/gpt-5",
        "openai/o4-mini",
    ],
)
def test_catalog_has_limits_and_prices(ref: str) -> None:
    info = catalog.CATALOG[ref]
    assert info.ref == ref
    assert info.context_window > info.max_output > 0
    assert info.input_price is not None
    assert info.output_price is not None
    assert info.output_price >= info.input_price
    assert info.cache_read_price is not None
    assert info.cache_read_price < info.input_price


def test_catalog_lookup_misses_return_none() -> None:
    assert catalog.lookup("anthropic", "gpt-4.1") is None
    assert catalog.lookup("openai", "no-such-model") is None


def test_load_settings_from_environment_uses_os_environ_and_cwd(
    box: Sandbox, monkeypatch: pytest.MonkeyPatch
) -> None:
    box.project({"max_steps": 21})
    monkeypatch.setenv("LSP_AGENT_MODEL", "openai/gpt-5")
    monkeypatch.chdir(box.workspace)
    settings = load_settings_from_environment()
    assert settings.model == "openai/gpt-5"
    assert settings.max_steps == 21


CONTRACT_EXAMPLE = {
    "model": "anthropic/claude-sonnet-4-5",
    "small_model": "anthropic/claude-haiku-4-5",
    "mode": "build",
    "max_steps": 50,
    "snapshots": True,
    "instructions": ["docs/CONVENTIONS.md"],
    "trusted_folders": ["~/src/my-project"],
    "permission": {
        "edit": "ask",
        "bash": {"*": "ask", "git status*": "allow", "rm *": "deny"},
        "webfetch": "ask",
        "external_directory": "ask",
    },
    "providers": {
        "anthropic": {
            "models": {
                "claude-test": {
                    "context_window": 200000,
                    "max_output": 8192,
                    "input_price": 3.0,
                    "output_price": 15.0,
                }
            }
        },
        "local": {
            "type": "openai-compatible",
            "base_url": "http://127.0.0.1:11434/v1",
            "api_key_env": "LOCAL_API_KEY",
            "models": {"qwen3-coder": {"context_window": 32768}},
        },
    },
    "retry": {"max_retries": 2},
    "title": {"enabled": True},
    "thinking": {"enabled": False, "budget_tokens": 4000},
    "compaction": {"auto": True, "reserve_tokens": None, "keep_recent_tokens": None},
    "tool_output": {"max_lines": 2000, "max_bytes": 51200},
    "webfetch": {"allow_hosts": []},
    "agents": {
        "plan": {"model": "anthropic/claude-opus-4-5", "reasoning_effort": "high"},
        "task": {"model": "anthropic/claude-haiku-4-5", "max_tokens": 16000},
        "title": {"model": "anthropic/claude-haiku-4-5"},
    },
}


def test_the_contract_example_is_a_valid_user_file(box: Sandbox) -> None:
    box.user(CONTRACT_EXAMPLE)
    settings = box.load()
    assert settings.trusted_folders == ["~/src/my-project"]
    assert len(config_rules(settings)) == 6
    local = resolve_model(settings, "local/qwen3-coder")
    assert local.info.context_window == 32768
    assert local.api_key_env == "LOCAL_API_KEY"
    assert resolve_model(settings).info.input_price == 3.0
