"""The completion engines built from the running host: its loaded settings and secret filter,
its open documents and workspace folders, its session log (the agent's task), and the client
for the status note. Imported only once the host is up (``completion.py``)."""

from __future__ import annotations

import logging

from lsprotocol import types as lsp

from lsp_agent.completion.context import Buffer
from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.inline import InlineCompletions
from lsp_agent.completion.setup import completion_model, token_cap
from lsp_agent.completion.task import FolderTasks
from lsp_agent.core.clock import SystemClock, UlidIds
from lsp_agent.core.errors import ConfigError
from lsp_agent.lsp.host import AgentHost
from lsp_agent.lsp.server import AgentServer

_log = logging.getLogger(__name__)


def build_engine(host: AgentHost, server: AgentServer) -> InlineCompletions | None:
    """None when completion is off, or the agent or the completion model is unusable (said
    once in the log)."""
    if not host.agent_available:
        return None
    app = host.app
    settings = app.settings
    if not settings.completion.enabled:
        return None
    try:
        model = completion_model(settings, server.env, app.secrets)
    except ConfigError as error:
        _log.warning("inline completion is off: %s", error)
        return None
    clock = SystemClock()

    def buffers(path: str) -> list[Buffer]:
        found = []
        for other in host.documents.open_paths():
            document = host.documents.document(other)
            if other != path and document is not None:
                found.append(Buffer(path=other, text=document.source))
        return found

    def version_of(uri: str) -> int | None:
        document = server.workspace.text_documents.get(uri)
        return None if document is None else document.version

    def notify(message: str) -> None:
        server.notify(
            lsp.WINDOW_LOG_MESSAGE, {"type": int(lsp.MessageType.Warning), "message": message}
        )

    return InlineCompletions(
        model=model,
        exclusions=Exclusions(
            folders=host.workspace_folders,
            globs=settings.completion.exclude,
            secrets=app.secrets,
            clock=clock,
        ),
        tasks=FolderTasks(host.sessions, clock),
        buffers=buffers,
        version_of=version_of,
        clock=clock,
        ids=UlidIds(),
        debounce=settings.completion.debounce_ms / 1000,
        cap=token_cap(settings, clock),
        notify=notify,
    )
