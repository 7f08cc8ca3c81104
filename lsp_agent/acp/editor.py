"""The core's ``Editor`` port over ACP: the client's files, its permission dialog, its UI.

- ``publish``: each committed event of a session the client has open becomes the
  ``session/update`` notifications of ``updates.py`` (subagents' sessions stay internal).
- Files (issue 23 §6): with ``fs.readTextFile`` every read of a file asks the client
  (``fs/read_text_file``), so the model sees unsaved text; with ``fs.writeTextFile`` every
  write and edit goes through ``fs/write_text_file`` (the client's review list) and never to
  the disk — a file the client cannot read is then read from the disk, and a new file is
  offered here too (``workspace.files.commit``). The tools check the workspace wall and the
  permission gate before they get here. A change is first checked against the client's
  current text: a buffer changed meanwhile is a conflict the model reads.
- Permission: ``session/request_permission`` (``permission.py``).
- Questions: the ``questions`` asker (``elicitation.py``) when the client offers
  elicitation, else declined as in ``run`` without a terminal.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Protocol

from acp.schema import (
    ReadTextFileRequest,
    ReadTextFileResponse,
    RequestPermissionResponse,
    SessionNotification,
    WriteTextFileRequest,
    WriteTextFileResponse,
)

from lsp_agent.acp.peer import AcpPeer, ClientError, ClientTimeout
from lsp_agent.acp.permission import (
    Rejections,
    permission_reply,
    permission_request,
    rejects_for_session,
)
from lsp_agent.acp.updates import UpdateMapper
from lsp_agent.core.diagnostics import DiagnosticsCache
from lsp_agent.core.documents import APPLIED, NOT_OPEN, DocumentEditResult
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission.rules import PermissionAsk, PermissionReply
from lsp_agent.core.question import QuestionAsk, QuestionReply
from lsp_agent.workspace.files import BOM, FileError, link_in_the_way, load_text

_log = logging.getLogger(__name__)

REJECTED_FOR_SESSION = "not approved: the user rejected this for the session"
PROMPTING: ContextVar[str] = ContextVar("acp_prompting_session", default="")
"""The ACP session whose ``session/prompt`` runs in this task (set by ``host.py``)."""


class QuestionAsker(Protocol):
    """Asks the model's questions through the client (``elicitation.py`` implements it)."""

    async def ask(self, ask: QuestionAsk) -> QuestionReply: ...


class AcpEditor:
    def __init__(self, peer: AcpPeer, *, visible: Callable[[str], bool]) -> None:
        """``visible``: is this session open in the client (its updates are sent)?"""
        self._peer = peer
        self._visible = visible
        self._mappers: dict[str, UpdateMapper] = {}
        self._rejections = Rejections()
        self.questions: QuestionAsker | None = None
        """Set after ``initialize`` when the client offers elicitation (``host.py``)."""

    # -- updates ---------------------------------------------------------------------------

    def mapper(self, session_id: str) -> UpdateMapper:
        """The session's live mapper (what it already told the client about tool calls)."""
        mapper = self._mappers.get(session_id)
        if mapper is None:
            mapper = self._mappers[session_id] = UpdateMapper()
        return mapper

    def track(self, session_id: str, *, cwd: str) -> None:
        """Start the session's updates afresh (``session/new``, ``load``, ``resume``)."""
        self._mappers[session_id] = UpdateMapper(cwd=cwd)

    def forget(self, session_id: str) -> None:
        self._mappers.pop(session_id, None)
        self._rejections.forget(session_id)

    async def publish(self, event: StoredEvent) -> None:
        if not self._visible(event.session_id):
            return
        for update in self.mapper(event.session_id).updates(event):
            await self.send_update(event.session_id, update)

    async def send_update(self, session_id: str, update: object) -> None:
        notification = SessionNotification.model_validate(
            {"sessionId": session_id, "update": update}
        )
        await self._peer.notify("session/update", notification)

    # -- files -----------------------------------------------------------------------------

    async def open_document_text(self, path: str) -> str | None:
        features = self._peer.features
        if features.read_text_file:
            session_id = self._session_of(path)
            try:
                answer = await self._peer.request(
                    "fs/read_text_file",
                    ReadTextFileRequest(session_id=session_id, path=path),
                    ReadTextFileResponse,
                )
            except ClientError as error:  # no such file (or the client cannot read it)
                _log.debug("fs/read_text_file %s: %s", path, error)
            else:
                return answer.content
        if features.write_text_file:
            # Writes must go through the client: its text is the disk's (so the tools take
            # the editor path), unless the file is not text we can send as JSON.
            return await asyncio.to_thread(_disk_text, path)
        return None

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        if not self._peer.features.write_text_file:
            return NOT_OPEN
        if (moved := link_in_the_way(path)) is not None:
            return DocumentEditResult(status="conflict", message=moved)
        current = await self.open_document_text(path)
        created = current is None and base_text == ""  # a new file (workspace.files.commit)
        if current != base_text and not created:
            return DocumentEditResult(
                status="conflict",
                message="the file was changed in the editor after the agent read it",
            )
        try:
            await self._peer.request(
                "fs/write_text_file",
                WriteTextFileRequest(
                    session_id=self._session_of(path), path=path, content=new_text
                ),
                WriteTextFileResponse,
            )
        except ClientError as error:
            return DocumentEditResult(status="conflict", message=f"the editor refused: {error}")
        prompting = PROMPTING.get()
        if prompting:
            self.mapper(prompting).note_write(path, None if created else base_text, new_text)
        return APPLIED

    async def open_documents(self) -> dict[str, str]:
        return {}  # ACP lists no open buffers: snapshots and reverts see the disk

    @property
    def diagnostics(self) -> DiagnosticsCache | None:
        return None  # ACP carries no diagnostics

    @property
    def forwards_diagnostics(self) -> bool:
        return False

    # -- permission and questions ----------------------------------------------------------

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        if self._rejections.covers(ask):
            return PermissionReply(kind="reject_once", reason=REJECTED_FOR_SESSION)
        session_id = ask.session_id
        if not self._visible(session_id):  # a subagent's: asked in the client's session
            session_id = PROMPTING.get() or session_id
        try:
            answer = await self._peer.request(
                "session/request_permission",
                permission_request(ask, session_id=session_id),
                RequestPermissionResponse,
            )
        except ClientTimeout as timeout:
            return PermissionReply(
                kind=None,
                reason=(
                    f"Nobody answered the permission request within {timeout.seconds:g} s, so "
                    "the call was not run and the turn ends here."
                ),
            )
        except ClientError as error:
            _log.warning("permission request failed: %s", error)
            return PermissionReply(kind=None)
        if rejects_for_session(answer):
            self._rejections.add(ask)
        reply = permission_reply(ask, answer)
        if reply.kind is not None and reply.kind.startswith("allow"):
            mapper = self.mapper(ask.session_id)
            for preview in ask.request.previews:
                if preview.proposed_text is not None:
                    mapper.note_diff(
                        ask.tool_call_id, preview.path, preview.base_text, preview.proposed_text
                    )
        return reply

    async def ask_question(self, ask: QuestionAsk) -> QuestionReply:
        if self.questions is None:
            return QuestionReply(outcome="declined")
        return await self.questions.ask(ask)

    def _session_of(self, path: str) -> str:
        """The client's session a file request belongs to: the prompt being run (a
        subagent's work is its parent's, the session the client knows)."""
        return PROMPTING.get()


def _disk_text(path: str) -> str | None:
    """The file's text as the client would give it (a BOM kept), or None when it is missing,
    binary, or not UTF-8 (those stay disk files)."""
    try:
        loaded = load_text(path)
    except FileError:
        return None
    if loaded is None:
        return None
    try:
        loaded.text.encode("utf-8")
    except UnicodeEncodeError:  # surrogate-escaped bytes: not UTF-8
        return None
    return BOM + loaded.text if loaded.bom else loaded.text
