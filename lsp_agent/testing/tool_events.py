"""A ``ToolEvents`` fake for tool tests: records what a tool reports, answers questions."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import attrs

from lsp_agent.core.question import Question, QuestionReply
from lsp_agent.core.tooling import SilentToolEvents
from lsp_agent.tools.base import ToolRunContext

__all__ = ["RecordingToolEvents", "with_events"]

QuestionAnswerer = Callable[[Sequence[Question]], QuestionReply]


class RecordingToolEvents(SilentToolEvents):
    """Implements ``ToolEvents``. ``reply`` answers every question ask: a fixed reply or a
    function of the questions (default: ``declined``, as when nobody can be asked). What it
    does not record (subtasks) behaves as in :class:`SilentToolEvents`."""

    def __init__(self, reply: QuestionReply | QuestionAnswerer | None = None) -> None:
        self.outputs: list[str] = []
        self.plans: list[list[dict[str, Any]]] = []
        self.asked: list[tuple[Question, ...]] = []
        self.processes: list[tuple[str, int]] = []
        """``("started", pgid)`` and ``("ended", pgid)``, in order."""
        self._reply = reply if reply is not None else QuestionReply(outcome="declined")

    async def output(self, text: str) -> None:
        self.outputs.append(text)

    async def process_started(self, pgid: int, start_ticks: int) -> None:
        self.processes.append(("started", pgid))

    async def process_ended(self, pgid: int) -> None:
        self.processes.append(("ended", pgid))

    async def plan_updated(self, entries: list[dict[str, Any]]) -> None:
        self.plans.append([dict(entry) for entry in entries])

    async def ask_question(self, questions: Sequence[Question]) -> QuestionReply:
        self.asked.append(tuple(questions))
        if isinstance(self._reply, QuestionReply):
            return self._reply
        return self._reply(questions)


def with_events(ctx: ToolRunContext, events: RecordingToolEvents) -> ToolRunContext:
    """``ctx`` with its call reporting to ``events``."""
    return attrs.evolve(ctx, call=attrs.evolve(ctx.call, events=events))
