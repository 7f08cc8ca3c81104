"""Config mistakes found by meaning, not by shape, are errors like an unknown key: a permission
name nothing answers to, an unknown provider in ``model`` (naming the layer and the key); a
reasoning setting the provider ignores is a warning; ``doctor`` says where the model came
from."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.app import AgentInputs
from lsp_agent.config.load import load_settings
from lsp_agent.config.resolve import check_agent_models, ignored_settings, resolve_model
from lsp_agent.config.settings import InvalidConfig, Settings
from lsp_agent.doctor import _configuration

LOCAL = {"local": {"type": "openai-compatible", "base_url": "http://127.0.0.1:1/v1"}}


class Layers:
    """A user file, a project file and an environment, all under ``tmp_path``."""

    def __init__(self, tmp_path: Path) -> None:
        self.home = tmp_path / "home"
        self.workspace = tmp_path / "ws"
        self.workspace.mkdir()
        self.user_file = tmp_path / "user" / "config.json"
        self.env: dict[str, str] = {"HOME": str(self.home)}

    def user(self, data: dict[str, Any]) -> Path:
        self.user_file.parent.mkdir(parents=True, exist_ok=True)
        self.user_file.write_text(json.dumps(data))
        return self.user_file

    def load(self, **kwargs: Any) -> Settings:
        return load_settings(
            workspace=self.workspace, env=self.env, user_file=self.user_file, **kwargs
        )


@pytest.fixture
def layers(tmp_path: Path) -> Layers:
    return Layers(tmp_path)


@pytest.mark.parametrize(
    ("permission", "key", "hint"),
    [
        (
            {"bassh": "allow"},
            "permission.bassh",
            "unknown permission 'bassh' (did you mean 'bash'?)",
        ),
        ({"edits": "ask"}, "permission.edits", "unknown permission 'edits' (did you mean 'edit'?)"),
        (
            {"bash": "ask", "webfech": {"*": "deny"}},
            "permission.webfech",
            "unknown permission 'webfech' (did you mean 'webfetch'?)",
        ),
        (
            {"write": "deny"},
            "permission.write",
            "unknown permission 'write' ('edit' covers write, edit and apply_patch)",
        ),
        ({"zz*": "deny"}, "permission.zz*", "unknown permission 'zz*';"),
    ],
)
def test_a_permission_nothing_answers_to_is_an_error_naming_file_and_key(
    layers: Layers, permission: dict[str, Any], key: str, hint: str
) -> None:
    path = layers.user({"permission": permission})

    with pytest.raises(InvalidConfig) as info:
        layers.load()

    assert str(info.value).startswith(f"{path}: key '{key}': {hint}")
    assert "one of read, list, glob, grep" in str(info.value)
    assert info.value.key == key


def test_a_misspelled_permission_from_the_editor_names_its_layer(layers: Layers) -> None:
    with pytest.raises(InvalidConfig) as info:
        layers.load(init_options={"permission": {"bassh": "allow"}})

    assert str(info.value).startswith("initializationOptions: key 'permission.bassh': ")


def test_wildcard_permissions_that_match_some_permission_are_fine(layers: Layers) -> None:
    layers.user({"permission": {"*": "ask", "bash*": "deny", "mcp": {"srv:*": "allow"}}})

    rules = layers.load().permission_rules

    assert [(r.permission, r.action) for r in rules[-3:]] == [
        ("*", "ask"),
        ("bash*", "deny"),
        ("mcp", "allow"),
    ]


def test_an_unknown_provider_in_model_names_the_file_and_the_key(layers: Layers) -> None:
    path = layers.user({"model": "foo/bar"})

    with pytest.raises(InvalidConfig) as info:
        resolve_model(layers.load())

    assert str(info.value) == (
        f"{path}: key 'model': unknown provider 'foo' (configure it under providers)"
    )
    assert info.value.key == "model"


def test_an_unknown_provider_names_the_layer_that_set_the_model(layers: Layers) -> None:
    layers.user({"model": "anthropic/claude-sonnet-4-5"})
    layers.env["LSP_AGENT_MODEL"] = "foo/bar"
    with pytest.raises(InvalidConfig) as flag:
        resolve_model(layers.load(cli_overrides={"model": "flagged/x"}))
    assert str(flag.value).startswith("command line: key 'model': unknown provider 'flagged'")

    layers.user_file.unlink()
    with pytest.raises(InvalidConfig) as variable:
        resolve_model(layers.load())
    assert str(variable.value) == (
        "LSP_AGENT_MODEL: unknown provider 'foo' (configure it under providers)"
    )


def test_an_agent_s_unknown_provider_names_its_file_and_key(layers: Layers) -> None:
    path = layers.user({"model": "anthropic/claude-sonnet-4-5", "small_model": "gone/x"})

    with pytest.raises(InvalidConfig) as info:
        check_agent_models(layers.load())

    assert str(info.value).startswith(f"{path}: key 'small_model': unknown provider 'gone'")


def test_origins_name_the_layer_that_set_each_key_last(layers: Layers) -> None:
    path = layers.user({"model": "anthropic/claude-sonnet-4-5", "retry": {"max_retries": 1}})
    layers.env["LSP_AGENT_MODEL"] = "openai/gpt-4.1"

    settings = layers.load(cli_overrides={"max_steps": 3})

    assert settings.origin("model") == str(path)  # a file wins over the variable
    assert settings.origin("retry.max_retries") == str(path)
    assert settings.origin("max_steps") == "command line"
    assert settings.origin("mode") == "built-in"


def test_reasoning_settings_an_openai_compatible_server_ignores_are_warnings(
    layers: Layers,
) -> None:
    path = layers.user(
        {
            "model": "local/qwen",
            "providers": LOCAL,
            "thinking": {"enabled": True},
            "agents": {
                "build": {"reasoning_effort": "high"},
                "task": {"model": "anthropic/claude-sonnet-4-5", "reasoning_effort": "low"},
            },
        }
    )

    warnings = ignored_settings(layers.load())

    assert warnings == [
        f"{path}: key 'agents.build.reasoning_effort' is ignored: local/qwen is served by an "
        "openai-compatible provider, which is sent no reasoning setting",
        f"{path}: key 'thinking.enabled' is ignored: local/qwen is served by an "
        "openai-compatible provider, which is sent no reasoning setting",
    ]


def test_doctor_says_where_the_model_came_from_and_warns_of_ignored_settings(
    tmp_path: Path,
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    env = {"HOME": str(tmp_path), "LSP_AGENT_MODEL": "anthropic/claude-sonnet-4-5"}
    checks, _, _ = _configuration(AgentInputs(workspace=workspace, env=env))
    (model,) = [c for c in checks if c.name == "model"]
    assert model.detail == "anthropic/claude-sonnet-4-5 (from LSP_AGENT_MODEL)"

    options = {
        "model": "local/qwen",
        "providers": LOCAL,
        "agents": {"plan": {"reasoning_effort": "medium"}},
    }
    inputs = AgentInputs(workspace=workspace, env={"HOME": str(tmp_path)}, init_options=options)
    checks, _, _ = _configuration(inputs)
    (model,) = [c for c in checks if c.name == "model"]
    assert model.detail == "local/qwen (from initializationOptions)"
    warned = [c.detail for c in checks if c.level == "warn" and c.name == "config"]
    assert warned == [
        "initializationOptions: key 'agents.plan.reasoning_effort' is ignored: local/qwen is "
        "served by an openai-compatible provider, which is sent no reasoning setting"
    ]
