"""The ports the core depends on. Each carries only the methods something calls.

Adapters implement them: ``providers/`` (Provider), ``storage/`` (EventStore), ``tools/``
(ToolExecutor), ``headless.py`` and later ``lsp/`` (Editor). Tests use the fakes in
``lsp_agent.testing``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence
from typing import Any, Protocol

from lsp_agent.core.diagnostics import DiagnosticsCache
from lsp_agent.core.documents import DocumentEditResult
from lsp_agent.core.events import NewEvent, StoredEvent, TurnOwner
from lsp_agent.core.messages import ModelRequest, ToolCallPart, ToolSpec
from lsp_agent.core.permission.rules import PermissionAsk, PermissionReply, Rule
from lsp_agent.core.question import QuestionAsk, QuestionReply
from lsp_agent.core.stream_events import StreamEvent
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.core.transcript import SessionInfo, TranscriptMessage


class Clock(Protocol):
    def now(self) -> float:
        """Wall-clock seconds since the epoch (timestamps people read)."""
        ...

    def monotonic(self) -> float:
        """Seconds from an arbitrary origin (durations)."""
        ...

    async def sleep(self, seconds: float) -> None: ...


class IdFactory(Protocol):
    def new(self, prefix: str) -> str:
        """A new id, sortable by creation time, e.g. ``ses_01J…``."""
        ...


class Provider(Protocol):
    """Turns one request into one normalized stream. Raises ``ProviderError`` on failure."""

    @property
    def name(self) -> str: ...

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]: ...

    async def count_tokens(self, request: ModelRequest) -> int | None:
        """The request's input tokens by the provider's own counter; None without one."""
        ...


class EventStore(Protocol):
    """The event log and the projections written in the same transaction."""

    async def append(self, session_id: str, events: Sequence[NewEvent]) -> list[StoredEvent]:
        """Append atomically; assigns per-session ``seq`` and updates the projections."""
        ...

    async def session(self, session_id: str) -> SessionInfo | None: ...

    async def transcript(self, session_id: str) -> list[TranscriptMessage]:
        """Promoted user messages and assistant messages, in order (the projection)."""
        ...

    async def transcript_changes(
        self, session_id: str, after_seq: int
    ) -> tuple[list[TranscriptMessage], int]:
        """The messages added or changed by events after ``after_seq``, in order, and the
        seq read up to: what keeps a transcript already read up to date."""
        ...

    async def pending_inputs(self, session_id: str) -> list[str]:
        """Message ids admitted but not yet promoted, oldest first."""
        ...

    async def inbox_content(self, message_id: str) -> list[dict[str, Any]]:
        """The ContentBlocks of an admitted user message."""
        ...

    async def find_admitted(self, session_id: str, client_message_id: str) -> str | None:
        """The message id already admitted under ``client_message_id``, if any."""
        ...

    async def events(
        self, session_id: str, after_seq: int = 0, limit: int | None = None
    ) -> list[StoredEvent]:
        """The session's events with ``seq > after_seq``, in order."""
        ...

    async def approvals(self, session_id: str) -> list[Rule]:
        """Saved "allow" answers that apply to this session: its own and its project's."""
        ...

    def owner(self) -> TurnOwner:
        """The process writing through this store (``{pid, startTicks}``): a turn's first
        ``running`` event names it, so recovery elsewhere leaves the turn alone while it runs."""
        ...


class ToolExecutor(Protocol):
    """The tool registry as the loop sees it: schemas out, calls in, results as values."""

    def specs(self) -> tuple[ToolSpec, ...]: ...

    async def execute(self, call: ToolCallPart, ctx: ToolCallContext) -> ToolOutcome: ...


class Editor(Protocol):
    """What the core needs from whoever hosts it (an editor, the terminal, a test)."""

    async def publish(self, event: StoredEvent) -> None:
        """A committed event, in ``seq`` order; the host renders it (or not)."""
        ...

    async def open_document_text(self, path: str) -> str | None:
        """The editor's buffer for ``path`` (unsaved text included) or None if not open."""
        ...

    async def apply_document_edit(
        self, path: str, base_text: str, new_text: str
    ) -> DocumentEditResult:
        """Change an open document from ``base_text`` to ``new_text`` through the editor (so
        it lands in the user's undo history); ``not_open`` when the editor has no such
        document (write the disk instead); ``conflict`` when the buffer no longer holds
        ``base_text`` or the editor refused the edit.

        ``base_text`` is exactly what :meth:`open_document_text` returned (a leading U+FEFF
        and the line endings included); ``new_text`` is the whole text the buffer should
        hold, in the same form. The editor does no BOM or line-ending handling of its own.

        A file that does not exist yet comes with ``base_text`` ``""`` (``write``): an
        editor that writes files itself (ACP's ``fs/write_text_file``) creates it, any other
        answers ``not_open`` and the tool writes the disk.
        """
        ...

    async def open_documents(self) -> dict[str, str]:
        """Every document open in the editor: resolved path → its buffer's text (unsaved
        changes included, in the form :meth:`open_document_text` gives); empty when the host
        has no buffers (the terminal). Snapshots record these texts, and a revert changes
        these documents through :meth:`apply_document_edit` instead of the disk."""
        ...

    async def request_permission(self, ask: PermissionAsk) -> PermissionReply:
        """Ask the user; a dismissed dialog is ``PermissionReply(kind=None)``."""
        ...

    async def ask_question(self, ask: QuestionAsk) -> QuestionReply:
        """The model's questions; ``declined`` when nobody can answer."""
        ...

    @property
    def diagnostics(self) -> DiagnosticsCache | None:
        """The editor's diagnostics, or None when the host has none (the terminal)."""
        ...

    @property
    def forwards_diagnostics(self) -> bool:
        """The client pushes diagnostics as they change (so an edit's fresh ones can be
        awaited)."""
        ...
