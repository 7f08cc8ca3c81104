"""The system prompts: one shared core and a section per mode, within the size ceiling, and
the same bytes whatever the day, the folder or the process (providers cache the prefix)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.core import prompts
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import MODES, subagent_scope
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.session.turn_setup import TurnSetup
from lsp_agent.testing.models import FakeModels
from lsp_agent.testing.provider import ScriptedProvider

MODEL = ModelInfo(provider="alpha", model="a1")

HEADINGS = {
    "build": "# How to work (build mode)",
    "plan": "# How to work (plan mode)",
    "explore": "# How to work (explore subagent)",
    "general": "# As a subagent",
}


def setup() -> TurnSetup:
    provider = ScriptedProvider([])
    return TurnSetup(
        options=AgentOptions(model=MODEL),
        catalog=FakeModels([(MODEL, provider)]),
        provider=provider,
        roots=None,
    )


@pytest.mark.parametrize("mode", list(MODES))
def test_every_mode_has_a_prompt_within_the_ceiling(mode: str) -> None:
    text = prompts.system(MODES[mode].prompt)
    assert len(text) <= prompts.MAX_SYSTEM_CHARS
    assert len(text) > 4000  # the shared core is there, not a stub


@pytest.mark.parametrize("mode", list(MODES))
def test_each_mode_opens_with_the_core_and_has_its_own_section(mode: str) -> None:
    text = prompts.system(MODES[mode].prompt)
    core = prompts.load("core")
    assert text.startswith(core + "\n")
    assert HEADINGS[mode] in text
    others = {HEADINGS[m] for m in HEADINGS if m != mode}
    if mode == "general":  # a general subagent works as build does, as a subagent
        others.discard(HEADINGS["build"])
    assert not [heading for heading in others if heading in text]


def test_the_turn_uses_the_modes_prompt_and_a_subagent_its_own() -> None:
    turns = setup()
    build = turns.config("/ws/a", None, "build", MODEL)
    plan = turns.config("/ws/a", None, "plan", MODEL)
    general = turns.config("/ws/a", None, "build", MODEL, subagent_scope("general", "build", ()))
    explore = turns.config("/ws/a", None, "build", MODEL, subagent_scope("explore", "build", ()))
    from_plan = turns.config("/ws/a", None, "plan", MODEL, subagent_scope("general", "plan", ()))
    assert build.system_prompt == prompts.system("build")
    assert plan.system_prompt == prompts.system("plan")
    assert general.system_prompt == prompts.system("general")
    assert explore.system_prompt == prompts.system("explore")
    assert from_plan.system_prompt == prompts.system("explore")  # plan confines its children
    assert len({build.system_prompt, plan.system_prompt, general.system_prompt}) == 3


def test_the_prompt_does_not_depend_on_the_folder() -> None:
    turns = setup()
    for mode in ("build", "plan"):
        one = turns.config("/home/alice/project", None, mode, MODEL).system_prompt
        other = turns.config("/srv/elsewhere", 5, mode, MODEL).system_prompt
        assert one == other
        assert "alice" not in one
        assert "/srv" not in one


_PRINT = (
    "import sys, time\n"
    "time.time = lambda: float(sys.argv[1])\n"
    "from lsp_agent.core import prompts\n"
    "sys.stdout.buffer.write(b'\\0'.join(prompts.system(m).encode() for m in prompts.SECTIONS))\n"
)


def test_the_prompts_are_the_same_bytes_across_processes_days_and_places(tmp_path: Path) -> None:
    """No date, time zone, folder, user or locale leaks into the cached prefix."""

    def run(when: float, tz: str, place: Path, lang: str) -> bytes:
        place.mkdir(parents=True)
        env = {**os.environ, "TZ": tz, "LANG": lang, "HOME": str(place), "PWD": str(place)}
        done = subprocess.run(
            [sys.executable, "-c", _PRINT, str(when)],
            cwd=place,
            env=env,
            capture_output=True,
            check=True,
            timeout=120,
        )
        return done.stdout

    first = run(1_700_000_000.0, "UTC", tmp_path / "one", "C.UTF-8")
    later = run(1_800_000_000.0, "Asia/Tokyo", tmp_path / "two" / "deeper", "de_DE.UTF-8")
    assert first == later
    assert first.split(b"\0") == [prompts.system(m).encode() for m in prompts.SECTIONS]
    for text in first.split(b"\0"):
        assert b"2023" not in text
        assert b"2027" not in text
        assert str(tmp_path).encode() not in text


def test_the_prompt_files_hold_no_template_fields() -> None:
    """The text is sent as it is: a ``{placeholder}`` would be a bug, not a value."""
    for parts in prompts.SECTIONS.values():
        for part in parts:
            text = prompts.load(part)
            assert "{" not in text, part
            assert "}" not in text, part
            assert text.endswith("\n"), part
            assert not text.endswith("\n\n"), part
