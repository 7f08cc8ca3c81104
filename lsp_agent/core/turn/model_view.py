"""What the model sees of a session, step after step: the mode's prompt and the context
epoch's baseline as the system prompt, then the history after the latest compaction point,
without the messages a revert hides.

Before each request, what changed in the context sources becomes a note (``context``); a
compaction moves the point and starts a new epoch (``compaction``, ``compaction_summary``).
Hunks the user undid since the model last heard of them (``core/review``) become one note
too, at the start of the next turn (undo waits for an idle session), stored like every note
(``context_noted`` with ``reviewHunks``) so a replay sends the same bytes; so does a rewind of
the code alone (``codeRewinds``), whose messages still say the files were changed.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core import events as ev
from lsp_agent.core.checkpoints import hidden_messages, unnoted_code_rewinds
from lsp_agent.core.compaction.policy import (
    CompactionPoint,
    current_view,
    latest_compaction_point,
    model_messages,
)
from lsp_agent.core.compaction.summary import Compactor
from lsp_agent.core.context import (
    ContextSources,
    Epoch,
    build_baseline,
    changes,
    current_epoch,
    local_date,
)
from lsp_agent.core.errors import ContextUnavailable
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.history import FoldCache
from lsp_agent.core.interfaces import Clock, EventStore, IdFactory, Provider
from lsp_agent.core.messages import Message, SystemBlock, ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.review.ledger import fold
from lsp_agent.core.review.note import code_rewind_note, undo_note
from lsp_agent.core.suggestions import feedback_note, unnoted_feedback
from lsp_agent.core.transcript import TranscriptMessage
from lsp_agent.core.turn.live_transcript import LiveTranscript


class ModelView:
    """One turn's view; :meth:`open` it from the session's events first."""

    def __init__(
        self,
        *,
        session_id: str,
        store: EventStore,
        sources: ContextSources,
        recorder: Recorder,
        clock: Clock,
        ids: IdFactory,
    ) -> None:
        self._session_id = session_id
        self._store = store
        self._sources = sources
        self._rec = recorder
        self._clock = clock
        self._ids = ids
        self._epoch = Epoch(number=0, baseline="", date="", instructions={}, skills="")
        self._fresh_epoch = False
        self._point: CompactionPoint | None = None
        self._hidden: frozenset[str] = frozenset()
        self._transcript = LiveTranscript(store, session_id)
        self._fold = FoldCache()

    @property
    def hidden(self) -> frozenset[str]:
        """Messages a staged revert hides or a committed one dropped: never sent."""
        return self._hidden

    async def open(self, events: Sequence[StoredEvent], roots: tuple[str, ...]) -> None:
        """The session's compaction point, hidden messages and epoch; the epoch is built now
        if this is the session's first model call.

        Raises :class:`ContextUnavailable` when a source cannot be read for the first
        baseline (the input then stays queued and is sent once the source can be read).
        """
        self._point = latest_compaction_point(events)
        self._hidden = hidden_messages(events)
        epoch = current_epoch(events)
        if epoch is not None:
            self._epoch, self._fresh_epoch = epoch, False
            await self._note_undone(events)
            await self._note_code_rewinds(events)
            await self._note_feedback(events)
            return
        snapshot = await self._sources.collect(roots, full=True)
        unreadable = snapshot.unreadable()
        if unreadable:
            what = "; ".join(f"{s.path}: {s.error}" for s in unreadable)
            raise ContextUnavailable(
                f"cannot read the project instructions ({what}); the message stays queued "
                "and is sent once they can be read"
            )
        self._epoch = build_baseline(snapshot, local_date(self._clock.now()))
        await self._rec.emit(self._epoch.built())
        self._fresh_epoch = True
        await self._note_feedback(events)

    async def _note_undone(self, events: Sequence[StoredEvent]) -> None:
        """The hunks the user undid that the model was not told about: one note."""
        ledger = fold(events)
        undone = ledger.unnoted_undone()
        if not undone:
            return
        text = undo_note(undone, {h.hunk_id: ledger.undone_at(h.hunk_id) for h in undone})
        await self._rec.emit(
            ev.ContextNoted(
                message_id=self._ids.new("msg"),
                text=text,
                review_hunks=[h.hunk_id for h in undone],
            )
        )

    async def _note_code_rewinds(self, events: Sequence[StoredEvent]) -> None:
        """A ``code``-scope rewind the model was not told about: one note naming the files."""
        rewinds = unnoted_code_rewinds(events)
        if not rewinds:
            return
        files = sorted({f for r in rewinds for f in r.files})
        await self._rec.emit(
            ev.ContextNoted(
                message_id=self._ids.new("msg"),
                text=code_rewind_note(files),
                code_rewinds=[r.seq for r in rewinds],
            )
        )

    async def _note_feedback(self, events: Sequence[StoredEvent]) -> None:
        """The user's answers to the editor's suggestions since the last note: one note."""
        feedback = unnoted_feedback(events)
        if not feedback:
            return
        await self._rec.emit(
            ev.ContextNoted(
                message_id=self._ids.new("msg"),
                text=feedback_note(feedback),
                suggestion_feedback=[stored.seq for stored in feedback],
            )
        )

    async def note_changes(self, roots: tuple[str, ...]) -> None:
        """Before a model call: what changed since the epoch's snapshot becomes a note."""
        if self._fresh_epoch:  # just built from these very sources
            self._fresh_epoch = False
            return
        snapshot = await self._sources.collect(roots, full=False)
        found = changes(self._epoch, snapshot, local_date(self._clock.now()))
        if found is None:
            return
        note, self._epoch = found
        await self._rec.emit(self._epoch.noted(self._ids.new("msg"), note))

    def system(self, prompt: str) -> tuple[SystemBlock, ...]:
        """The mode's ``prompt``, then the epoch's baseline: the same bytes all epoch long."""
        return (SystemBlock(text=prompt), SystemBlock(text=self._epoch.baseline, cache=True))

    async def transcript(self) -> list[TranscriptMessage]:
        """The session's transcript now, caught up with what the events since the last call
        added or changed (the whole of it is read only the first time)."""
        return await self._transcript.current()

    def messages(self, transcript: Sequence[TranscriptMessage]) -> list[Message]:
        """The history the model is sent: the summary, then the visible messages after it."""
        hidden = self._hidden
        visible = [m for m in transcript if m.message_id not in hidden] if hidden else transcript
        return model_messages(visible, self._point, self._fold.fold)

    def verbatim(self, transcript: Sequence[TranscriptMessage]) -> list[TranscriptMessage]:
        """The transcript messages after the compaction point (what compacting would fold)."""
        return current_view(transcript, self._point)

    async def compact(
        self,
        provider: Provider,
        *,
        model: ModelInfo,
        keep_recent_tokens: int,
        roots: tuple[str, ...],
        reason: str,
        max_tokens: int | None = None,
        thinking: ThinkingConfig | None = None,
    ) -> bool:
        """An automatic compaction now, its summary asked of ``model`` (``max_tokens``,
        ``thinking``: see ``Compactor``); False when nothing could be compacted."""
        compactor = Compactor(
            session_id=self._session_id,
            store=self._store,
            provider=provider,
            recorder=self._rec,
            clock=self._clock,
            sources=self._sources,
            model=model,
            keep_recent_tokens=keep_recent_tokens,
            workspace_roots=roots,
            max_tokens=max_tokens,
            thinking=thinking,
        )
        done = await compactor.run(self._point, self._epoch.number, auto=True, reason=reason)
        if done is None:
            return False
        self._point = done.point
        if done.epoch is not None:
            self._epoch, self._fresh_epoch = done.epoch, True
        return True
