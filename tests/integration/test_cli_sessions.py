"""``sessions delete``, message ids in ``sessions show``, ``revert`` by an assistant message
id, and ``revert --clear/--commit`` with nothing staged."""

from __future__ import annotations

import asyncio
import json
import os
import re
from pathlib import Path

import pytest

from lsp_agent.core.events import NewEvent
from lsp_agent.storage.event_log import open_store
from lsp_agent.system.owner import current_owner
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-cli-sessions-SECRET-1"
MODEL = ("--model", "anthropic/claude-test")
HEADER = re.compile(r"^## (user|assistant) (msg_\w+) \((\w+)\)$", re.MULTILINE)


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "a.py").write_text("x = 1\n")
    return workspace


def one_run(workspace: Path, script: list[dict[str, object]], *extra: str) -> str:
    """Run one turn; answer its session id."""
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli("run", *MODEL, *extra, "go", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    listing = run_cli("sessions", "list", "--json", cwd=workspace)
    return str(json.loads(listing.stdout)["sessions"][0]["sessionId"])


def session_ids(workspace: Path) -> list[str]:
    listing = run_cli("sessions", "list", "--all", "--json", cwd=workspace)
    return [s["sessionId"] for s in json.loads(listing.stdout)["sessions"]]


def test_delete_removes_the_session_its_events_and_its_spill_files(workspace: Path) -> None:
    keep = one_run(workspace, [{"text": "one"}])
    gone = one_run(workspace, [{"text": "two"}])
    spill = Path(os.environ["LSP_AGENT_DATA_DIR"]) / "tool-output" / gone
    spill.mkdir(parents=True)
    (spill / "call.txt").write_text("big output")
    result = run_cli("sessions", "delete", gone, gone, cwd=workspace)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"deleted {gone}\n"
    assert session_ids(workspace) == [keep]
    assert not spill.exists()
    history = run_cli("sessions", "history", gone, cwd=workspace)
    assert history.returncode == 2  # unknown now: its events went too


def test_delete_of_an_unknown_id_is_bad_usage_and_the_rest_still_go(workspace: Path) -> None:
    known = one_run(workspace, [{"text": "one"}])
    result = run_cli("sessions", "delete", "ses_nope", known, cwd=workspace)
    assert result.returncode == 2
    assert "unknown session: ses_nope" in result.stderr
    assert f"deleted {known}" in result.stdout
    assert session_ids(workspace) == []


def test_delete_refuses_a_session_whose_turn_a_live_process_runs(workspace: Path) -> None:
    session = one_run(workspace, [{"text": "one"}])

    async def mark_running() -> None:
        store = await open_store(Path(os.environ["LSP_AGENT_DATA_DIR"]))
        try:
            data = {"state": "running", "owner": current_owner()}  # this test: alive
            await store.append(session, [NewEvent(type="state_changed", data=data, time="t")])
        finally:
            await store.close()

    asyncio.run(mark_running())
    result = run_cli("sessions", "delete", session, cwd=workspace)
    assert result.returncode == 1
    assert "has a turn running" in result.stderr
    assert session_ids(workspace) == [session]


def test_show_prints_message_ids_and_revert_takes_an_assistant_id(workspace: Path) -> None:
    script = [
        {"tool_calls": [{"name": "write", "input": {"file_path": "a.py", "content": "x = 2\n"}}]},
        {"text": "Changed."},
    ]
    session = one_run(workspace, script, "--yes")
    assert (workspace / "a.py").read_text() == "x = 2\n"
    shown = run_cli("sessions", "show", session, cwd=workspace)
    headers = HEADER.findall(shown.stdout)
    assert [role for role, _, _ in headers] == ["user", "assistant", "assistant"]
    (user_id,) = [mid for role, mid, _ in headers if role == "user"]
    last_assistant = headers[-1][1]
    staged = run_cli("sessions", "revert", session, "--message", last_assistant, cwd=workspace)
    assert staged.returncode == 0, staged.stderr
    assert f"reverting to before {user_id}" in staged.stdout
    assert (workspace / "a.py").read_text() == "x = 1\n"
    cleared = run_cli("sessions", "revert", session, "--clear", cwd=workspace)
    assert cleared.returncode == 0, cleared.stderr
    assert (workspace / "a.py").read_text() == "x = 2\n"


@pytest.mark.parametrize("verb", ["--clear", "--commit"])
def test_clear_or_commit_with_nothing_staged_fails(workspace: Path, verb: str) -> None:
    session = one_run(workspace, [{"text": "one"}])
    result = run_cli("sessions", "revert", session, verb, cwd=workspace)
    assert result.returncode == 1
    assert "has no staged revert" in result.stderr
    assert result.stdout == ""
