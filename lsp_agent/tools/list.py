"""The ``list`` tool: a folder's files as an indented tree.

Files come from ``rg --files``, so ``.gitignore`` is honoured, ``.git`` is never shown and
symlinks are not followed; common build and dependency folders and the caller's ``ignore``
globs are left out too. The shallowest ``LIMIT`` files (of at most ``SCAN_LIMIT`` looked at)
are shown, so a big tree still shows its top levels.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TypeAlias

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import SearchDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.search.ripgrep import RgFailure, run_rg
from lsp_agent.tools.base import ToolRunContext, load_description, resolve_search_root, shown_path

__all__ = ["DEFAULT_IGNORES", "LIMIT", "SCAN_LIMIT", "ListParams", "ListTool"]

_Tree: TypeAlias = "dict[str, _Tree | None]"
"""Folder names (with a trailing ``/``) map to their contents, file names to ``None``."""

LIMIT = 100
SCAN_LIMIT = 2000
DEFAULT_IGNORES = (
    *("node_modules", "__pycache__", ".venv", "venv", ".tox", ".nox", ".cache"),
    *(".mypy_cache", ".pytest_cache", ".ruff_cache", ".idea", ".next", "dist", "build"),
    "target",
)
TRUNCATED_NOTE = (
    f"(Results are truncated: showing {LIMIT} files. "
    "Use a more specific path or `ignore` patterns to see others.)"
)


class ListParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    path: str | None = Field(
        default=None,
        description="The folder to list: absolute or relative to the first workspace folder "
        "(default: the first workspace folder).",
    )
    ignore: list[str] | None = Field(
        default=None,
        description="Globs of files or folders to leave out, e.g. `*.log` or `tests/`.",
    )


class ListTool:
    """Implements ``Tool[ListParams]``."""

    name = "list"
    kind: ToolKind = "search"
    permission = PermissionKind.LIST
    mutates = False
    Params = ListParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: ListParams, roots: Sequence[str]) -> str:
        return f"List {shown_path(params.path or '.', roots)}"

    async def run(self, params: ListParams, ctx: ToolRunContext) -> ToolOutcome:
        root = await resolve_search_root(
            ctx, params.path, permission=self.permission, title=params.path or ".", files_too=False
        )
        if isinstance(root, ToolOutcome):
            return root
        prefix = root.path.rstrip("/") + "/"
        found: list[str] = []

        def take(record: bytes) -> bool:
            path = record.decode("utf-8", "replace")
            if path.startswith(prefix):
                found.append(path[len(prefix) :])
            return len(found) < SCAN_LIMIT

        ignores = [*(f"{name}/" for name in DEFAULT_IGNORES), *(params.ignore or ())]
        args = ["--files", "--null", *(f"--glob=!{glob}" for glob in ignores)]
        result = await run_rg(
            args,
            cwd=root.path,
            target=root.path,
            on_record=take,
            separator=b"\0",
            avoid=ctx.boundary.roots,
        )
        if isinstance(result, RgFailure):
            return ToolOutcome(output=result.message, is_error=True, title=root.display)
        found.sort(key=lambda rel: (rel.count("/"), rel.casefold(), rel))
        shown = found[:LIMIT]
        truncated = len(found) > LIMIT
        output = f"{prefix}\n" + (_render_tree(shown) or "No files found")
        if truncated:
            output += f"\n\n{TRUNCATED_NOTE}"
        return ToolOutcome(
            output=output,
            title=root.display,
            details=SearchDetails(count=len(shown), truncated=truncated, path=root.path),
        )


def _render_tree(paths: Iterable[str]) -> str:
    tree: _Tree = {}
    for path in paths:
        node = tree
        *folders, name = path.split("/")
        for folder in folders:
            child = node.setdefault(folder + "/", {})
            assert child is not None
            node = child
        node[name] = None
    lines: list[str] = []
    _render_node(tree, 1, lines)
    return "\n".join(lines)


def _render_node(node: _Tree, depth: int, lines: list[str]) -> None:
    # Folders first, then files; each group by name.
    for name in sorted(node, key=lambda n: (not n.endswith("/"), n.casefold(), n)):
        lines.append("  " * depth + name)
        child = node[name]
        if child is not None:
            _render_node(child, depth + 1, lines)
