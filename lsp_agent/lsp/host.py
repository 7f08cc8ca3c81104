"""What the server holds once initialized: the runtime (store, agent, turns), the boundary.

:func:`start_host` runs right after ``initialize`` is answered (``startup.py``) and only
adapts: the client becomes the core's ports (``LspEditor``, the update stream or a plain
client's progress), its workspace folders the workspace and the roots,
``initializationOptions.agent.config`` a settings layer; the sessions are hosted by
:class:`lsp_agent.runtime.host.Runtime`, one agent for the whole (multi-root) workspace.
Without a usable model the server still starts: sessions can be listed, loaded and exported,
and ``agent/session/new``/``prompt`` answer with the reason (no model configured, a bad
config file) instead of the server failing to start.
"""

from __future__ import annotations

import logging
import os
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp

from lsp_agent.app import AgentInputs, App, data_dir
from lsp_agent.core.errors import ConfigError, InvalidParams, LspAgentError
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp.documents import OpenDocuments
from lsp_agent.lsp.editor import ChangeSets, LspEditor
from lsp_agent.lsp.plain import PlainProgress
from lsp_agent.lsp.protocol import AgentClientOptions
from lsp_agent.lsp.queries import LspEditorQueries
from lsp_agent.lsp.review_findings import PublishedFindings
from lsp_agent.lsp.stream import UpdateStream
from lsp_agent.lsp.timeouts import RequestTimeouts
from lsp_agent.runtime.host import AgentPlan, Runtime
from lsp_agent.runtime.sessions import Sessions
from lsp_agent.runtime.turns import TurnScheduler

_log = logging.getLogger(__name__)


class AgentUnavailable(LspAgentError):
    """The agent could not be built (no model, a bad config): the message says how to fix it."""


class AgentHost:
    def __init__(
        self,
        *,
        runtime: Runtime,
        editor: LspEditor,
        stream: UpdateStream,
        documents: OpenDocuments,
        folders: Callable[[], Iterable[str]],
        options: AgentClientOptions | None,
        app: App | None,
        app_error: str | None,
        plain: PlainProgress | None = None,
        findings: PublishedFindings | None = None,
    ) -> None:
        """``folders`` returns the workspace folders' uris now (they change at runtime);
        ``app_error`` says why there is no ``app``."""
        self.runtime = runtime
        self.editor = editor
        self.stream = stream
        self.documents = documents
        self.options = options
        self._folders = folders
        self._app = app
        self._app_error = app_error
        self.plain = plain
        """Progress and transcripts for a plain LSP client; None for an agent front-end."""
        self.findings = findings or PublishedFindings(lambda _method, _params: None)
        """The agent review's findings, published as diagnostics (``code_review.py``)."""
        self.completion: Any = None
        """``agent/nextEdit`` and its feedback (``completion.CompletionFeature``), attached
        once the host is up when completion is advertised."""

    @property
    def app(self) -> App:
        if self._app is None:
            raise AgentUnavailable(self._app_error or "the agent is not available")
        return self._app

    async def create_session(self, folder: str, **options: Any) -> str:
        """A new session in ``folder``, followed from its first update (``AgentUnavailable``
        without an agent)."""
        self.app  # noqa: B018 -- the reason there is no agent, as the error
        session_id = await self.runtime.create(folder, **options)
        self.stream.follow(session_id, 0)
        return session_id

    @property
    def sessions(self) -> Sessions:
        return self.runtime.sessions

    @property
    def turns(self) -> TurnScheduler:
        return self.runtime.turns

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

    async def aclose(self) -> None:
        await self.runtime.aclose()


async def start_host(
    *,
    client: Any,
    env: Mapping[str, str],
    documents: OpenDocuments,
    folders: Callable[[], Iterable[str]],
    options: AgentClientOptions | None,
) -> AgentHost:
    """Open the runtime and load the agent for this client (see the module docstring)."""
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

    def ready(app: App) -> None:
        editor_settings = app.settings.editor
        client.timeouts = RequestTimeouts(
            ask=editor_settings.ask_timeout, request=editor_settings.request_timeout
        )
        if app.mcp is not None:
            # One warning per MCP server that could not start or stops (agent/mcp/list: all).
            app.mcp.watch(
                lambda line: client.notify(
                    lsp.WINDOW_LOG_MESSAGE,
                    lsp.LogMessageParams(type=lsp.MessageType.Warning, message=line),
                )
            )

    def plan(_folder: str) -> AgentPlan:
        return AgentPlan(
            inputs=inputs,
            editor=editor,
            roots=lambda _folder: _real_paths(folders()),
            editor_diagnostics=True,
            ready=ready,
        )

    runtime = await Runtime.open(env, plan=plan, one_agent=True)
    sessions = runtime.sessions
    plain: PlainProgress | None = None
    if options is None:
        plain = PlainProgress(
            client=client,
            can_create=client.client_supports("window", "work_done_progress"),
            # ``{support: true}``: lsp-mode 8 declares an empty object and shows nothing
            can_show_document=client.client_supports("window", "show_document", "support"),
            transcript=lambda session_id: _transcript(sessions, session_id),
            transcripts_dir=data_dir(env) / "transcripts",
            cancel=lambda session_id: runtime.turns.cancel(session_id),
            clock=time.monotonic,
        )
        runtime.on_close(plain.aclose)
        send = plain.on_update
    else:

        def send(params: dict[str, Any]) -> None:
            client.notify("agent/session/update", params)

    stream = UpdateStream(store=sessions.log, send=send)
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
    app: App | None = None
    app_error: str | None = None
    try:
        app = await runtime.agent(str(inputs.workspace))
    except ConfigError as error:
        _log.warning("the agent is not available: %s", error)
        app_error = str(error)
    except BaseException:
        await runtime.aclose()  # ``initialize`` fails: nothing else will close it
        raise
    return AgentHost(
        runtime=runtime,
        editor=editor,
        stream=stream,
        documents=documents,
        folders=folders,
        options=options,
        app=app,
        app_error=app_error,
        plain=plain,
        findings=PublishedFindings(client.notify),
    )


def _real_paths(uris: Iterable[str]) -> list[str]:
    """The real paths of ``file:`` uris, without repeats, in their order."""
    paths = []
    for uri in uris:
        path = path_of_uri(uri)
        if path is not None:
            paths.append(os.path.realpath(path))
    return list(dict.fromkeys(paths))


async def _transcript(sessions: Sessions, session_id: str) -> str:
    """The session as Markdown (what a plain client is shown at the end of a turn)."""
    if await sessions.find(session_id) is None:
        return ""
    return await sessions.export(session_id, "markdown")
