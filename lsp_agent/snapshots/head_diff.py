"""``git diff HEAD`` of a folder without the repository's configuration (the ``#diff`` mention).

Comparing a work tree runs the repository's clean filters and, in ``git diff``, its
textconv and external diff drivers: programs named in ``.git/config`` (or a file it
includes) that ``-c`` cannot switch off by name. So the diff is computed in a private,
throw-away git dir: its configuration is git's defaults plus
:data:`~lsp_agent.system.git_process.NEUTRAL_CONFIG`, its objects are the project's (through
``objects/info/alternates``, read only), its ``HEAD`` is the project's commit and its index
a copy of the project's (or, when that cannot be used, the commit's tree). No driver is
defined there, so whatever ``.gitattributes`` names, nothing runs. The project's own files
are only read: the commit and locations through ``git rev-parse`` (which starts no program),
the index copied without blocking.
"""

from __future__ import annotations

import tempfile
from collections.abc import Sequence
from pathlib import Path

import attrs

from lsp_agent.system.git_files import copy_regular_file, git_dir_of, unusable_repository_files
from lsp_agent.system.git_process import GitFailure, GitResult, run_git

__all__ = ["HeadDiff", "NoHeadDiff", "head_diff"]

_INDEX_LIMIT = 1 << 30
_DIFF_ARGS = ("diff", "--no-color", "--no-ext-diff", "--no-textconv", "--ignore-submodules=all")


@attrs.frozen
class HeadDiff:
    text: str
    """The unified diff ("" when nothing differs)."""


@attrs.frozen
class NoHeadDiff:
    reason: str
    """Why there is none, in words for the model: not a repository with a commit, git
    missing or too slow, the repository's files unusable."""


def head_diff(
    folder: str,
    *,
    avoid: Sequence[str],
    timeout: float,
    base: str = "HEAD",
    staged: bool = False,
) -> HeadDiff | NoHeadDiff:
    """The changes of the repository ``folder`` is in against its ``HEAD`` (blocking).

    ``avoid``: the workspace folders (git is never taken from them); ``timeout``: for each
    git command. ``base``: another commit to compare with (a revision git resolves, e.g. a
    branch: ``lsp-agent review --base``); ``staged``: the index instead of the work tree
    (``git diff --cached``).
    """
    if base.startswith("-") or not base.strip():
        return NoHeadDiff(f"not a revision: {base!r}")
    unusable = unusable_repository_files(Path(folder))
    if unusable:
        listed = ", ".join(unusable)
        return NoHeadDiff(f"not read: the repository's files are not regular files: {listed}")
    found = run_git(
        [
            "rev-parse",
            "--show-toplevel",
            "--git-common-dir",
            "--show-object-format",
            "--verify",
            "--end-of-options",
            f"{base}^{{commit}}",
        ],
        cwd=folder,
        avoid=avoid,
        timeout=timeout,
    )
    if isinstance(found, GitFailure):
        return NoHeadDiff(_reason(found, ""))
    lines = found.stdout.decode("utf-8", errors="surrogateescape").split("\n")
    if found.returncode != 0 or len(lines) < 4 or not lines[0] or len(lines[3]) < 40:
        if base != "HEAD" and found.returncode != 0 and b"Needed a single" in found.stderr:
            return NoHeadDiff(f"no such revision: {base}")
        return NoHeadDiff("not a git repository with a commit")
    top, common, fmt, commit = lines[0], lines[1], lines[2].strip() or "sha1", lines[3].strip()
    objects = (Path(folder) / common / "objects").resolve()
    project_git_dir = git_dir_of(Path(top))
    with tempfile.TemporaryDirectory(prefix="lsp-agent-diff-") as scratch:
        view = Path(scratch) / "view.git"
        init = ["init", "--bare", "--quiet", "--template="]
        if fmt != "sha1":
            init.append(f"--object-format={fmt}")
        made = run_git([*init, str(view)], cwd=scratch, avoid=avoid, timeout=timeout)
        if not isinstance(made, GitResult) or made.returncode != 0:
            return NoHeadDiff(_reason(made, "could not set up the comparison"))
        alternates = view / "objects" / "info" / "alternates"
        alternates.parent.mkdir(parents=True, exist_ok=True)
        alternates.write_text(f"{objects}\n", encoding="utf-8")
        index = view / "index"
        locations = {"GIT_DIR": str(view), "GIT_WORK_TREE": top, "GIT_INDEX_FILE": str(index)}
        copied = project_git_dir is not None and copy_regular_file(
            project_git_dir / "index", index, _INDEX_LIMIT
        )
        if copied and project_git_dir is not None:  # a split index keeps its base beside it
            for shared in project_git_dir.glob("sharedindex.*"):
                copy_regular_file(shared, view / shared.name, _INDEX_LIMIT)

        def diff_against_head() -> GitResult | GitFailure:
            return run_git(
                [*_DIFF_ARGS, *(["--cached"] if staged else []), commit, "--"],
                cwd=folder,
                avoid=avoid,
                locations=locations,
                timeout=timeout,
            )

        diff = diff_against_head() if copied else None
        if staged and (not isinstance(diff, GitResult) or diff.returncode != 0):
            # Without the project's index there is nothing staged to compare.
            return NoHeadDiff(_reason(diff, "the repository's index could not be read"))
        if not isinstance(diff, GitResult) or diff.returncode != 0:
            index.unlink(missing_ok=True)
            read = run_git(
                ["read-tree", commit], cwd=folder, avoid=avoid, locations=locations, timeout=timeout
            )
            if not isinstance(read, GitResult) or read.returncode != 0:
                return NoHeadDiff(_reason(read, "not a git repository with a commit"))
            diff = diff_against_head()
        if not isinstance(diff, GitResult) or diff.returncode != 0:
            return NoHeadDiff(_reason(diff, "git diff failed"))
        return HeadDiff(diff.stdout.decode("utf-8", errors="replace"))


def _reason(result: GitResult | GitFailure | None, fallback: str) -> str:
    return f"git could not run: {result.reason}" if isinstance(result, GitFailure) else fallback
