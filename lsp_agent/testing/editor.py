"""A fake Editor: records what the core publishes and answers asks from a script."""

from __future__ import annotations

from collections.abc import Iterable

from lsp_agent.core.diagnostics import DiagnosticsCache
from lsp_agent.core.documents import NOT_OPEN, DocumentEditResult
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission.rules import PermissionAsk, PermissionReply
from lsp_agent.core.question import QuestionAsk, QuestionReply


class UnexpectedAsk(AssertionError):
    """The core asked the user something the test did not script."""


class RecordingEditor:
    """``replies`` answer permission asks in order; ``buffers`` are open documents by path
    (a test may change, add or remove them to play the user typing, opening or closing);
    ``open_documents()`` answers a copy of them.

    ``opened`` records every path ``open_document_text`` was asked for, in order; ``applied``
    every ``(path, base_text, new_text)`` edit applied to a buffer. ``refuse_edits`` makes
    the editor refuse edits: of every document (True) or of the paths given.

    ``diagnostics`` is the editor's diagnostics cache (None: a host without any, like the
    terminal); ``forwards_diagnostics`` says the client pushes them as they change.
    """

    def __init__(
        self,
        replies: Iterable[PermissionReply] = (),
        *,
        buffers: dict[str, str] | None = None,
        answers: Iterable[QuestionReply] = (),
        refuse_edits: bool | Iterable[str] = False,
        diagnostics: DiagnosticsCache | None = None,
        forwards_diagnostics: bool = False,
    ) -> None:
        self.events: list[StoredEvent] = []
        self.asks: list[PermissionAsk] = []
        self._replies = list(replies)
        self.buffers = dict(buffers or {})
        self._answers = list(answers)
        self.questions: list[QuestionAsk] = []
        self.opened: list[str] = []
        self.applied: list[tuple[str, str, str]] = []
        self._refuse: bool | frozenset[str] = (
            refuse_edits if isinstance(refuse_edits, bool) else frozenset(refuse_edits)
        )
        self._diagnostics = diagnostics
        self._forwards = forwards_diagnostics

    @property
    def diagnostics(self) -> DiagnosticsCache | None:
        return self._diagnostics

    @property
    def forwards_diagnostics(self) -> bool:
        return self._forwards

    async def publish(self, event: StoredEvent) -> None:
        self.events.append(event)

    async def open_document_text(self, path: str) -> str | None:
        self.opened.append(path)
        return self.buffers.get(path)

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        if path not in self.buffers:
            return NOT_OPEN
        if self._refuse is True or (not isinstance(self._refuse, bool) and path in self._refuse):
            return DocumentEditResult(status="conflict", message="the editor refused the edit")
        if self.buffers[path] != base_text:
            return DocumentEditResult(
                status="conflict", message="the buffer no longer holds the text that was read"
            )
        self.buffers[path] = new_text
        self.applied.append((path, base_text, new_text))
        return DocumentEditResult(status="applied")

    async def open_documents(self) -> dict[str, str]:
        return dict(self.buffers)

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        self.asks.append(ask)
        if not self._replies:
            raise UnexpectedAsk(f"unscripted permission ask: {ask.request.title}")
        return self._replies.pop(0)

    async def ask_question(self, ask: QuestionAsk) -> QuestionReply:
        """Scripted answers in order; without one the questions are declined."""
        self.questions.append(ask)
        return self._answers.pop(0) if self._answers else QuestionReply(outcome="declined")

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of_type(self, type_: str) -> list[StoredEvent]:
        return [e for e in self.events if e.type == type_]
