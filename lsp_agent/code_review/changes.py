"""Which changes a review looks at: the work tree against ``HEAD`` (the default), the staged
changes, or the work tree against another revision — from real git, through
:func:`~lsp_agent.snapshots.head_diff.head_diff` (a private git dir: no hook, alias, pager,
filter or diff driver of the repository ever runs)."""

from __future__ import annotations

import asyncio
import os
import uuid
from collections.abc import Callable, Sequence

import attrs

from lsp_agent.code_review.review import ReviewFailed, ReviewResult, review_diff
from lsp_agent.core.interfaces import Provider
from lsp_agent.snapshots.head_diff import NoHeadDiff, head_diff
from lsp_agent.system.git_process import GitResult, run_git

__all__ = ["GIT_TIMEOUT", "Scope", "review_changes"]

GIT_TIMEOUT = 30.0


@attrs.frozen(kw_only=True)
class Scope:
    """What to review: ``staged`` (the index against HEAD) or the work tree against
    ``base`` (default ``HEAD``)."""

    staged: bool = False
    base: str | None = None

    def describe(self) -> str:
        if self.staged:
            return "the staged changes"
        return f"the changes against {self.base}" if self.base else "the uncommitted changes"


async def review_changes(
    folder: str,
    scope: Scope,
    *,
    provider: Provider,
    model: str,
    avoid: Sequence[str] = (),
    new_id: Callable[[], str] | None = None,
    max_output_tokens: int = 8192,
    mask: Callable[[str], str] = str,
) -> ReviewResult | ReviewFailed:
    """Review ``scope``'s changes in the repository holding ``folder`` (realpath-ed);
    ``mask``: the secret filter (``App.secrets``) every text the model gets passes."""
    root = await asyncio.to_thread(_top_level, folder, (*avoid, folder))
    if root is None:
        reason = f"{folder} is not in a git repository with a commit"
        return ReviewFailed(reason=reason, asked_wrong=True)
    found = await asyncio.to_thread(
        head_diff,
        folder,
        avoid=(*avoid, folder),
        timeout=GIT_TIMEOUT,
        base=scope.base or "HEAD",
        staged=scope.staged,
    )
    if isinstance(found, NoHeadDiff):
        return ReviewFailed(reason=found.reason, asked_wrong=True)
    if not found.text.strip():
        return ReviewResult(
            findings=(), summary=f"No changes to review ({scope.describe()}).", files=()
        )
    return await review_diff(
        provider=provider,
        model=model,
        diff=found.text,
        root=root,
        new_id=new_id or _new_id,
        max_output_tokens=max_output_tokens,
        mask=mask,
    )


def _top_level(folder: str, avoid: Sequence[str]) -> str | None:
    found = run_git(["rev-parse", "--show-toplevel"], cwd=folder, avoid=avoid, timeout=GIT_TIMEOUT)
    if not isinstance(found, GitResult) or found.returncode != 0:
        return None
    top = found.stdout.decode("utf-8", errors="surrogateescape").strip()
    return os.path.realpath(top) if top else None


def _new_id() -> str:
    return f"finding-{uuid.uuid4().hex[:12]}"
