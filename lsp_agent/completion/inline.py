"""Inline completion: one pause in typing → at most one model request → ghost text, or nothing.

A request waits ``debounce`` first; a newer request for the same document, or a change to it
(``changed``, called on ``didChange``), makes it answer nothing at once and cancels its model
request if one is on its way. An answer for a document version that has moved on is dropped
(never shown stale). Excluded files (``exclusion.py``) and a reached hourly cap answer
nothing without asking the model; the cap is said once (``notify``) until it frees up."""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

import attrs

from lsp_agent.completion.budget import TokenCap
from lsp_agent.completion.cache import Lru
from lsp_agent.completion.context import (
    Buffer,
    CompletionContext,
    TaskNote,
    around,
    related_buffers,
)
from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.model import CompletionModel
from lsp_agent.completion.prompt import clean
from lsp_agent.completion.task import FolderTasks
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.interfaces import Clock, IdFactory

_log = logging.getLogger(__name__)


@attrs.frozen(kw_only=True)
class Cursor:
    """Where a suggestion is asked: an open document at one version, the cursor's offset."""

    uri: str
    path: str | None
    """The document's real path (None: not a file)."""
    version: int
    text: str
    offset: int
    """The cursor, as an index into ``text``."""


@attrs.frozen(kw_only=True)
class Suggestion:
    id: str
    uri: str
    version: int
    offset: int
    line: int
    text: str
    """Inserted at the cursor."""


@attrs.frozen(kw_only=True)
class Stats:
    """What the completions have cost (the bench reads them)."""

    asked: int
    """Model requests started."""
    answered: int
    """Model requests that completed."""
    tokens: int


class InlineCompletions:
    def __init__(
        self,
        *,
        model: CompletionModel,
        exclusions: Exclusions,
        tasks: FolderTasks | None,
        buffers: Callable[[str], Sequence[Buffer]],
        version_of: Callable[[str], int | None],
        clock: Clock,
        ids: IdFactory,
        debounce: float,
        cap: TokenCap,
        notify: Callable[[str], None],
    ) -> None:
        """``buffers(path)``: the other open documents (real paths); ``version_of(uri)``:
        the document's version now (None: closed)."""
        self._model = model
        self._exclusions = exclusions
        self._tasks = tasks
        self._buffers = buffers
        self._version_of = version_of
        self._clock = clock
        self._ids = ids
        self._debounce = debounce
        self._cap = cap
        self._notify = notify
        self._latest: dict[str, int] = {}
        self._inflight: dict[str, asyncio.Future[Any]] = {}
        self._cache: Lru[str] = Lru()
        self._capped_until = 0.0
        self._asked = 0
        self._answered = 0
        self._tokens = 0
        self.shown: Lru[Suggestion] = Lru(256)
        """The suggestions answered, by id (feedback names them)."""

    @property
    def stats(self) -> Stats:
        return Stats(asked=self._asked, answered=self._answered, tokens=self._tokens)

    async def aclose(self) -> None:
        """Close the model's connections."""
        await self._model.aclose()

    def changed(self, uri: str) -> None:
        """The document changed: a request for it still waiting or asking answers nothing."""
        self._latest[uri] = self._latest.get(uri, 0) + 1
        task = self._inflight.pop(uri, None)
        if task is not None:
            task.cancel()

    async def complete(self, cursor: Cursor) -> Suggestion | None:
        """The suggestion at ``cursor``, or None (nothing worth showing, excluded, capped,
        superseded, cancelled or stale)."""
        ticket = self._latest[cursor.uri] = self._latest.get(cursor.uri, 0) + 1
        if cursor.path is None:
            return None
        prefix, suffix = around(cursor.text, cursor.offset)
        why = await self._exclusions.reason(cursor.path, prefix + suffix)
        if why is not None:
            _log.debug("no completion for %s: %s", cursor.path, why)
            return None
        if self._debounce > 0:
            await self._clock.sleep(self._debounce)
        if not self._current(cursor, ticket):
            return None
        ctx = await self._context(cursor, prefix, suffix)
        key = repr(ctx.key())
        text = self._cache.get(key)
        if text is None:
            if not self._within_cap():
                return None
            text = await self._ask(cursor, ctx)
            if text is None or not self._current(cursor, ticket):
                return None
            self._cache.put(key, text)
        if not text or not self._current(cursor, ticket):
            return None
        suggestion = Suggestion(
            id=self._ids.new("sug"),
            uri=cursor.uri,
            version=cursor.version,
            offset=cursor.offset,
            line=cursor.text.count("\n", 0, cursor.offset),
            text=text,
        )
        self.shown.put(suggestion.id, suggestion)
        return suggestion

    def _current(self, cursor: Cursor, ticket: int) -> bool:
        """No newer request or change for the document, and still at the cursor's version."""
        return self._latest.get(cursor.uri) == ticket and self._version_of(cursor.uri) in (
            cursor.version,
            None,
        )

    async def _context(self, cursor: Cursor, prefix: str, suffix: str) -> CompletionContext:
        assert cursor.path is not None
        place = self._exclusions.place(cursor.path)
        folder, relative = place if place is not None else ("", cursor.path)
        others = []
        for buffer in self._buffers(cursor.path):
            if await self._exclusions.reason(buffer.path, buffer.text) is None:
                where = self._exclusions.place(buffer.path)
                others.append(attrs.evolve(buffer, path=where[1] if where else buffer.path))
        task = TaskNote()
        if self._tasks is not None and folder:
            try:
                task = await self._tasks.note(folder)
            except LspAgentError as error:  # the log is unreadable: complete without it
                _log.warning("completion without the agent's task: %s", error)
        return CompletionContext(
            path=relative,
            prefix=prefix,
            suffix=suffix,
            related=related_buffers(prefix, others),
            task=task.render(),
        )

    async def _ask(self, cursor: Cursor, ctx: CompletionContext) -> str | None:
        """The model's cleaned answer; None when cancelled by a change or failed."""
        self._asked += 1
        task = asyncio.ensure_future(self._model.fill(ctx))
        self._inflight[cursor.uri] = task
        try:
            answer = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and (current is None or not current.cancelling()):
                return None  # a change cancelled it, not our caller
            task.cancel()
            raise
        except LspAgentError as error:
            _log.warning("inline completion failed: %s", error)
            return None
        finally:
            if self._inflight.get(cursor.uri) is task:
                del self._inflight[cursor.uri]
        self._answered += 1
        self._tokens += answer.tokens
        self._cap.add(answer.tokens)
        return clean(answer.text, ctx)

    def _within_cap(self) -> bool:
        if self._cap.allows():
            return True
        now = self._clock.now()
        if now >= self._capped_until:
            self._capped_until = self._cap.frees_at()
            resumes = time.strftime("%H:%M", time.localtime(self._capped_until))
            self._notify(
                f"lsp-agent: inline completion paused: the hourly token cap "
                f"(completion.max_tokens_per_hour = {self._cap.limit}) is reached; "
                f"it resumes at {resumes}"
            )
        return False
