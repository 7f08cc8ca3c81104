"""``agents``: what a config may say per agent, how its models resolve, the cheapest model of a
provider (the title and summary default), and what the core is given."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.app import AgentInputs, agent_options
from lsp_agent.config.load import load_settings
from lsp_agent.config.models import ConfiguredModels
from lsp_agent.config.resolve import (
    agent_model_ref,
    cheapest_model,
    check_agent_models,
    resolve_model,
)
from lsp_agent.config.settings import InvalidConfig, Settings
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.messages import ThinkingConfig
from lsp_agent.doctor import _configuration


def load(tmp_path: Path, data: dict[str, Any]) -> Settings:
    user = tmp_path / "config.json"
    user.write_text(json.dumps(data))
    workspace = tmp_path / "ws"
    workspace.mkdir(exist_ok=True)
    return load_settings(workspace=workspace, env={"HOME": str(tmp_path)}, user_file=user)


def settings(data: dict[str, Any]) -> Settings:
    return Settings.model_validate(data)


# -- the key -----------------------------------------------------------------------------------


def test_every_field_is_optional_and_layers_merge_per_agent(tmp_path: Path) -> None:
    user = tmp_path / "config.json"
    user.write_text(json.dumps({"agents": {"title": {"model": "openai/gpt-4o-mini"}}}))
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".lsp-agent.json").write_text(
        json.dumps({"agents": {"title": {"max_tokens": 40}, "plan": {}}})
    )
    loaded = load_settings(workspace=workspace, env={"HOME": str(tmp_path)}, user_file=user)
    title = loaded.agents.title
    assert (title.model, title.max_tokens, title.reasoning_effort) == (
        "openai/gpt-4o-mini",
        40,
        None,
    )
    assert loaded.agents.plan.model is None


@pytest.mark.parametrize(
    ("agents", "message"),
    [
        (
            {"titel": {}},
            "key 'agents': unknown agent 'titel': expected build, plan, task, title, summary, "
            "completion or commit",
        ),
        ({"title": {"modle": "a/b"}}, "unknown key 'agents.title.modle'"),
        ({"task": {"model": "gpt-5"}}, "key 'agents.task.model': expected 'provider/model'"),
        ({"build": {"max_tokens": 0}}, "key 'agents.build.max_tokens'"),
        ({"plan": {"reasoning_effort": "max"}}, "Input should be 'low', 'medium' or 'high'"),
    ],
)
def test_a_bad_entry_names_its_key(tmp_path: Path, agents: dict[str, Any], message: str) -> None:
    with pytest.raises(InvalidConfig, match=re.escape(message)):
        load(tmp_path, {"agents": agents})


# -- resolution --------------------------------------------------------------------------------


def test_small_model_is_only_the_side_agents_fallback() -> None:
    s = settings(
        {
            "small_model": "anthropic/claude-haiku-4-5",
            "agents": {"summary": {"model": "anthropic/claude-sonnet-4-5"}},
        }
    )
    assert agent_model_ref(s, "title") == "anthropic/claude-haiku-4-5"
    assert agent_model_ref(s, "summary") == "anthropic/claude-sonnet-4-5"
    assert agent_model_ref(s, "build") is None
    assert agent_model_ref(s, "task") is None


def test_an_agent_model_resolves_like_the_model_and_a_bad_one_fails_at_start() -> None:
    s = settings(
        {
            "model": "anthropic/claude-sonnet-4-5",
            "agents": {"task": {"model": "work/fast"}},
            "providers": {
                "work": {"type": "openai-compatible", "base_url": "http://127.0.0.1:1/v1"}
            },
        }
    )
    check_agent_models(s)
    assert resolve_model(s, agent_model_ref(s, "task")).base_url == "http://127.0.0.1:1/v1"
    bad = re.escape("key 'agents.title.model': unknown provider 'nowhere'")
    with pytest.raises(ConfigError, match=bad):
        check_agent_models(settings({"agents": {"title": {"model": "nowhere/x"}}}))
    with pytest.raises(ConfigError, match=r": key 'small_model': unknown provider 'gone'"):
        check_agent_models(settings({"small_model": "gone/x"}))


@pytest.mark.parametrize(
    ("session", "cheapest"),
    [
        ("anthropic/claude-opus-4-5", "anthropic/claude-3-5-haiku"),
        ("anthropic/claude-not-in-the-catalog", "anthropic/claude-3-5-haiku"),
        ("openai/gpt-5", "openai/gpt-4.1-nano"),  # gpt-5-nano costs less, but reasons first
        ("openai/gpt-4o", "openai/gpt-4.1-nano"),
    ],
)
def test_the_cheapest_model_is_the_providers_lowest_list_price(session: str, cheapest: str) -> None:
    found = cheapest_model(settings({}), session)
    assert found is not None
    assert found.ref == cheapest


def test_the_cheapest_model_has_the_context_asked_for() -> None:
    found = cheapest_model(settings({}), "openai/gpt-4o", min_context_window=1_000_000)
    assert found is not None
    assert found.ref == "openai/gpt-4.1-nano"
    big = settings(
        {"providers": {"openai": {"models": {"gpt-4o-mini": {"context_window": 2**21}}}}}
    )
    found = cheapest_model(big, "openai/gpt-4o", min_context_window=2**21)
    assert found is not None
    assert found.ref == "openai/gpt-4o-mini"  # the only one that large, by the override
    assert cheapest_model(settings({}), "anthropic/x", min_context_window=10**6) is None


def test_a_configured_providers_cheapest_is_among_its_priced_models() -> None:
    s = settings(
        {
            "providers": {
                "work": {
                    "type": "anthropic",
                    "base_url": "https://gw.example.com",
                    "models": {
                        "claude-sonnet-4-5": {},  # catalog prices, by its name
                        "house-model": {"input_price": 0.01, "output_price": 0.02},
                        "unpriced": {},
                    },
                }
            }
        }
    )
    found = cheapest_model(s, "work/claude-sonnet-4-5")
    assert found is not None
    assert found.ref == "work/house-model"  # not the catalog's haiku: the gateway may lack it
    local = settings({"providers": {"l": {"type": "openai-compatible", "base_url": "http://x"}}})
    assert cheapest_model(local, "l/qwen") is None  # no prices known: the session's model


def test_the_catalog_port_offers_the_cheapest_only_with_its_key_set() -> None:
    s = settings({"model": "openai/gpt-5"})
    default = resolve_model(s)
    with_key = ConfiguredModels(s, {"OPENAI_API_KEY": "sk-x"}, default)
    assert with_key.cheapest("openai/gpt-5") == "openai/gpt-4.1-nano"
    assert ConfiguredModels(s, {}, default).cheapest("openai/gpt-5") is None


# -- what the core is given ------------------------------------------------------------------------


def test_agent_options_carry_each_agents_model_cap_and_reasoning() -> None:
    s = settings(
        {
            "model": "anthropic/claude-sonnet-4-5",
            "small_model": "anthropic/claude-haiku-4-5",
            "thinking": {"enabled": True, "budget_tokens": 2048},
            "agents": {
                "build": {"reasoning_effort": "high", "max_tokens": 12000},
                "plan": {"model": "anthropic/claude-opus-4-5", "reasoning_effort": "low"},
                "task": {"reasoning_effort": "medium"},
            },
        }
    )
    options = agent_options(s, resolve_model(s))
    build = options.agent("build")
    assert (build.model, build.max_tokens) == (None, 12000)
    assert options.thinking_for("build") == ThinkingConfig(budget_tokens=16_000)
    assert options.thinking_for("plan") == ThinkingConfig(budget_tokens=1024)
    assert options.thinking_for("task") == ThinkingConfig(budget_tokens=4000)
    assert options.thinking_for("title") == ThinkingConfig(budget_tokens=2048)
    assert options.agent("title").thinking is None  # side requests think only when told
    assert options.agent("title").model == "anthropic/claude-haiku-4-5"
    assert options.model_for("plan") == "anthropic/claude-opus-4-5"
    assert options.model_for("build") == "anthropic/claude-sonnet-4-5"
    assert options.model_for("explore") == "anthropic/claude-sonnet-4-5"  # task: unset


def test_doctor_takes_the_same_step_and_names_the_bad_agent_model(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    options = {"model": "anthropic/claude-sonnet-4-5", "agents": {"plan": {"model": "nope/x"}}}
    inputs = AgentInputs(workspace=workspace, env={"HOME": str(tmp_path)}, init_options=options)
    checks, _, _ = _configuration(inputs)
    (failed,) = [c for c in checks if c.level == "FAIL"]
    assert failed.name == "agents"
    assert failed.detail.startswith(
        "initializationOptions: key 'agents.plan.model': unknown provider 'nope'"
    )


def test_the_agents_section_follows_the_modes_table() -> None:
    """One table: ``agents.<name>`` is each mode's agent, then the side requests."""
    from lsp_agent.config.settings import AGENT_NAMES, AgentsConfig
    from lsp_agent.core import modes

    assert (
        AGENT_NAMES
        == modes.AGENT_NAMES
        == ("build", "plan", "task", "title", "summary", "completion", "commit")
    )
    assert tuple(AgentsConfig.model_fields) == AGENT_NAMES
    assert {mode.agent for mode in modes.MODES.values()} <= set(AGENT_NAMES)
    assert [modes.agent_of(name) for name in modes.MODES] == ["build", "plan", "task", "task"]
