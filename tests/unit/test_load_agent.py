"""``app.load_agent``: what a front door passes (its flags, the editor's options, a session's
model) reaches the agent it gets, and a bad model is the error the CLI prints."""

from __future__ import annotations

import io
import os
from pathlib import Path

import pytest

from lsp_agent.app import AgentInputs, load_agent
from lsp_agent.cli import EXIT_USAGE, _run, build_parser
from lsp_agent.core.errors import ConfigError
from lsp_agent.storage.event_log import SqliteEventStore
from lsp_agent.testing.editor import RecordingEditor

QUIET = {"snapshots": False, "title": {"enabled": False}}
"""Editor options that keep the build to the store (no shadow repository)."""


async def _model_of(store: SqliteEventStore, session_id: str) -> str:
    info = await store.session(session_id)
    assert info is not None
    return info.model


def _env() -> dict[str, str]:
    keys = {"ANTHROPIC_API_KEY": "sk-test-load", "OPENAI_API_KEY": "sk-test-load"}
    return {**os.environ, **keys}


async def test_a_cli_flag_and_an_editor_option_both_reach_the_agent(workspace: Path) -> None:
    inputs = AgentInputs(
        workspace=workspace,
        env=_env(),
        cli_overrides={"max_steps": 7, "mode": None},
        init_options={**QUIET, "model": "openai/gpt-4o-mini"},
    )
    app = await load_agent(inputs, editor=RecordingEditor())
    try:
        assert app.settings.max_steps == 7
        assert app.settings.model == "openai/gpt-4o-mini"
        session_id = await app.sessions.create(workspace_folder=str(workspace))
        assert await _model_of(app.store, session_id) == "openai/gpt-4o-mini"
    finally:
        await app.aclose()


async def test_a_sessions_model_wins_over_the_configured_one(workspace: Path) -> None:
    inputs = AgentInputs(
        workspace=workspace,
        env=_env(),
        init_options={**QUIET, "model": "anthropic/claude-test"},
        session_model="openai/gpt-4o-mini",
    )
    app = await load_agent(inputs, editor=RecordingEditor())
    try:
        session_id = await app.sessions.create(workspace_folder=str(workspace))
        assert await _model_of(app.store, session_id) == "openai/gpt-4o-mini"
    finally:
        await app.aclose()


async def test_a_bad_model_is_the_config_error_run_prints_and_opens_nothing(
    workspace: Path, tmp_path: Path
) -> None:
    inputs = AgentInputs(
        workspace=workspace, env=_env(), cli_overrides={"model": "nowhere/some-model"}
    )
    with pytest.raises(ConfigError) as raised:
        await load_agent(inputs, editor=RecordingEditor())
    assert not (tmp_path / "data" / "lsp-agent.db").exists()

    args = build_parser().parse_args(
        ["run", "--cwd", str(workspace), "--model", "nowhere/some-model", "hi"]
    )
    out, err = io.StringIO(), io.StringIO()
    assert await _run(args, _env(), out, err, prompt="hi") == EXIT_USAGE
    assert err.getvalue() == f"{raised.value}\n"
    assert "nowhere" in str(raised.value)
