"""What one running tool call reports, turned into events (the loop's ``ToolEvents``).

Streamed output is secret-filtered and coalesced: at most one event per ``interval`` with
the output so far (its last ``MAX_LIVE_OUTPUT`` characters), never showing a tail that could
be the start of a secret still arriving.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.question import Question, QuestionAsk, QuestionReply
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.tooling import SubtaskResult

SubtaskRunner = Callable[[str, str, str], Awaitable[SubtaskResult]]
"""(description, prompt, agent) → the child session's result."""

MAX_LIVE_OUTPUT = 30_000
OUTPUT_INTERVAL = 0.1


class CallEvents:
    def __init__(
        self,
        *,
        session_id: str,
        base: ev.ToolCallUpdated,
        recorder: Recorder,
        editor: Editor,
        secrets: SecretFilter,
        subtasks: SubtaskRunner | None = None,
        interval: float = OUTPUT_INTERVAL,
    ) -> None:
        """``base`` is the call's identity (and kind), running."""
        self._session_id = session_id
        self._base = base
        self._rec = recorder
        self._editor = editor
        self._secrets = secrets
        self._interval = interval
        self._subtasks = subtasks
        self._text = ""
        self._cut = False
        self._shown = ""
        self._flusher: asyncio.Task[None] | None = None

    async def output(self, text: str) -> None:
        if not text:
            return
        self._text += text
        keep = MAX_LIVE_OUTPUT + 2 * self._secrets.longest
        if len(self._text) > 2 * keep:
            self._text, self._cut = self._text[-keep:], True
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush_later())

    async def process_started(self, pgid: int, start_ticks: int) -> None:
        await self._rec.emit(
            ev.ProcessStarted(
                tool_call_id=self._base.tool_call_id,
                pgid=pgid,
                start_ticks=start_ticks,
                owner_pid=os.getpid(),
            )
        )

    async def process_ended(self, pgid: int) -> None:
        await self._rec.emit(ev.ProcessEnded(tool_call_id=self._base.tool_call_id, pgid=pgid))

    async def plan_updated(self, entries: list[dict[str, Any]]) -> None:
        await self._rec.emit(ev.PlanUpdated(tool_call_id=self._base.tool_call_id, entries=entries))

    async def ask_question(self, questions: Sequence[Question]) -> QuestionReply:
        call_id = self._base.tool_call_id
        await self._rec.emit(
            ev.QuestionAsked(tool_call_id=call_id, questions=[q.to_json() for q in questions])
        )
        await self._rec.emit(ev.StateChanged(state="requires_action"))
        ask = QuestionAsk(
            session_id=self._session_id, tool_call_id=call_id, questions=tuple(questions)
        )
        try:
            reply = await self._editor.ask_question(ask)
        except asyncio.CancelledError:
            await asyncio.shield(
                self._rec.emit(ev.QuestionResolved(tool_call_id=call_id, state="cancelled"))
            )
            raise
        answers = reply.answers_json() if reply.outcome == "answered" else None
        await self._rec.emit(
            ev.QuestionResolved(tool_call_id=call_id, state=reply.outcome, answers=answers)
        )
        await self._rec.emit(ev.StateChanged(state="running"))
        return reply

    async def run_subtask(self, description: str, prompt: str, agent: str) -> SubtaskResult:
        if self._subtasks is None:
            return SubtaskResult(
                session_id="", text="", stop_reason="error", error="subagents are not available"
            )
        return await self._subtasks(description, prompt, agent)

    async def close(self) -> None:
        """Stop streaming (the final outcome is recorded by the loop)."""
        flusher = self._flusher
        if flusher is not None and not flusher.done():
            flusher.cancel()
            await asyncio.gather(flusher, return_exceptions=True)

    async def _flush_later(self) -> None:
        await asyncio.sleep(self._interval)
        text = self._secrets.safe_prefix(self._text)
        if self._cut:  # the cut may have split a secret: drop what could be its tail
            text = text[self._secrets.longest :]
        text = text[-MAX_LIVE_OUTPUT:]
        if text and text != self._shown:
            self._shown = text
            await self._rec.emit(dataclasses.replace(self._base, output=text))
