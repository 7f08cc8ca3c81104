"""The context's git line is read from the repository's HEAD file, with no git process; each
case is set up with real git, and the line agrees with what ``git`` itself says."""

from __future__ import annotations

import asyncio
import os
import subprocess
from pathlib import Path

from lsp_agent.context_sources import FileContextSources

GIT_ENV = {
    **os.environ,
    "GIT_AUTHOR_NAME": "t",
    "GIT_AUTHOR_EMAIL": "t@example.invalid",
    "GIT_COMMITTER_NAME": "t",
    "GIT_COMMITTER_EMAIL": "t@example.invalid",
}


def git(cwd: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *args], cwd=cwd, env=GIT_ENV, check=True, capture_output=True, text=True
    )
    return done.stdout.strip()


def summary(root: Path, tmp_path: Path) -> str:
    sources = FileContextSources(user_config_dir=tmp_path / "config")
    return asyncio.run(sources.collect([str(root)], full=True)).git


def committed_repo(root: Path, branch: str = "main") -> Path:
    root.mkdir(parents=True)
    git(root, "init", "-q", "-b", branch)
    (root / "a.txt").write_text("a\n")
    git(root, "add", "a.txt")
    git(root, "commit", "-q", "-m", "one")
    return root


def test_a_branch_in_a_subfolder_of_the_repository(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo", branch="feature/x")
    sub = repo / "pkg"
    sub.mkdir()
    assert git(sub, "rev-parse", "--abbrev-ref", "HEAD") == "feature/x"
    assert summary(sub, tmp_path) == "a git repository, branch feature/x"


def test_a_detached_head(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo")
    git(repo, "checkout", "-q", "--detach")
    assert summary(repo, tmp_path) == "a git repository (detached HEAD)"


def test_a_new_repository_without_commits_names_its_branch(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "trunk")
    assert summary(repo, tmp_path) == "a git repository, branch trunk"


def test_a_worktree_reads_its_own_head(tmp_path: Path) -> None:
    repo = committed_repo(tmp_path / "repo")
    worktree = tmp_path / "wt"
    git(repo, "worktree", "add", "-q", "-b", "side", str(worktree))
    assert (worktree / ".git").is_file()  # "gitdir: …/.git/worktrees/wt"
    assert summary(worktree, tmp_path) == "a git repository, branch side"
    assert summary(repo, tmp_path) == "a git repository, branch main"


def test_outside_a_repository(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    assert summary(plain, tmp_path) == "not a git repository"
