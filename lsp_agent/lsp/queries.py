"""The tools' :class:`~lsp_agent.search.editor_queries.EditorQueries` port over LSP: the
``agent/editor/query`` request to the client (protocol.md "Editor queries").

The client said at ``initialize`` which kinds it answers
(``initializationOptions.agent.editorQueries``); only those become tools. Each query waits
at most :data:`QUERY_TIMEOUT`; an error answer, a timeout or a malformed result becomes a
:class:`QueryFailed` the model reads, never an exception.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError

from lsp_agent.core.uris import file_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.editor import Client, plain_json
from lsp_agent.lsp.timeouts import ClientTimeout
from lsp_agent.search.editor_queries import QUERY_KINDS, EditorQuery, QueryFailed

__all__ = ["QUERY_TIMEOUT", "LspEditorQueries"]

_log = logging.getLogger(__name__)

QUERY_TIMEOUT = 10.0
"""Seconds a query waits for the editor (its language servers may still be starting)."""


class LspEditorQueries:
    """Implements ``EditorQueries`` for an agent front-end."""

    def __init__(
        self, client: Client, kinds: Iterable[str], *, timeout: float = QUERY_TIMEOUT
    ) -> None:
        self._client = client
        self._kinds = frozenset(kind for kind in kinds if kind in QUERY_KINDS)
        self._timeout = timeout

    @property
    def kinds(self) -> frozenset[str]:
        return self._kinds

    async def query(
        self, session_id: str, request: EditorQuery
    ) -> list[dict[str, Any]] | QueryFailed:
        if request.kind not in self._kinds:
            return QueryFailed(f"the editor does not answer {request.kind} queries")
        position = None
        if request.line is not None:
            position = p.Position(line=request.line, character=request.character or 0)
        params = p.EditorQueryParams(
            session_id=session_id,
            kind=request.kind,
            uri=file_uri(request.path) if request.path is not None else None,
            position=position,
            query=request.query,
        )
        try:
            async with asyncio.timeout(self._timeout):
                raw = await self._client.request("agent/editor/query", params.dump())
        except TimeoutError:
            return QueryFailed(f"the editor did not answer within {self._timeout:g} s")
        except ClientTimeout as timeout:  # the connection's own limit (editor.request_timeout)
            return QueryFailed(f"the editor did not answer within {timeout.waited}")
        except asyncio.CancelledError:
            raise
        except Exception as error:  # the client answered with an error
            _log.info("agent/editor/query %s failed: %s", request.kind, error)
            return QueryFailed(f"the editor answered with an error: {error}")
        try:
            result = p.EditorQueryResult.model_validate(plain_json(raw))
        except ValidationError as error:
            _log.warning("agent/editor/query %s: a malformed answer: %s", request.kind, error)
            return QueryFailed("the editor's answer was malformed")
        return [dict(item) for item in result.items]
