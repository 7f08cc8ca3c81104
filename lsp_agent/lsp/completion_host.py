"""The completion engines built from the running host: its loaded settings and secret filter,
its open documents and workspace folders, its session log (the agent's task; where feedback is
recorded), and the client for the status note. Imported only once the host is up
(``completion.py``)."""

from __future__ import annotations

import logging

import attrs
from lsprotocol import types as lsp

from lsp_agent.completion.context import Buffer
from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.feedback import Feedback
from lsp_agent.completion.history import EditHistory
from lsp_agent.completion.inline import InlineCompletions
from lsp_agent.completion.next_edit import NextEdits
from lsp_agent.completion.setup import completion_model, token_cap
from lsp_agent.completion.task import FolderTasks
from lsp_agent.core.clock import SystemClock, UlidIds
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.events import Event
from lsp_agent.lsp.host import AgentHost
from lsp_agent.lsp.server import AgentServer

_log = logging.getLogger(__name__)


@attrs.frozen
class Engines:
    inline: InlineCompletions
    next_edits: NextEdits
    feedback: Feedback


def build_engines(host: AgentHost, server: AgentServer, history: EditHistory) -> Engines | None:
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
    ids = UlidIds()
    cap = token_cap(settings, clock)  # one cap for both kinds of suggestion
    exclusions = Exclusions(
        folders=host.workspace_folders,
        globs=settings.completion.exclude,
        secrets=app.secrets,
        clock=clock,
    )
    tasks = FolderTasks(host.sessions, clock)

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

    writer = EventWriter(store=host.sessions.log, editor=host.editor, clock=clock)

    async def append(session_id: str, event: Event) -> None:
        await writer.emit(session_id, event)

    inline = InlineCompletions(
        model=model,
        exclusions=exclusions,
        tasks=tasks,
        buffers=buffers,
        version_of=version_of,
        clock=clock,
        ids=ids,
        debounce=settings.completion.debounce_ms / 1000,
        cap=cap,
        notify=notify,
    )
    host.runtime.on_close(inline.aclose)  # the model's connections
    next_edits = NextEdits(
        model=model,
        exclusions=exclusions,
        tasks=tasks,
        history=history,
        ids=ids,
        cap=cap,
        version_of=version_of,
    )
    feedback = Feedback(
        inline=inline, next_edits=next_edits, exclusions=exclusions, tasks=tasks, append=append
    )
    return Engines(inline=inline, next_edits=next_edits, feedback=feedback)
