"""What the editor's own language servers know, as a port: the :class:`EditorQueries` the
code-navigation tools (``tools/code_nav.py``) ask.

An editor already runs pyright, rust-analyzer, tsserver… for the user, with the unsaved text
too; the agent asks it instead of starting servers of its own. Over LSP the port is the
``agent/editor/query`` request (``lsp_agent/lsp/queries.py``); a host that answers nothing
passes no port, and then no such tool is offered. The tools offered are exactly those whose
kinds the host says it answers (:attr:`EditorQueries.kinds`).

Positions here are LSP's: 0-based lines and UTF-16 characters. The answers are LSP's own
shapes as plain JSON (``Location``/``LocationLink``, ``Hover``, ``DocumentSymbol``/
``SymbolInformation``/``WorkspaceSymbol``); the tools read them defensively.
"""

from __future__ import annotations

from typing import Any, Literal, Protocol, get_args

import attrs

__all__ = ["QUERY_KINDS", "EditorQueries", "EditorQuery", "QueryFailed", "QueryKind"]

QueryKind = Literal[
    "definition",
    "references",
    "hover",
    "documentSymbols",
    "workspaceSymbols",
    "implementation",
    "typeDefinition",
]
QUERY_KINDS: tuple[QueryKind, ...] = get_args(QueryKind)


@attrs.frozen(kw_only=True)
class EditorQuery:
    """One question to the editor: a file (+ position), or a workspace-symbol query."""

    kind: QueryKind
    path: str | None = None
    """Absolute, resolved through the workspace boundary."""
    line: int | None = None
    """0-based."""
    character: int | None = None
    """0-based, in UTF-16 code units (LSP's default encoding)."""
    query: str | None = None
    """For ``workspaceSymbols``."""


@attrs.frozen
class QueryFailed:
    """The editor gave no usable answer (an error, a timeout, a malformed result)."""

    reason: str


class EditorQueries(Protocol):
    """The host's language intelligence (an editor's language servers)."""

    @property
    def kinds(self) -> frozenset[str]:
        """The kinds this host answers (of :data:`QUERY_KINDS`)."""
        ...

    async def query(
        self, session_id: str, request: EditorQuery
    ) -> list[dict[str, Any]] | QueryFailed:
        """The answer's items (``[]``: the editor knows nothing), or why there is none.
        Never raises for a failure of the editor; cancellation propagates."""
        ...
