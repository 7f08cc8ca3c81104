"""The ``todowrite`` tool: the model's todo list for this task, replaced as a whole.

The list reaches the editor as a ``plan_update`` (protocol.md §3) through
``ctx.call.events.plan_updated``; the model reads back a short checklist. "One item in
progress at a time" is advice, not a rule: a list breaking it is kept, with a note.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, StringConstraints

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import TodoDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, refusal

__all__ = ["TodoItem", "TodoPriority", "TodoStatus", "TodoWriteParams", "TodoWriteTool"]

TodoStatus = Literal["pending", "in_progress", "completed", "cancelled"]
TodoPriority = Literal["high", "medium", "low"]

_MARKS: dict[TodoStatus, str] = {
    "completed": "[x]",
    "in_progress": "[>]",
    "pending": "[ ]",
    "cancelled": "[-]",
}
_OPEN: frozenset[TodoStatus] = frozenset({"pending", "in_progress"})


class TodoItem(BaseModel):
    model_config = ConfigDict(extra="forbid")

    content: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1)] = Field(
        description="What to do, short and specific."
    )
    status: TodoStatus = Field(
        description="pending, in_progress (one item at a time), completed or cancelled."
    )
    priority: TodoPriority = Field(default="medium", description="high, medium or low.")


class TodoWriteParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    todos: list[TodoItem] = Field(
        description="The whole updated list, in order; it replaces the previous one."
    )


class TodoWriteTool:
    """Implements ``Tool[TodoWriteParams]``."""

    name = "todowrite"
    kind: ToolKind = "other"
    permission = PermissionKind.TODOWRITE
    mutates = False
    Params = TodoWriteParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: TodoWriteParams, roots: Sequence[str]) -> str:
        return "Update the todo list"

    async def run(self, params: TodoWriteParams, ctx: ToolRunContext) -> ToolOutcome:
        title = _count(len(params.todos), "todo")
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission, patterns=("*",), title=f"Update the todo list ({title})"
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
        entries: list[dict[str, Any]] = [
            {"content": t.content, "status": t.status, "priority": t.priority} for t in params.todos
        ]
        await ctx.call.events.plan_updated(entries)
        open_count = sum(1 for t in params.todos if t.status in _OPEN)
        in_progress = sum(1 for t in params.todos if t.status == "in_progress")
        return ToolOutcome(
            output=_render(params.todos, open_count, in_progress),
            title=title,
            details=TodoDetails(todos=tuple(entries), open=open_count),
        )


def _render(todos: list[TodoItem], open_count: int, in_progress: int) -> str:
    lines = [f"{_MARKS[t.status]} {t.content}{_priority_note(t.priority)}" for t in todos]
    body = "\n".join(lines) if lines else "(The todo list is empty.)"
    footer = f"{open_count} open"
    if in_progress > 1:
        footer += (
            f"\nNote: {in_progress} items are in_progress; keep one in_progress at a time "
            "and finish it before starting the next."
        )
    return f"{body}\n\n{footer}"


def _priority_note(priority: TodoPriority) -> str:
    return "" if priority == "medium" else f" ({priority} priority)"


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"
