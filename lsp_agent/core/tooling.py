"""What passes between the loop and the tool layer for one tool call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Protocol

import attrs

from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict
from lsp_agent.core.question import Question, QuestionReply
from lsp_agent.core.tool_details import Spill, ToolDetails

AskPermission = Callable[[PermissionRequest], Awaitable[PermissionVerdict]]


@attrs.frozen(kw_only=True)
class SubtaskResult:
    """What a subagent's session ended with: its last answer, or why it stopped."""

    session_id: str
    text: str
    stop_reason: str
    error: str | None = None


class ToolEvents(Protocol):
    """What a running tool reports back; the loop turns each into events for the editor."""

    async def output(self, text: str) -> None:
        """More output (appended): streamed to the editor while the tool runs."""
        ...

    async def process_started(self, pgid: int, start_ticks: int) -> None:
        """A process group now exists (recorded before its command runs, for cleanup)."""
        ...

    async def process_ended(self, pgid: int) -> None: ...

    async def plan_updated(self, entries: list[dict[str, Any]]) -> None:
        """The model's todo list, replaced as a whole."""
        ...

    async def ask_question(self, questions: Sequence[Question]) -> QuestionReply:
        """Ask the user; without anyone to ask the reply is ``declined``."""
        ...

    async def run_subtask(self, description: str, prompt: str, agent: str) -> SubtaskResult:
        """Run a child session (``agent``: ``general`` or ``explore``) to completion."""
        ...


class SilentToolEvents:
    """For hosts (and tests) that show nothing while tools run; questions are declined."""

    async def output(self, text: str) -> None:
        return None

    async def process_started(self, pgid: int, start_ticks: int) -> None:
        return None

    async def process_ended(self, pgid: int) -> None:
        return None

    async def plan_updated(self, entries: list[dict[str, Any]]) -> None:
        return None

    async def ask_question(self, questions: Sequence[Question]) -> QuestionReply:
        return QuestionReply(outcome="declined")

    async def run_subtask(self, description: str, prompt: str, agent: str) -> SubtaskResult:
        return SubtaskResult(
            session_id="", text="", stop_reason="error", error="subagents are not available"
        )


SILENT = SilentToolEvents()
"""Stateless, so one instance serves every context that reports nothing."""


@attrs.frozen(kw_only=True)
class ToolCallContext:
    """Where a tool runs. ``workspace_roots`` are absolute, realpath-ed folders."""

    session_id: str
    message_id: str
    tool_call_id: str
    workspace_roots: tuple[str, ...]
    ask: AskPermission
    """The permission gate for this call: rules decide, or the user is asked."""
    events: ToolEvents = SILENT
    """Progress, processes, plans and questions, reported back to the loop."""


@attrs.frozen(kw_only=True)
class ToolOutcome:
    """A tool's answer. Failures are values (``is_error``) the model reads, never exceptions."""

    output: str
    is_error: bool = False
    title: str | None = None
    exit_code: int | None = None
    """A command's exit status (``bash``): the core records it for the editors to show."""
    details: ToolDetails | None = None
    """The tool's own record of the call (counts, paths, flags), typed per shape, for its
    tests and a debugger; the core reads none of it: what it needs is a field of its own."""
    spill: Spill | None = None
    """Set when the output was too long and was cut to a preview (where the whole went)."""
    stop_turn: bool = False
    """The user rejected the call without a reason: the turn ends after this call."""
