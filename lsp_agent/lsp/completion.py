"""Inline completion (``textDocument/inlineCompletion``, LSP 3.18) and next-edit suggestions
(``agent/nextEdit`` and its feedback, protocol.md §12a) over :mod:`lsp_agent.completion`.

The provider is advertised in the ``initialize`` answer only when ``completion.enabled`` is set
(``config/peek.py`` reads it before the settings are loaded); the engines are built from the
loaded settings on first use (``completion_host.py``). ``didOpen``/``didChange``/``didClose``
keep each document's recent edits, and a change cancels the document's pending suggestion."""

from __future__ import annotations

import asyncio
import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from lsp_agent.completion.history import EditHistory
from lsp_agent.config.peek import peek_key
from lsp_agent.core.uris import path_of_uri

if TYPE_CHECKING:
    from lsp_agent.completion.inline import Cursor
    from lsp_agent.lsp import protocol as p
    from lsp_agent.lsp.completion_host import Engines
    from lsp_agent.lsp.host import AgentHost
    from lsp_agent.lsp.server import AgentServer
    from lsp_agent.lsp.startup import Startup

_log = logging.getLogger(__name__)

ACCEPTED_COMMAND = "lsp-agent.inlineCompletionAccepted"
"""The command on each item (its argument: the suggestion's id); a client that runs it on
accept sends ``agent/nextEdit/feedback`` (docs/protocol.md)."""


class CompletionFeature:
    def __init__(self, server: AgentServer, holder: Startup) -> None:
        self._server = server
        self._holder = holder
        self.enabled = False
        """Advertised in ``initialize`` (the folder's configuration enables it)."""
        self.history = EditHistory()
        self._engines: Engines | None = None
        self._building: asyncio.Future[Engines | None] | None = None

    # -- the server's hooks ------------------------------------------------------------------

    def decide(self, params: lsp.InitializeParams) -> None:
        """Called by ``initialize`` before the capabilities are computed."""
        if _enabled_in_config(params, self._server.env):
            self.enabled = True
            options = self._server.protocol.fm.feature_options
            options[lsp.TEXT_DOCUMENT_INLINE_COMPLETION] = lsp.InlineCompletionOptions()

    def attach(self, host: AgentHost) -> None:
        if self.enabled:
            host.completion = self

    def opened(self, params: lsp.DidOpenTextDocumentParams) -> None:
        if self.enabled:
            self.history.opened(params.text_document.uri, params.text_document.text)

    def changed(self, params: lsp.DidChangeTextDocumentParams) -> None:
        if not self.enabled:
            return
        uri = params.text_document.uri
        document = self._server.workspace.text_documents.get(uri)
        if document is not None:
            self.history.changed(uri, document.source)
        if self._engines is not None:
            self._engines.inline.changed(uri)

    def closed(self, params: lsp.DidCloseTextDocumentParams) -> None:
        self.history.closed(params.text_document.uri)

    # -- requests ------------------------------------------------------------------------------

    async def inline(self, params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList:
        none = lsp.InlineCompletionList(items=[])
        engines = await self.engines()
        cursor = self._cursor(params.text_document.uri, params.position)
        if engines is None or cursor is None:
            return none
        suggestion = await engines.inline.complete(cursor)
        if suggestion is None:
            return none
        at = params.position
        item = lsp.InlineCompletionItem(
            insert_text=suggestion.text,
            range=lsp.Range(start=at, end=at),
            command=lsp.Command(
                title="Accepted", command=ACCEPTED_COMMAND, arguments=[suggestion.id]
            ),
        )
        return lsp.InlineCompletionList(items=[item])

    async def next_edit(self, params: p.NextEditParams) -> p.NextEditResult | None:
        from lsp_agent.lsp import protocol as p

        engines = await self.engines()
        position = lsp.Position(line=params.position.line, character=params.position.character)
        uri = params.text_document.uri
        cursor = self._cursor(uri, position)
        if engines is None or cursor is None or cursor.version != params.text_document.version:
            return None  # the document is not at the version asked about
        suggestion = await engines.next_edits.suggest(cursor)
        document = self._server.workspace.text_documents.get(uri)
        if suggestion is None or document is None:
            return None
        codec, lines = document.position_codec, document.lines
        start = codec.position_to_client_units(lines, lsp.Position(*suggestion.start))
        end = codec.position_to_client_units(lines, lsp.Position(*suggestion.end))
        return p.NextEditResult.model_validate(
            {
                "id": suggestion.id,
                "uri": uri,
                "range": {
                    "start": {"line": start.line, "character": start.character},
                    "end": {"line": end.line, "character": end.character},
                },
                "newText": suggestion.new_text,
                "reason": suggestion.reason,
            }
        )

    async def feedback(self, params: p.NextEditFeedbackParams) -> None:
        engines = await self.engines()
        if engines is not None and not await engines.feedback.record(params.id, params.accepted):
            _log.info("feedback on %s recorded nowhere (unknown, or no session)", params.id)

    async def engines(self) -> Engines | None:
        """The engines, built once the host is up (None: off, or not usable)."""
        if self._engines is not None or not self.enabled:
            return self._engines
        if self._building is None:
            self._building = asyncio.ensure_future(self._build())
        return await asyncio.shield(self._building)

    async def _build(self) -> Engines | None:
        host = await self._holder.wait()
        from lsp_agent.lsp.completion_host import build_engines

        self._engines = build_engines(host, self._server, self.history)
        return self._engines

    def _cursor(self, uri: str, position: lsp.Position) -> Cursor | None:
        document = self._server.workspace.text_documents.get(uri)
        if document is None or document.version is None:
            return None
        from lsp_agent.completion.inline import Cursor

        path = path_of_uri(uri)
        return Cursor(
            uri=uri,
            path=os.path.realpath(path) if path is not None else None,
            version=document.version,
            text=document.source,
            offset=document.offset_at_position(position),
        )


def register_completion(server: AgentServer, holder: Startup) -> CompletionFeature:
    """The feature registered without options: the provider is advertised by ``decide``."""
    feature = CompletionFeature(server, holder)

    @server.feature(lsp.TEXT_DOCUMENT_INLINE_COMPLETION)
    async def inline_completion(params: lsp.InlineCompletionParams) -> Any:
        return await feature.inline(params)

    return feature


def _enabled_in_config(params: lsp.InitializeParams, env: Any) -> bool:
    options = params.initialization_options
    agent = options.get("agent") if isinstance(options, dict) else None
    agent = agent if isinstance(agent, dict) else {}
    config = agent.get("config")
    workspace_config = agent.get("workspaceConfig")
    folders = params.workspace_folders or []
    first = folders[0].uri if folders else params.root_uri
    path = path_of_uri(first) if first else None
    value = peek_key(
        ("completion", "enabled"),
        workspace=Path(path) if path is not None else None,
        env=env,
        workspace_options=workspace_config if isinstance(workspace_config, dict) else None,
        init_options=config if isinstance(config, dict) else None,
    )
    return value is True
