"""The staged changes of a repository and its latest commit subjects (for a commit message).

Only what git reads from its own object store is asked for: the index against ``HEAD``
(``diff --cached``: no work-tree file is hashed, so no clean filter runs) and the log's
subjects. Every call goes through :func:`~lsp_agent.system.git_process.run_git`, so no hook,
alias, pager, external diff or textconv driver of the repository ever runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_agent.system.git_files import unusable_repository_files
from lsp_agent.system.git_process import GitFailure, GitResult, run_git

__all__ = ["NoStagedChanges", "StagedChanges", "staged_changes"]

NOTHING_STAGED = "nothing staged"
_DIFF = ("diff", "--cached", "--no-color", "--ignore-submodules=all", "-M")


@attrs.frozen(kw_only=True)
class StagedChanges:
    diff: str
    """``git diff --cached``: the unified diff of what the commit would hold."""
    stat: str
    """One line per staged file: status and path (``--name-status``)."""
    subjects: tuple[str, ...]
    """The latest commit subjects, newest first (none in a repository without commits)."""


@attrs.frozen
class NoStagedChanges:
    reason: str
    """``nothing staged``, not a repository, or git could not run."""
    nothing_to_commit: bool = False
    """Nothing staged or no repository (not git failing)."""


def staged_changes(
    folder: str, *, avoid: Sequence[str], timeout: float, subjects: int = 20
) -> StagedChanges | NoStagedChanges:
    """What is staged in the repository ``folder`` is in (blocking); ``avoid``: the
    workspace folders (git is never taken from them)."""
    unusable = unusable_repository_files(Path(folder))
    if unusable:
        listed = ", ".join(unusable)
        return NoStagedChanges(f"the repository's files are not regular files: {listed}")

    def git(*args: str) -> GitResult | GitFailure:
        return run_git(list(args), cwd=folder, avoid=avoid, timeout=timeout)

    top = git("rev-parse", "--show-toplevel")
    if isinstance(top, GitFailure):
        return NoStagedChanges(f"git could not run: {top.reason}")
    if top.returncode != 0:
        return NoStagedChanges(f"not a git repository: {folder}", nothing_to_commit=True)
    names = git(*_DIFF, "--name-status")
    if isinstance(names, GitFailure) or names.returncode != 0:
        return NoStagedChanges(_reason(names, "git diff --cached failed"))
    stat = _text(names.stdout)
    if not stat.strip():
        return NoStagedChanges(NOTHING_STAGED, nothing_to_commit=True)
    diff = git(*_DIFF)
    if isinstance(diff, GitFailure) or diff.returncode != 0:
        return NoStagedChanges(_reason(diff, "git diff --cached failed"))
    log = git("log", f"-n{subjects}", "--format=%s", "--no-merges")
    lines = (
        _text(log.stdout).splitlines() if isinstance(log, GitResult) and log.returncode == 0 else []
    )
    return StagedChanges(diff=_text(diff.stdout), stat=stat, subjects=tuple(lines))


def _text(raw: bytes) -> str:
    return raw.decode("utf-8", errors="replace")


def _reason(result: GitResult | GitFailure, fallback: str) -> str:
    if isinstance(result, GitFailure):
        return f"git could not run: {result.reason}"
    detail = _text(result.stderr).strip().splitlines()
    return f"{fallback}: {detail[-1]}" if detail else fallback
