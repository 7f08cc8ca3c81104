"""A stable request prefix: the baseline note, notes for changes, across restarts."""

from __future__ import annotations

import copy
import itertools
import json
import subprocess
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-context-test"


def run(
    server: FakeLLMServer, cwd: Path, prompt: str, *extra: str
) -> subprocess.CompletedProcess[str]:
    result = cli(
        "run",
        *extra,
        "--model",
        "anthropic/claude-test",
        prompt,
        cwd=cwd,
        env=provider_env(server, KEY),
    )
    assert result.returncode == 0, result.stderr
    return result


def session_id(cwd: Path) -> str:
    listing = json.loads(cli("sessions", "list", "--json", cwd=cwd, env={}).stdout)
    return str(listing["sessions"][0]["sessionId"])


def without_cache_marks(value: Any) -> Any:
    """Requests move their cache breakpoint forward; the content itself must not change."""
    value = copy.deepcopy(value)
    if isinstance(value, dict):
        value.pop("cache_control", None)
        return {k: without_cache_marks(v) for k, v in value.items()}
    if isinstance(value, list):
        return [without_cache_marks(v) for v in value]
    return value


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "AGENTS.md").write_text("Always answer in haiku.\n")
    (workspace / "a.py").write_text("x = 1\n")
    return workspace


def test_the_prefix_stays_byte_identical_across_steps_turns_and_restarts(workspace: Path) -> None:
    read = {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]}
    script = [read, {"text": "first"}, read, {"text": "second"}]
    with running_fake_llm(script) as server:
        run(server, workspace, "one")
        sid = session_id(workspace)
        run(server, workspace, "two", "--session", sid)  # a new process: a restart
        bodies = server.model_bodies()
    assert len(bodies) == 4
    system = bodies[0]["system"]
    system_text = json.dumps(without_cache_marks(system))
    assert "Always answer in haiku." in system_text
    assert date.today().isoformat() in system_text
    for body in bodies[1:]:
        assert without_cache_marks(body["system"]) == without_cache_marks(system)
        assert body["tools"] == bodies[0]["tools"]
    for before, after in itertools.pairwise(bodies):
        earlier = without_cache_marks(before["messages"])
        assert without_cache_marks(after["messages"])[: len(earlier)] == earlier
    first_bytes = len(json.dumps(system)) + len(json.dumps(bodies[0]["tools"]))
    assert first_bytes > 0


def test_edited_instructions_arrive_as_a_note_and_the_system_stays(workspace: Path) -> None:
    with running_fake_llm([{"text": "first"}, {"text": "second"}]) as server:
        run(server, workspace, "one")
        sid = session_id(workspace)
        (workspace / "AGENTS.md").write_text("Always answer in limericks.\n")
        run(server, workspace, "two", "--session", sid)
        first, second = server.model_bodies()
    assert without_cache_marks(second["system"]) == without_cache_marks(first["system"])
    later = json.dumps(second["messages"][len(first["messages"]) :])
    assert "Always answer in limericks." in later
    assert "limericks" not in json.dumps(second["system"])


def test_unreadable_instructions_hold_the_input_back_until_they_can_be_read(
    workspace: Path,
) -> None:
    (workspace / "AGENTS.md").unlink()
    # Root reads anything, and a folder or FIFO is skipped with a note (docs/context.md
    # "What may be read"): a link to a file not there yet is what cannot be read.
    (workspace / "AGENTS.md").symlink_to("generated.md")
    with running_fake_llm([{"text": "finally"}]) as server:
        env = provider_env(server, KEY)
        failed = cli("run", "--model", "anthropic/claude-test", "hello", cwd=workspace, env=env)
        assert failed.returncode == 1
        assert "AGENTS.md" in failed.stderr
        assert server.model_bodies() == []
        sid = session_id(workspace)
        shown = json.loads(cli("sessions", "show", sid, "--json", cwd=workspace, env={}).stdout)
        assert shown["messages"] == []  # admitted, not promoted: nothing sent yet
        (workspace / "generated.md").write_text("Be brief.\n")
        ok = cli(
            "run",
            "--session",
            sid,
            "--model",
            "anthropic/claude-test",
            "again",
            cwd=workspace,
            env=env,
        )
        assert ok.returncode == 0, ok.stderr
        (body,) = server.model_bodies()
    user_texts = json.dumps([m for m in body["messages"] if m["role"] == "user"])
    assert "hello" in user_texts
    assert "again" in user_texts
    assert "Be brief." in json.dumps(body["system"])
