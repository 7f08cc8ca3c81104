"""``textDocument/inlineCompletion`` (LSP 3.18) over :mod:`lsp_agent.completion`: advertised in
the ``initialize`` answer only when ``completion.enabled`` is set (``config/peek.py`` reads it
before the settings are loaded), answered from the engine built from the loaded settings on the
first request. ``didChange`` cancels the document's pending suggestion (``changed``)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from lsp_agent.config.peek import peek_key
from lsp_agent.core.uris import path_of_uri

if TYPE_CHECKING:
    from lsp_agent.completion.inline import InlineCompletions
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
        self._engine: InlineCompletions | None = None
        self._built = False

    def decide(self, params: lsp.InitializeParams) -> None:
        """Called by ``initialize`` before the capabilities are computed: the provider is
        advertised when the folder's configuration enables completion."""
        if _enabled_in_config(params, self._server.env):
            options = self._server.protocol.fm.feature_options
            options[lsp.TEXT_DOCUMENT_INLINE_COMPLETION] = lsp.InlineCompletionOptions()

    def changed(self, params: lsp.DidChangeTextDocumentParams) -> None:
        if self._engine is not None:
            self._engine.changed(params.text_document.uri)

    async def inline(self, params: lsp.InlineCompletionParams) -> lsp.InlineCompletionList:
        engine = await self.engine()
        none = lsp.InlineCompletionList(items=[])
        uri = params.text_document.uri
        document = self._server.workspace.text_documents.get(uri)
        if engine is None or document is None or document.version is None:
            return none
        from lsp_agent.completion.inline import Cursor

        path = path_of_uri(uri)
        cursor = Cursor(
            uri=uri,
            path=os.path.realpath(path) if path is not None else None,
            version=document.version,
            text=document.source,
            offset=document.offset_at_position(params.position),
        )
        suggestion = await engine.complete(cursor)
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

    async def engine(self) -> InlineCompletions | None:
        """The engine, built once the host is up (None: completion is off or unusable)."""
        if not self._built:
            host = await self._holder.wait()
            if not self._built:
                from lsp_agent.lsp.completion_host import build_engine

                self._engine = build_engine(host, self._server)
                self._built = True
        return self._engine


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
