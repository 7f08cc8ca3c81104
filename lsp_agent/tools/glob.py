"""The ``glob`` tool: files whose path matches a glob, most recently modified first.

rg lists the files ignore rules allow (``.gitignore``, no ``.git``, no symlinks followed);
the pattern is matched here (see :mod:`lsp_agent.search.globmatch` for why). At most
``SCAN_LIMIT`` matches are gathered, sorted by modification time, and ``LIMIT`` shown.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import SearchDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.search.globmatch import compile_glob
from lsp_agent.search.order import newest_first
from lsp_agent.search.ripgrep import RgFailure, name_filter_args, run_rg
from lsp_agent.tools.base import (
    ToolRunContext,
    display_path,
    load_description,
    one_line_title,
    resolve_search_root,
    shown_path,
)

__all__ = ["LIMIT", "SCAN_LIMIT", "GlobParams", "GlobTool"]

LIMIT = 100
SCAN_LIMIT = 1000
TRUNCATED_NOTE = (
    f"(Results are truncated: showing first {LIMIT} results. "
    "Consider using a more specific path or pattern.)"
)


class GlobParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description="The glob to match, e.g. `*.py` (file names at any depth) or "
        "`src/**/*.ts` (paths relative to the search folder).",
    )
    path: str | None = Field(
        default=None,
        description="The folder to search: absolute or relative to the first workspace "
        "folder (default: the first workspace folder).",
    )


class GlobTool:
    """Implements ``Tool[GlobParams]``."""

    name = "glob"
    kind: ToolKind = "search"
    permission = PermissionKind.GLOB
    mutates = False
    Params = GlobParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: GlobParams, roots: Sequence[str]) -> str:
        where = f" in {shown_path(params.path, roots)}" if params.path else ""
        return one_line_title(f"Find files {params.pattern}{where}")

    async def run(self, params: GlobParams, ctx: ToolRunContext) -> ToolOutcome:
        root = await resolve_search_root(
            ctx, params.path, permission=self.permission, title=params.pattern, files_too=False
        )
        if isinstance(root, ToolOutcome):
            return root
        matches = compile_glob(params.pattern)
        prefix = root.path.rstrip("/") + "/"
        found: list[str] = []

        def take(record: bytes) -> bool:
            path = record.decode("utf-8", "surrogateescape")
            if path.startswith(prefix) and matches(path[len(prefix) :]):
                found.append(path)
            return len(found) < SCAN_LIMIT

        args = ["--files", "--null", *name_filter_args(params.pattern)]
        result = await run_rg(
            args,
            cwd=root.path,
            target=root.path,
            on_record=take,
            separator=b"\0",
            avoid=ctx.boundary.roots,
        )
        if isinstance(result, RgFailure):
            return ToolOutcome(output=result.message, is_error=True, title=params.pattern)
        ordered = await asyncio.to_thread(newest_first, found)
        shown = [display_path(path, ctx) for path in ordered[:LIMIT]]
        truncated = len(ordered) > LIMIT
        output = "\n".join(shown) or "No files found"
        if truncated:
            output += f"\n\n{TRUNCATED_NOTE}"
        return ToolOutcome(
            output=output,
            title=params.pattern,
            details=SearchDetails(count=len(shown), truncated=truncated),
        )
