"""Where a search runs: the checked search root, and how found paths are ordered and shown.

Every search root goes through the workspace boundary; ``grep`` alone may also search the
session's spill folder (``ToolRunContext.extra_roots``).
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Sequence

import attrs

from lsp_agent.core.permission import PermissionRequest
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, refusal
from lsp_agent.tools.boundary import Resolved

__all__ = ["SearchRoot", "display_path", "newest_first", "resolve_search_root"]


@attrs.frozen(kw_only=True)
class SearchRoot:
    """A checked search root: a folder, or (for ``grep``) a single file."""

    path: str
    display: str
    is_dir: bool

    @property
    def folder(self) -> str:
        """Where rg runs and what globs are relative to."""
        return self.path if self.is_dir else os.path.dirname(self.path)


async def resolve_search_root(
    ctx: ToolRunContext,
    path: str | None,
    *,
    permission: str,
    title: str,
    files_too: bool,
    extra: bool = False,
) -> SearchRoot | ToolOutcome:
    """The folder (or, with ``files_too``, file) to search, or the error outcome.

    ``extra`` also admits the session's spill folder (``ctx.extra_roots``).
    """
    where = await ctx.resolve(path or ".", kind="directory", spill=extra)
    if isinstance(where, ToolOutcome):
        return where
    verdict = await ctx.ask(
        PermissionRequest(permission=permission, patterns=(where.display,), title=title)
    )
    if not verdict.allowed:
        return refusal(verdict, title=title)
    try:
        mode = (await asyncio.to_thread(os.stat, where.path)).st_mode
    except OSError:
        return _root_error(f"No such file or directory: {where.path}", where, title)
    if stat.S_ISDIR(mode) or (files_too and stat.S_ISREG(mode)):
        return SearchRoot(path=where.path, display=where.display, is_dir=stat.S_ISDIR(mode))
    return _root_error(f"Not a directory: {where.path}", where, title)


def _root_error(message: str, where: Resolved, title: str) -> ToolOutcome:
    return ToolOutcome(output=message, is_error=True, title=title, metadata={"path": where.path})


def newest_first(paths: Sequence[str]) -> list[str]:
    """``paths`` by modification time, newest first, then by path (blocking: use a thread)."""

    def key(path: str) -> tuple[float, str]:
        try:
            return (-os.stat(path).st_mtime, path)
        except OSError:
            return (0.0, path)

    return sorted(paths, key=key)


def display_path(path: str, ctx: ToolRunContext) -> str:
    """Relative to the first workspace folder when inside it (what relative paths resolve
    against), absolute otherwise; undecodable bytes shown as U+FFFD."""
    first = ctx.boundary.roots[0]
    if path.startswith(first.rstrip("/") + "/"):
        path = path[len(first.rstrip("/")) + 1 :]
    return path.encode("utf-8", "surrogateescape").decode("utf-8", "replace")
