"""A repository with a history, for the commit-message tests: git run as the test's own tool."""

from __future__ import annotations

import subprocess
from pathlib import Path

IDENTITY = ("-c", "user.name=T", "-c", "user.email=t@example.invalid")


def git(repo: Path, *args: str) -> str:
    """``git args`` in ``repo`` (a test's own call, with an identity for commits); its stdout."""
    done = subprocess.run(
        ["git", *IDENTITY, *args], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout


def commit_history(repo: Path, subjects: list[str]) -> None:
    """``git init`` ``repo`` and commit one change per subject; the first one given is the
    newest."""
    git(repo, "init", "-q", "-b", "main")
    for i, subject in enumerate(reversed(subjects)):
        (repo / "notes.txt").write_text(f"{i}\n")
        git(repo, "add", "notes.txt")
        git(repo, "commit", "-q", "--no-verify", "-m", subject)
