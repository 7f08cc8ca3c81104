"""A subagent's job (the ``task`` tool) in a child session of its own, run to its end.

The child keeps its own event log; the parent's tool sees its last answer and its id. Its
scope (``modes.subagent_scope``) binds it: never looser than its parent. Its model is the
``task`` agent's (``agents.task.model``) when configured, else its parent's (``subtask_model``).
"""

from __future__ import annotations

import logging
from typing import Any, Protocol

from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.interfaces import EventStore
from lsp_agent.core.models import ModelCatalog
from lsp_agent.core.modes import SUBAGENTS, SubagentScope
from lsp_agent.core.tooling import SubtaskResult
from lsp_agent.core.transcript import TextPartView
from lsp_agent.core.turn.loop import TurnOutcome

_log = logging.getLogger(__name__)


class ChildSessions(Protocol):
    """What a subtask needs of the session service."""

    async def create(
        self,
        *,
        workspace_folder: str,
        title: str = "",
        mode: str | None = None,
        parent_session_id: str | None = None,
        model: str | None = None,
    ) -> str: ...

    async def admit(self, session_id: str, content: list[dict[str, Any]]) -> str: ...

    async def run_subagent_turn(self, session_id: str, scope: SubagentScope) -> TurnOutcome: ...


def subtask_model(catalog: ModelCatalog, configured: str | None, parent: str) -> str:
    """``configured`` (the ``task`` agent's model) when the catalog can use it, else the
    parent's model: a subagent never fails for want of its own model."""
    if configured is None or configured == parent:
        return parent
    try:
        catalog.resolve(configured)
    except InvalidConfigValue as error:
        _log.warning("task model %s unavailable (%s); using %s", configured, error, parent)
        return parent
    return configured


async def run_subtask(
    sessions: ChildSessions,
    store: EventStore,
    parent: str,
    folder: str,
    description: str,
    prompt: str,
    agent: str,
    model: str,
    scope: SubagentScope,
) -> SubtaskResult:
    """A child of ``parent`` in ``folder`` doing ``prompt`` as ``agent`` (a subagent
    type) on ``model``; an unknown type is an error result, not an exception."""
    if agent not in SUBAGENTS:
        known = ", ".join(sorted(SUBAGENTS))
        error = f"Unknown agent type {agent!r}; available: {known}."
        return SubtaskResult(session_id="", text="", stop_reason="error", error=error)
    child = await sessions.create(
        workspace_folder=folder,
        title=f"{description} (@{agent} subagent)",
        mode=scope.agent,  # recorded as it really runs
        parent_session_id=parent,
        model=model,
    )
    await sessions.admit(child, [{"type": "text", "text": prompt}])
    outcome = await sessions.run_subagent_turn(child, scope)
    transcript = await store.transcript(child)
    texts = [
        part.text
        for message in transcript
        if message.role == "assistant" and message.status == "completed"
        for part in message.parts
        if isinstance(part, TextPartView) and part.type == "text"
    ]
    return SubtaskResult(
        session_id=child,
        text=texts[-1] if texts else "",
        stop_reason=outcome.stop_reason,
        error=str(outcome.error) if outcome.error is not None else None,
    )
