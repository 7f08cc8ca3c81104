"""What passes between the loop and the tool layer for one tool call."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from lsp_agent.core.permission import PermissionRequest, PermissionVerdict

AskPermission = Callable[[PermissionRequest], Awaitable[PermissionVerdict]]


@attrs.frozen(kw_only=True)
class ToolCallContext:
    """Where a tool runs. ``workspace_roots`` are absolute, realpath-ed folders."""

    session_id: str
    message_id: str
    tool_call_id: str
    workspace_roots: tuple[str, ...]
    ask: AskPermission
    """The permission gate for this call: rules decide, or the user is asked."""


@attrs.frozen(kw_only=True)
class ToolOutcome:
    """A tool's answer. Failures are values (``is_error``) the model reads, never exceptions."""

    output: str
    is_error: bool = False
    title: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
    stop_turn: bool = False
    """The user rejected the call without a reason: the turn ends after this call."""
