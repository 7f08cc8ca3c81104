"""The ``grep`` tool: lines matching a regular expression, grouped by file, newest file first.

rg searches what ignore rules allow and skips binary files; ``include`` is matched here (see
:mod:`lsp_agent.search.globmatch`). rg prints ``path NUL line:text``: the NUL keeps paths
with colons intact, and long lines arrive cut (``ripgrep.MAX_RECORD_BYTES``). Besides the
workspace, the session's spill folder may be searched.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

import attrs
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

__all__ = ["LIMIT", "MAX_LINE_CHARS", "SCAN_LIMIT", "GrepParams", "GrepTool"]

LIMIT = 100
SCAN_LIMIT = 1000
MAX_LINE_CHARS = 2000
TRUNCATED_NOTE = "(Results truncated. Consider using a more specific path or pattern.)"


class GrepParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    pattern: str = Field(
        min_length=1,
        description="The regular expression to search file contents for (Rust regex "
        "syntax), e.g. `def \\w+\\(` or `TODO|FIXME`.",
    )
    path: str | None = Field(
        default=None,
        description="The folder or file to search: absolute or relative to the first "
        "workspace folder (default: the first workspace folder).",
    )
    include: str | None = Field(
        default=None,
        description="Only search files matching this glob, e.g. `*.py` or `*.{ts,tsx}`.",
    )


@attrs.frozen(kw_only=True)
class _Match:
    path: str
    line: int
    text: str


class GrepTool:
    """Implements ``Tool[GrepParams]``."""

    name = "grep"
    kind: ToolKind = "search"
    permission = PermissionKind.GREP
    mutates = False
    Params = GrepParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: GrepParams, roots: Sequence[str]) -> str:
        where = f" in {shown_path(params.path, roots)}" if params.path else ""
        return one_line_title(f"Search for '{params.pattern}'{where}")

    async def run(self, params: GrepParams, ctx: ToolRunContext) -> ToolOutcome:
        title = params.pattern
        root = await resolve_search_root(
            ctx, params.path, permission=self.permission, title=title, files_too=True, extra=True
        )
        if isinstance(root, ToolOutcome):
            return root
        included = compile_glob(params.include) if params.include else None
        prefix = root.folder.rstrip("/") + "/"
        found: list[_Match] = []

        def take(record: bytes) -> bool:
            match = _parse(record)
            if match is not None and (
                included is None or included(match.path.removeprefix(prefix))
            ):
                found.append(match)
            return len(found) < SCAN_LIMIT

        args = ["--line-number", "--with-filename", "--no-heading", "--null"]
        args += [f"--regexp={params.pattern}", *name_filter_args(params.include or "")]
        result = await run_rg(
            args, cwd=root.folder, target=root.path, on_record=take, avoid=ctx.boundary.roots
        )
        if isinstance(result, RgFailure):
            return ToolOutcome(output=result.message, is_error=True, title=title)
        if not found:
            return ToolOutcome(
                output="No files found",
                title=title,
                details=SearchDetails(count=0, truncated=False),
            )
        ordered = await asyncio.to_thread(_newest_files_first, found)
        truncated = len(ordered) > LIMIT
        count = f"at least {len(ordered)}" if result.stopped else str(len(ordered))
        header = f"Found {count} match{'es' if count != '1' else ''}"
        if truncated:
            header += f" (showing the first {LIMIT})"
        body = _render(ordered[:LIMIT], ctx)
        output = f"{header}\n\n{body}" + (f"\n\n{TRUNCATED_NOTE}" if truncated else "")
        return ToolOutcome(
            output=output,
            title=title,
            details=SearchDetails(count=len(ordered), truncated=truncated),
        )


def _parse(record: bytes) -> _Match | None:
    name, has_name, rest = record.partition(b"\0")
    number, has_number, text = rest.partition(b":")
    if not (has_name and has_number and number.isdigit()):
        return None  # e.g. "binary file matches" notes, which carry no NUL
    line = text.decode("utf-8", "replace").removesuffix("\r")
    if len(line) > MAX_LINE_CHARS:
        line = line[:MAX_LINE_CHARS] + "..."
    return _Match(path=name.decode("utf-8", "surrogateescape"), line=int(number), text=line)


def _newest_files_first(found: Sequence[_Match]) -> list[_Match]:
    by_file: dict[str, list[_Match]] = {}
    for match in found:
        by_file.setdefault(match.path, []).append(match)
    return [
        match
        for path in newest_first(list(by_file))
        for match in sorted(by_file[path], key=lambda m: m.line)
    ]


def _render(matches: Sequence[_Match], ctx: ToolRunContext) -> str:
    lines: list[str] = []
    current: str | None = None
    for match in matches:
        if match.path != current:
            if current is not None:
                lines.append("")
            lines.append(f"{display_path(match.path, ctx)}:")
            current = match.path
        lines.append(f"  Line {match.line}: {match.text}")
    return "\n".join(lines)
