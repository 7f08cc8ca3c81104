"""``definition``, ``references``, ``hover``, ``implementation`` and ``symbols``: the editor's
language servers as tools, through the :class:`~lsp_agent.search.editor_queries.EditorQueries`
port.

A position is given as the model reads files (``line``, ``character``, 1-based, as ``read``
numbers lines) or as a ``symbol`` name, found among the file's document symbols so the model
need not count columns. Results are one line per location, ``path:line:col: <that line>``,
paths relative to the workspace; a location outside the workspace wall (a library, the
agent's own data folder, a non-file uri) is only counted, never shown. They only read: the
``read`` permission (allowed by default, in plan mode too), and no file outside the
workspace is ever asked about. The registry offers a tool only when the host answers the
kinds it needs (:func:`code_nav_tools`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.core.uris import file_uri, path_of_uri
from lsp_agent.search.code_shapes import (
    Place,
    Symbol,
    column_of,
    document_symbols,
    find_symbols,
    hover_text,
    places,
    utf16_of,
    workspace_symbols,
)
from lsp_agent.search.editor_queries import EditorQueries, EditorQuery, QueryFailed, QueryKind
from lsp_agent.tools.base import (
    Tool,
    ToolRunContext,
    load_description,
    one_line_title,
    refusal,
    shown_path,
)
from lsp_agent.workspace.boundary import Resolved
from lsp_agent.workspace.files import FileError, read_current
from lsp_agent.workspace.path_shapes import meant_path

__all__ = [
    "MAX_LINE_CHARS",
    "PositionParams",
    "PositionTool",
    "SymbolsParams",
    "SymbolsTool",
    "code_nav_tools",
]

MAX_LINE_CHARS = 200
"""A location's line is cut here (the whole line is one ``read`` away)."""
_LISTED_SYMBOLS = 30

_POSITION_KINDS: tuple[QueryKind, ...] = ("definition", "references", "hover", "implementation")
"""Each is a tool of the same name."""
_VERBS: dict[str, str] = {
    "definition": "Find the definition at",
    "references": "Find references at",
    "hover": "Show the hover of",
    "implementation": "Find implementations at",
}
_NOUNS: dict[str, str] = {
    "definition": "definitions",
    "references": "references",
    "implementation": "implementations",
}


class PositionParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        description="The file: absolute, or relative to the first workspace folder."
    )
    line: int | None = Field(
        default=None, ge=1, description="The line, 1-based (as the read tool numbers lines)."
    )
    character: int | None = Field(
        default=None,
        ge=1,
        description="The column on that line, 1-based; default: its first non-blank character.",
    )
    symbol: str | None = Field(
        default=None,
        min_length=1,
        description="Instead of line and character: the name of a symbol declared in that "
        "file (Class.method for a member); its declaration is the position.",
    )


class SymbolsParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str | None = Field(
        default=None, description="List this file's symbols (absolute, or workspace-relative)."
    )
    query: str | None = Field(
        default=None,
        min_length=1,
        description="Instead of file_path: search the whole workspace's symbols by name.",
    )


def code_nav_tools(queries: EditorQueries | None) -> list[Tool[Any]]:
    """The tools ``queries`` can answer; none without a port."""
    if queries is None:
        return []
    kinds = queries.kinds
    tools: list[Tool[Any]] = [
        PositionTool(kind, queries) for kind in _POSITION_KINDS if kind in kinds
    ]
    if kinds & {"documentSymbols", "workspaceSymbols"}:
        tools.append(SymbolsTool(queries))
    return tools


class PositionTool:
    """Implements ``Tool[PositionParams]``: one query at a position of a file."""

    kind: ToolKind = "search"
    permission = PermissionKind.READ
    """It reads the code through the editor: governed (and hidden) like ``read``."""
    mutates = False
    Params = PositionParams

    def __init__(self, query_kind: QueryKind, queries: EditorQueries) -> None:
        self.name: str = query_kind
        self.description = load_description(query_kind)
        self._kind = query_kind
        self._queries = queries

    def describe(self, params: PositionParams, roots: Sequence[str]) -> str:
        at = shown_path(params.file_path, roots)
        if params.symbol is not None:
            at = f"{params.symbol} in {at}"
        elif params.line is not None:
            at = f"{at}:{params.line}"
        return one_line_title(f"{_VERBS[self._kind]} {at}")

    async def run(self, params: PositionParams, ctx: ToolRunContext) -> ToolOutcome:
        where = await _checked_file(params.file_path, ctx, f"{self.name} in")
        if isinstance(where, ToolOutcome):
            return where
        lines = await _file_lines(ctx, where.path)
        if isinstance(lines, ToolOutcome):
            return lines
        position = await self._position(params, where, lines, ctx)
        if isinstance(position, ToolOutcome):
            return position
        line, character = position
        answer = await self._queries.query(
            ctx.call.session_id,
            EditorQuery(kind=self._kind, path=where.path, line=line, character=character),
        )
        if isinstance(answer, QueryFailed):
            return _failed(self.name, answer, where.display)
        at = f"{where.display}:{line + 1}:{column_of(_line(lines, line), character) + 1}"
        if self._kind == "hover":
            text = hover_text(answer)
            output = text or f"No hover information at {at}."
            return ToolOutcome(output=output, title=at)
        shown, outside = await _render_places(places(answer), ctx)
        noun = _NOUNS.get(self._kind, self._kind)
        if not shown and not outside:
            return ToolOutcome(output=f"No {noun} found for {at}.", title=at)
        body = "\n".join(shown) if shown else f"No {noun} inside the workspace."
        return ToolOutcome(output=body + _outside_note(outside), title=at)

    async def _position(
        self, params: PositionParams, where: Resolved, lines: list[str], ctx: ToolRunContext
    ) -> tuple[int, int] | ToolOutcome:
        """The 0-based line and UTF-16 character the query is about."""
        if params.symbol is not None:
            return await _symbol_position(self._queries, params.symbol, where, lines, ctx)
        if params.line is None:
            return _error("Give either line (and character) or symbol.")
        if params.line > max(len(lines), 1):
            return _error(f"{where.display} has {len(lines)} lines; line {params.line} is past it.")
        text = _line(lines, params.line - 1)
        if params.character is None:
            column = len(text) - len(text.lstrip())
        else:
            column = min(params.character - 1, len(text))
        return params.line - 1, utf16_of(text, column)


class SymbolsTool:
    """Implements ``Tool[SymbolsParams]``: a file's symbols, or the workspace's by name."""

    name = "symbols"
    kind: ToolKind = "search"
    permission = PermissionKind.READ
    mutates = False
    Params = SymbolsParams

    def __init__(self, queries: EditorQueries) -> None:
        self.description = load_description(self.name)
        self._queries = queries

    def describe(self, params: SymbolsParams, roots: Sequence[str]) -> str:
        if params.query is not None:
            return one_line_title(f"Find symbols like '{params.query}'")
        return f"List the symbols of {shown_path(params.file_path or '.', roots)}"

    async def run(self, params: SymbolsParams, ctx: ToolRunContext) -> ToolOutcome:
        if (params.file_path is None) == (params.query is None):
            return _error("Give either file_path or query.")
        if params.query is not None:
            return await self._workspace(params.query, ctx)
        assert params.file_path is not None
        if "documentSymbols" not in self._queries.kinds:
            return _error("The editor cannot list a file's symbols; search with query instead.")
        where = await _checked_file(params.file_path, ctx, "Symbols of")
        if isinstance(where, ToolOutcome):
            return where
        lines = await _file_lines(ctx, where.path)
        if isinstance(lines, ToolOutcome):
            return lines
        answer = await self._queries.query(
            ctx.call.session_id, EditorQuery(kind="documentSymbols", path=where.path)
        )
        if isinstance(answer, QueryFailed):
            return _failed(self.name, answer, where.display)
        symbols = document_symbols(answer, file_uri(where.path))
        if not symbols:
            return ToolOutcome(output=f"No symbols found in {where.display}.", title=where.display)
        rows = [
            f"{'  ' * s.depth}{s.place.line + 1}:"
            f"{column_of(_line(lines, s.place.line), s.place.character) + 1} {s.kind} {s.name}"
            for s in symbols
        ]
        return ToolOutcome(output="\n".join(rows), title=where.display)

    async def _workspace(self, query: str, ctx: ToolRunContext) -> ToolOutcome:
        if "workspaceSymbols" not in self._queries.kinds:
            return _error("The editor cannot search the workspace's symbols; give file_path.")
        verdict = await ctx.ask(
            PermissionRequest(
                permission=PermissionKind.READ, patterns=("*",), title=f"Symbols like {query}"
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=query)
        answer = await self._queries.query(
            ctx.call.session_id, EditorQuery(kind="workspaceSymbols", query=query)
        )
        if isinstance(answer, QueryFailed):
            return _failed(self.name, answer, query)
        symbols = workspace_symbols(answer)
        shown, outside = await _render_places([s.place for s in symbols], ctx, symbols)
        if not shown and not outside:
            return ToolOutcome(output=f"No symbols match {query!r}.", title=query)
        body = "\n".join(shown) if shown else "No matching symbols inside the workspace."
        return ToolOutcome(output=body + _outside_note(outside), title=query)


# -- shared ------------------------------------------------------------------------------


async def _checked_file(path: str, ctx: ToolRunContext, title: str) -> Resolved | ToolOutcome:
    """``path`` inside the workspace, with the ``read`` permission; never asks for outside."""
    where = ctx.boundary.resolve(meant_path(path, ctx.boundary.roots))
    if not isinstance(where, Resolved):
        return _error(f"{where.message}. The editor is only asked about workspace files.")
    verdict = await ctx.ask(
        PermissionRequest(
            permission=PermissionKind.READ,
            patterns=(where.display,),
            title=f"{title} {where.display}",
        )
    )
    if not verdict.allowed:
        return refusal(verdict, title=where.display)
    return where


async def _file_lines(ctx: ToolRunContext, path: str) -> list[str] | ToolOutcome:
    """The file's lines now (the editor's buffer first, else the disk)."""
    try:
        current = await read_current(ctx.editor, path)
    except FileError as error:
        return _error(str(error))
    if current is None:
        return _error(f"File not found: {path}")
    return current.text.splitlines()


async def _symbol_position(
    queries: EditorQueries, name: str, where: Resolved, lines: list[str], ctx: ToolRunContext
) -> tuple[int, int] | ToolOutcome:
    if "documentSymbols" not in queries.kinds:
        return _error("The editor cannot find symbols by name here; give line and character.")
    answer = await queries.query(
        ctx.call.session_id, EditorQuery(kind="documentSymbols", path=where.path)
    )
    if isinstance(answer, QueryFailed):
        return _failed("symbol lookup", answer, where.display)
    symbols = document_symbols(answer, file_uri(where.path))
    found = find_symbols(symbols, name)
    if not found:
        known = ", ".join(dict.fromkeys(s.qualified for s in symbols[:_LISTED_SYMBOLS]))
        return _error(
            f"No symbol {name!r} in {where.display}."
            + (f" Its symbols: {known}." if known else " The editor reported no symbols.")
        )
    place = found[0].place
    return place.line, _name_offset(_line(lines, place.line), place.character, found[0].name)


def _name_offset(text: str, units: int, name: str) -> int:
    """The symbol's name on its line from ``units`` on (a range may start at ``def``)."""
    column = column_of(text, units)
    index = text.find(name, column)
    return utf16_of(text, index) if index >= 0 else units


async def _render_places(
    found: Sequence[Place], ctx: ToolRunContext, symbols: Sequence[Symbol] = ()
) -> tuple[list[str], int]:
    """``path:line:col: text`` per place inside the wall (with ``symbols``: their kind and
    name instead of the text), and how many were outside."""
    rows: list[str] = []
    outside = 0
    texts: dict[str, list[str] | None] = {}
    for index, place in enumerate(found):
        path = path_of_uri(place.uri)
        where = ctx.boundary.resolve(path) if path is not None else None
        if not isinstance(where, Resolved):
            outside += 1
            continue
        if where.path not in texts:
            lines = await _file_lines(ctx, where.path)
            texts[where.path] = lines if isinstance(lines, list) else None
        text = _line(texts[where.path] or [], place.line)
        at = f"{where.display}:{place.line + 1}:{column_of(text, place.character) + 1}"
        if symbols:
            symbol = symbols[index]
            container = f" (in {symbol.container})" if symbol.container else ""
            rows.append(f"{at}: {symbol.kind} {symbol.name}{container}")
        else:
            rows.append(f"{at}: {_cut(text.strip())}")
    return rows, outside


def _line(lines: Sequence[str], index: int) -> str:
    return lines[index] if 0 <= index < len(lines) else ""


def _cut(text: str) -> str:
    return text if len(text) <= MAX_LINE_CHARS else text[:MAX_LINE_CHARS] + "…"


def _outside_note(outside: int) -> str:
    if not outside:
        return ""
    noun = "location" if outside == 1 else "locations"
    return f"\n+{outside} {noun} outside the workspace"


def _failed(what: str, failed: QueryFailed, subject: str) -> ToolOutcome:
    output = f"The {what} query failed: {failed.reason}"
    return ToolOutcome(output=output, is_error=True, title=subject)


def _error(output: str) -> ToolOutcome:
    return ToolOutcome(output=output, is_error=True)
