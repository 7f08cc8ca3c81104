"""``task``: hand a self-contained job to a subagent in a child session of its own.

``explore`` is read-only (read, list, glob, grep); ``general`` may do what its parent may,
except start further subagents. Neither is ever looser than its parent: the session service
runs the child under its parent's limits (:func:`lsp_agent.core.modes.subagent_scope`),
and under a plan-mode parent it is read-only. The child keeps its own event log; the parent
sees its last answer and its session id.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, literal
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, one_line_title, refusal


class TaskParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    description: str = Field(
        min_length=1, max_length=80, description="A short (3-5 words) description of the task."
    )
    prompt: str = Field(
        min_length=1,
        description="The whole task for the subagent: it sees nothing of this conversation.",
    )
    subagent_type: Literal["general", "explore"] = Field(
        default="general",
        description="`explore`: a fast read-only search agent. `general`: may also edit and "
        "run commands (never more than you may: in plan mode it is read-only too).",
    )


class TaskTool:
    """Implements ``Tool[TaskParams]``."""

    name = "task"
    kind: ToolKind = "other"
    permission = PermissionKind.TASK
    mutates = True
    Params = TaskParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: TaskParams, roots: Sequence[str]) -> str:
        return one_line_title(f"Start the {params.subagent_type} subagent: {params.description}")

    async def run(self, params: TaskParams, ctx: ToolRunContext) -> ToolOutcome:
        title = f"{params.description} (@{params.subagent_type})"
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission,
                patterns=(params.subagent_type,),
                always=(literal(params.subagent_type),),
                title=f"Start the {params.subagent_type} subagent: {params.description}",
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
        result = await ctx.call.events.run_subtask(
            params.description, params.prompt, params.subagent_type
        )
        if result.error is not None or result.stop_reason not in ("end_turn", "max_steps"):
            why = result.error or f"the subagent stopped ({result.stop_reason})"
            body = f'<task id="{result.session_id}" state="error">\n{why}\n'
            if result.text:
                body += f"<task_result>\n{result.text}\n</task_result>\n"
            return ToolOutcome(output=body + "</task>", is_error=True, title=title)
        state = "completed" if result.stop_reason == "end_turn" else "stopped at the step limit"
        output = (
            f'<task id="{result.session_id}" state="{state}">\n'
            f"<task_result>\n{result.text or '(no answer)'}\n</task_result>\n</task>"
        )
        return ToolOutcome(output=output, title=title)
