"""What the server holds once initialized: the store, the agent, turns, the boundary.

:func:`start_host` runs right after ``initialize`` is answered (``startup.py``) and only
adapts: the client becomes the core's ports (``LspEditor``, the update stream or a plain
client's progress), its workspace folders the workspace and the roots,
``initializationOptions.agent.config`` a settings layer; the agent itself comes from
:func:`lsp_agent.app.load_agent`. Without a usable model the server still starts: sessions
can be listed, loaded and exported, and ``agent/session/new``/``prompt`` answer with the
reason (no model configured, a bad config file) instead of the server failing to start.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from lsp_agent.app import AgentInputs, App, data_dir, load_agent, open_data_store
from lsp_agent.core.errors import ConfigError, InvalidParams, LspAgentError
from lsp_agent.core.export import export_session
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.documents import OpenDocuments
from lsp_agent.lsp.editor import ChangeSets, LspEditor
from lsp_agent.lsp.plain import PlainProgress
from lsp_agent.lsp.protocol import AgentClientOptions
from lsp_agent.lsp.queries import LspEditorQueries
from lsp_agent.lsp.stream import UpdateStream
from lsp_agent.lsp.timeouts import RequestTimeouts
from lsp_agent.lsp.turns import TurnScheduler
from lsp_agent.storage.event_log import SqliteEventStore

_log = logging.getLogger(__name__)

KEPT_PROMPT_ANSWERS = 1024


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
        folders: Callable[[], Iterable[str]],
        options: AgentClientOptions | None,
        app: App | None,
        app_error: str | None,
        plain: PlainProgress | None = None,
    ) -> None:
        """``folders`` returns the workspace folders' uris now (they change at runtime);
        ``app_error`` says why there is no ``app``."""
        self.store = store
        self.editor = editor
        self.stream = stream
        self.documents = documents
        self.options = options
        self._folders = folders
        self._app = app
        self._app_error = app_error
        self.plain = plain
        """Progress and transcripts for a plain LSP client; None for an agent front-end."""
        self.prompt_answers: dict[tuple[str, str], p.PromptResult] = {}
        """Answers by (session, clientMessageId), so a retried prompt gets the same answer;
        the oldest are forgotten past ``KEPT_PROMPT_ANSWERS`` (then the log still knows the
        message id)."""
        self.scheduler = TurnScheduler(run_turn=self._run_turn, has_pending=self._has_pending)

    @property
    def app(self) -> App:
        if self._app is None:
            raise AgentUnavailable(self._app_error or "the agent is not available")
        return self._app

    def remember_answer(self, key: tuple[str, str], result: p.PromptResult) -> None:
        self.prompt_answers[key] = result
        while len(self.prompt_answers) > KEPT_PROMPT_ANSWERS:
            del self.prompt_answers[next(iter(self.prompt_answers))]

    @property
    def agent_available(self) -> bool:
        return self._app is not None

    def workspace_folders(self) -> list[str]:
        """The boundary: every workspace folder's real path, in the client's order."""
        return _real_paths(self._folders())

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

    def note_code_action_diagnostics(
        self, uri: str, range_: lsp.Range, diagnostics: Sequence[lsp.Diagnostic]
    ) -> None:
        """Diagnostics seen in a code-action request feed the cache when the client does not
        forward them itself (a plain LSP client)."""
        if self.options is not None and self.options.forwards_diagnostics:
            return
        self.editor.merge_diagnostics(uri, range_, diagnostics)

    async def _run_turn(self, session_id: str) -> str:
        outcome = await self.app.sessions.run_turn(session_id)
        return outcome.stop_reason

    async def _has_pending(self, session_id: str) -> bool:
        return bool(await self.store.pending_inputs(session_id))

    async def aclose(self) -> None:
        await self.scheduler.aclose()
        if self.plain is not None:
            await self.plain.aclose()
        if self._app is not None:
            await self._app.sessions.drain(timeout=2.0)
            if self._app.mcp is not None:  # the store is ours, the MCP servers the app's
                await self._app.mcp.aclose()
        await self.store.close()


async def start_host(
    *,
    client: Any,
    env: Mapping[str, str],
    documents: OpenDocuments,
    folders: Callable[[], Iterable[str]],
    options: AgentClientOptions | None,
) -> AgentHost:
    """Open the store and load the agent for this client (see the module docstring)."""
    store = await open_data_store(env)
    plain: PlainProgress | None = None
    if options is None:
        plain = PlainProgress(
            client=client,
            can_create=client.client_supports("window", "work_done_progress"),
            # ``{support: true}``: lsp-mode 8 declares an empty object and shows nothing
            can_show_document=client.client_supports("window", "show_document", "support"),
            transcript=lambda session_id: _transcript(store, session_id),
            transcripts_dir=data_dir(env) / "transcripts",
            cancel=lambda session_id: host.scheduler.cancel(session_id),
            clock=time.monotonic,
        )
        send = plain.on_update
    else:

        def send(params: dict[str, Any]) -> None:
            client.notify("agent/session/update", params)

    stream = UpdateStream(store=store, send=send)
    editor = LspEditor(
        client=client,
        documents=documents,
        stream=stream,
        ui=options.ui if options is not None else None,
        change_sets=ChangeSets(),
        forwards_diagnostics=options is not None and options.forwards_diagnostics,
        annotate_edits=options is None and client.supports_change_annotations,
        saves_documents=options is not None and options.saves_documents,
        applies_edits=client.supports_apply_edit,
    )
    roots = _real_paths(folders())
    init_config: dict[str, Any] | None = None
    if options is not None and options.config is not None:
        init_config = options.config.model_dump(exclude_none=True)
    workspace_config: dict[str, Any] | None = None
    if options is not None and options.workspace_config is not None:
        workspace_config = options.workspace_config.model_dump(exclude_none=True)
    queries = None
    if options is not None and options.editor_queries:
        queries = LspEditorQueries(client, options.editor_queries)
    inputs = AgentInputs(
        workspace=Path(roots[0]) if roots else Path.cwd(),
        env=env,
        init_options=init_config,
        workspace_options=workspace_config,
        folders=tuple(Path(root) for root in roots[1:]),
        editor_queries=queries,
    )
    app: App | None = None
    app_error: str | None = None
    try:
        app = await load_agent(
            inputs,
            editor=editor,
            store=store,
            roots=lambda _folder: _real_paths(folders()),
            editor_diagnostics=True,
        )
        editor_settings = app.settings.editor
        client.timeouts = RequestTimeouts(
            ask=editor_settings.ask_timeout, request=editor_settings.request_timeout
        )
    except ConfigError as error:
        _log.warning("the agent is not available: %s", error)
        app_error = str(error)
    except BaseException:
        await store.close()  # ``initialize`` fails: nothing else will close it
        raise
    host = AgentHost(
        store=store,
        editor=editor,
        stream=stream,
        documents=documents,
        folders=folders,
        options=options,
        app=app,
        app_error=app_error,
        plain=plain,
    )
    if app is not None and app.mcp is not None:
        # One warning per MCP server that could not start or stops (agent/mcp/list: all).
        app.mcp.watch(
            lambda line: client.notify(
                lsp.WINDOW_LOG_MESSAGE,
                lsp.LogMessageParams(type=lsp.MessageType.Warning, message=line),
            )
        )
    return host


def _real_paths(uris: Iterable[str]) -> list[str]:
    """The real paths of ``file:`` uris, without repeats, in their order."""
    paths = []
    for uri in uris:
        path = path_of_uri(uri)
        if path is not None:
            paths.append(os.path.realpath(path))
    return list(dict.fromkeys(paths))


async def _transcript(store: SqliteEventStore, session_id: str) -> str:
    """The session as Markdown (what a plain client is shown at the end of a turn)."""
    info = await store.session(session_id)
    if info is None:
        return ""
    return export_session(info, await store.transcript(session_id), [], "markdown")
