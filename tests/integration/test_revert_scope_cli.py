"""``lsp-agent sessions revert ID --message MID --scope code|conversation``: the files only,
or the messages only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lsp_agent.testing.cli import run_cli as cli
from tests.integration.test_revert_e2e import files_of, first_message, revert, run_session


@pytest.fixture
def workspace(workspace: Path) -> Path:
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (workspace / name).write_text(f"{name} original\nsecond line\n")
    return workspace


def shown_messages(workspace: Path, sid: str) -> list[str]:
    shown = json.loads(cli("sessions", "show", sid, "--json", cwd=workspace).stdout)
    return [str(m["messageId"]) for m in shown["messages"]]


def test_scope_code_restores_the_files_and_keeps_every_message(workspace: Path) -> None:
    before = files_of(workspace)
    sid = run_session(workspace)
    after = files_of(workspace)
    messages = shown_messages(workspace, sid)

    staged = revert(workspace, sid, "--message", first_message(workspace, sid), "--scope", "code")

    assert "the files only, every message kept" in staged.stdout
    assert files_of(workspace) == before
    assert shown_messages(workspace, sid) == messages
    committed = revert(workspace, sid, "--commit")
    assert "0 messages dropped" in committed.stdout
    assert shown_messages(workspace, sid) == messages
    assert files_of(workspace) == before
    assert after != before


def test_scope_conversation_hides_the_messages_and_keeps_the_files(workspace: Path) -> None:
    sid = run_session(workspace)
    after = files_of(workspace)

    staged = revert(
        workspace, sid, "--message", first_message(workspace, sid), "--scope", "conversation"
    )

    assert "the messages only" in staged.stdout
    assert "restored:" not in staged.stdout
    assert files_of(workspace) == after
    assert shown_messages(workspace, sid) == []
    revert(workspace, sid, "--clear")
    assert shown_messages(workspace, sid) != []
    assert files_of(workspace) == after


def test_an_unknown_scope_is_a_usage_error(workspace: Path) -> None:
    result = cli("sessions", "revert", "ses_x", "--message", "m", "--scope", "files", cwd=workspace)
    assert result.returncode == 2
    assert "--scope" in result.stderr
