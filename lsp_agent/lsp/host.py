"""What the server does once initialized: the store, the agent, turns, the boundary.

Built in ``initialize`` from the client's workspace folders and
``initializationOptions.agent``. Without a usable model the server still starts: sessions
can be listed, loaded and exported, and ``agent/session/new``/``prompt`` answer with the
reason (no model configured, a bad config file) instead of the server failing to start.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from lsp_agent.app import App, build_app, open_data_store
from lsp_agent.core.errors import ConfigError, LspAgentError
from lsp_agent.lsp.documents import OpenDocuments, path_of_uri
from lsp_agent.lsp.editor import ChangeSets, LspEditor
from lsp_agent.lsp.errors import InvalidParams
from lsp_agent.lsp.protocol import AgentClientOptions, Diagnostic
from lsp_agent.lsp.stream import UpdateStream
from lsp_agent.lsp.turns import TurnScheduler
from lsp_agent.settings import load_settings, resolve_model
from lsp_agent.storage.event_log import SqliteEventStore

_log = logging.getLogger(__name__)


class AgentUnavailable(LspAgentError):
    """The agent could not be built (no model, a bad config): the message says how to fix it."""


class AgentHost:
    def __init__(
        self,
        *,
        store: SqliteEventStore,
        editor: LspEditor,
        stream: UpdateStream,
        documents: OpenDocuments,
        folders: Any,
        options: AgentClientOptions | None,
        app: App | None,
        app_error: str | None,
    ) -> None:
        """``folders`` returns the workspace folders' uris now (they change at runtime)."""
        self.store = store
        self.editor = editor
        self.stream = stream
        self.documents = documents
        self.options = options
        self._folders = folders
        self._app = app
        self._app_error = app_error
        self.diagnostics: dict[str, list[Diagnostic]] = {}
        self.prompt_answers: dict[tuple[str, str], dict[str, Any]] = {}
        self.scheduler = TurnScheduler(run_turn=self._run_turn, has_pending=self._has_pending)

    @property
    def app(self) -> App:
        if self._app is None:
            raise AgentUnavailable(self._app_error or "the agent is not available")
        return self._app

    @property
    def agent_available(self) -> bool:
        return self._app is not None

    def workspace_folders(self) -> list[str]:
        """The boundary: every workspace folder's real path, in the client's order."""
        paths = []
        for uri in self._folders():
            path = path_of_uri(uri)
            if path is not None:
                paths.append(os.path.realpath(path))
        return list(dict.fromkeys(paths))

    def folder_for(self, uri: str | None) -> str:
        """The workspace folder a new session works in (the first one by default)."""
        folders = self.workspace_folders()
        if uri is None:
            if not folders:
                raise InvalidParams("workspaceFolder: the client opened no workspace folder")
            return folders[0]
        path = path_of_uri(uri)
        real = os.path.realpath(path) if path is not None else None
        if real is None or real not in folders:
            raise InvalidParams(f"workspaceFolder: {uri} is not a workspace folder")
        return real

    async def _run_turn(self, session_id: str) -> str:
        outcome = await self.app.sessions.run_turn(session_id)
        return outcome.stop_reason

    async def _has_pending(self, session_id: str) -> bool:
        return bool(await self.store.pending_inputs(session_id))

    async def aclose(self) -> None:
        await self.scheduler.aclose()
        if self._app is not None:
            await self._app.sessions.drain(timeout=2.0)
        await self.store.close()


async def start_host(
    *,
    client: Any,
    env: Mapping[str, str],
    documents: OpenDocuments,
    folders: Any,
    raw_options: Any,
) -> AgentHost:
    """Open the store and build the agent for this client (see the module docstring)."""
    options = None
    if isinstance(raw_options, dict) and "agent" in raw_options:
        options = AgentClientOptions.model_validate(raw_options["agent"])
    store = await open_data_store(env)
    stream = UpdateStream(
        store=store, send=lambda params: client.notify("agent/session/update", params)
    )
    editor = LspEditor(
        client=client,
        documents=documents,
        stream=stream,
        ui=options.ui if options is not None else None,
        change_sets=ChangeSets(),
    )
    host = AgentHost(
        store=store,
        editor=editor,
        stream=stream,
        documents=documents,
        folders=folders,
        options=options,
        app=None,
        app_error=None,
    )
    roots = host.workspace_folders()
    workspace = Path(roots[0]) if roots else Path.cwd()
    init_config: dict[str, Any] | None = None
    if options is not None and options.config is not None:
        init_config = options.config.model_dump(exclude_none=True)
    try:
        settings = load_settings(workspace=workspace, env=env, init_options=init_config)
        model = resolve_model(settings)
        app = await build_app(
            settings=settings,
            model=model,
            env=env,
            editor=editor,
            workspace=workspace,
            store=store,
            roots=lambda _folder: host.workspace_folders(),
        )
    except ConfigError as error:
        _log.warning("the agent is not available: %s", error)
        host._app_error = str(error)
    else:
        host._app = app
    return host
