"""What passes between the loop and the tool layer for one tool call."""

from __future__ import annotations

from typing import Any

import attrs


@attrs.frozen(kw_only=True)
class ToolCallContext:
    """Where a tool runs. ``workspace_roots`` are absolute, realpath-ed folders."""

    session_id: str
    message_id: str
    tool_call_id: str
    workspace_roots: tuple[str, ...]


@attrs.frozen(kw_only=True)
class ToolOutcome:
    """A tool's answer. Failures are values (``is_error``) the model reads, never exceptions."""

    output: str
    is_error: bool = False
    title: str | None = None
    metadata: dict[str, Any] = attrs.field(factory=dict)
