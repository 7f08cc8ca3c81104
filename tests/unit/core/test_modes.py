"""The table of modes is the one place a mode is defined: every front door follows it."""

from __future__ import annotations

import argparse
from typing import Any, cast, get_args

import pytest
from pydantic import TypeAdapter, ValidationError

from lsp_agent.cli import build_parser
from lsp_agent.config.settings import Mode as SettingsMode
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.modes import CLIENT_MODES, DEFAULT_MODE, MODES, SUBAGENTS, yes_approves
from lsp_agent.core.session.config_options import ConfigChanges
from lsp_agent.testing.clock import FakeClock
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.models import FakeModels
from lsp_agent.tools.task import TaskParams


def test_the_table_splits_into_client_modes_and_subagents() -> None:
    assert CLIENT_MODES == ("build", "plan")
    assert SUBAGENTS == ("general", "explore")
    assert set(CLIENT_MODES) | set(SUBAGENTS) == set(MODES)
    assert DEFAULT_MODE in CLIENT_MODES
    for mode in MODES.values():
        assert mode.subagents_as is None or MODES[mode.subagents_as].subagent


def test_run_mode_choices_are_the_client_modes() -> None:
    parser = build_parser()
    subcommands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    run = subcommands.choices["run"]
    (mode,) = (a for a in run._actions if "--mode" in a.option_strings)
    assert tuple(mode.choices or ()) == CLIENT_MODES


@pytest.mark.parametrize("name", [*MODES, "yolo"])
def test_settings_accept_exactly_the_client_modes(name: str) -> None:
    adapter = TypeAdapter(SettingsMode)
    if name in CLIENT_MODES:
        assert adapter.validate_python(name) == name
    else:
        with pytest.raises(ValidationError, match="Input should be 'build' or 'plan'"):
            adapter.validate_python(name)


def test_the_task_tool_offers_the_subagents() -> None:
    assert get_args(TaskParams.model_fields["subagent_type"].annotation) == SUBAGENTS


def test_yes_never_approves_in_plan_mode_nor_an_unknown_one() -> None:
    assert [name for name in MODES if not yes_approves(name)] == ["plan"]
    assert not yes_approves("yolo")


def test_the_offered_modes_are_the_client_modes_with_their_titles() -> None:
    events = EventWriter(store=cast(Any, None), editor=RecordingEditor(), clock=FakeClock())
    config = ConfigChanges(catalog=FakeModels([]), events=events)
    offered = config.choices("build", "a/b").modes
    assert [(c.value, c.name, c.description) for c in offered] == [
        (name, MODES[name].title, MODES[name].description) for name in CLIENT_MODES
    ]
    # a subagent's session shows its mode, not offered as a choice (no description)
    assert [c.to_json() for c in config.choices("explore", "a/b").modes][-1] == {
        "value": "explore",
        "name": "Explore",
    }
