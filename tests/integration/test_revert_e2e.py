"""Everything undoable: a session's file changes reverted exactly, in git and plain folders."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-revert-test"
GIT = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid"]


def files_of(root: Path) -> dict[str, bytes]:
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.relative_to(root).parts
    }


def git_dir_digest(root: Path) -> dict[str, str]:
    git = root / ".git"
    if not git.exists():
        return {}
    return {
        str(p.relative_to(git)): hashlib.sha256(p.read_bytes()).hexdigest()
        for p in sorted(git.rglob("*"))
        if p.is_file()
    }


@pytest.fixture(params=["git", "plain"])
def workspace(request: pytest.FixtureRequest, workspace: Path) -> Path:
    for name in ("a.txt", "b.txt", "c.txt", "d.txt"):
        (workspace / name).write_text(f"{name} original\nsecond line\n")
    if request.param == "git":
        subprocess.run([*GIT, "init", "-q"], cwd=workspace, check=True)
        subprocess.run([*GIT, "add", "-A"], cwd=workspace, check=True)
        subprocess.run([*GIT, "commit", "-qm", "init"], cwd=workspace, check=True)
        (workspace / "a.txt").write_text("a.txt original\nsecond line\nuncommitted work\n")
        subprocess.run([*GIT, "stash", "-q"], cwd=workspace, check=True)
        subprocess.run([*GIT, "stash", "pop", "-q"], cwd=workspace, check=True)
    return workspace


PATCH = (
    "*** Begin Patch\n*** Update File: a.txt\n@@\n-second line\n+second line, by the agent\n"
    "*** Update File: b.txt\n@@\n-b.txt original\n+b.txt rewritten\n"
    "*** Add File: new.txt\n+created by the agent\n*** End Patch"
)


def run_session(workspace: Path) -> str:
    script: list[dict[str, Any]] = [
        {"tool_calls": [{"name": "apply_patch", "input": {"patch": PATCH}}]},
        {"tool_calls": [
            {"name": "edit", "input": {
                "file_path": "c.txt", "old_string": "c.txt original", "new_string": "c edited"}},
            {"name": "bash", "input": {"command": "rm d.txt"}},
        ]},
        {"text": "done"},
    ]  # fmt: skip
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = cli(
            "run",
            "--yes",
            "--model",
            "anthropic/claude-test",
            "change things",
            cwd=workspace,
            env=env,
        )
    assert result.returncode == 0, result.stderr
    listing = json.loads(cli("sessions", "list", "--json", cwd=workspace).stdout)
    return str(listing["sessions"][0]["sessionId"])


def first_message(workspace: Path, sid: str) -> str:
    shown = json.loads(cli("sessions", "show", sid, "--json", cwd=workspace).stdout)
    return str(shown["messages"][0]["messageId"])


def revert(workspace: Path, sid: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"ANTHROPIC_API_KEY": KEY, "LSP_AGENT_MODEL": "anthropic/claude-test"}
    result = cli("sessions", "revert", sid, *args, cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    return result


def test_stage_clear_and_commit_restore_exactly_and_leave_git_alone(workspace: Path) -> None:
    before, git_before = files_of(workspace), git_dir_digest(workspace)
    sid = run_session(workspace)
    after = files_of(workspace)
    assert after != before
    assert "new.txt" in after
    assert "d.txt" not in after
    history = json.loads(cli("sessions", "history", sid, "--json", cwd=workspace).stdout)
    checkpoints = [e["data"] for e in history["events"] if e["type"] == "checkpoint_recorded"]
    assert len(checkpoints) == 2
    assert {f["path"] for c in checkpoints for f in c["files"]} == {
        "a.txt",
        "b.txt",
        "c.txt",
        "d.txt",
        "new.txt",
    }
    message = first_message(workspace, sid)

    revert(workspace, sid, "--message", message)
    assert files_of(workspace) == before
    revert(workspace, sid, "--clear")
    assert files_of(workspace) == after
    revert(workspace, sid, "--message", message)
    assert files_of(workspace) == before
    revert(workspace, sid, "--commit")
    shown = json.loads(cli("sessions", "show", sid, "--json", cwd=workspace).stdout)
    assert shown["messages"] == []
    assert files_of(workspace) == before
    assert git_dir_digest(workspace) == git_before


def test_a_file_changed_by_the_user_is_a_conflict_unless_forced(workspace: Path) -> None:
    before = files_of(workspace)
    sid = run_session(workspace)
    (workspace / "c.txt").write_text("the user's own edit\n")
    message = first_message(workspace, sid)
    staged = revert(workspace, sid, "--message", message)
    assert "conflict" in staged.stdout
    assert "c.txt" in staged.stdout
    assert (workspace / "c.txt").read_text() == "the user's own edit\n"
    assert (workspace / "a.txt").read_bytes() == before["a.txt"]
    revert(workspace, sid, "--clear")
    revert(workspace, sid, "--message", message, "--force")
    assert files_of(workspace) == before
