"""Read models: a session's summary and its transcript, as the projections hold them.

These are what ``sessions show`` prints and what the loop folds into model messages.
"""

from __future__ import annotations

from typing import Any, Literal

import attrs

SessionState = Literal["running", "requires_action", "idle"]
MessageStatus = Literal["streaming", "completed", "interrupted", "failed"]
ToolStatus = Literal["pending", "in_progress", "completed", "failed", "cancelled", "interrupted"]


@attrs.frozen(kw_only=True)
class SessionUsage:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    context_used: int = 0
    context_size: int = 0
    cost: float | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "inputTokens": self.input_tokens,
            "outputTokens": self.output_tokens,
            "cacheReadTokens": self.cache_read_tokens,
            "cacheWriteTokens": self.cache_write_tokens,
            "contextUsed": self.context_used,
            "contextSize": self.context_size,
        }
        if self.cost is not None:
            out["cost"] = self.cost
        return out


@attrs.frozen(kw_only=True)
class SessionInfo:
    session_id: str
    title: str
    workspace_folder: str
    created_at: str
    updated_at: str
    state: SessionState
    model: str
    mode: str
    usage: SessionUsage = SessionUsage()
    thought_level: str = "default"
    """The session's ``thought_level`` option (core/session/config_options.py)."""

    def to_json(self) -> dict[str, Any]:
        """The session summary of ``docs/protocol.md`` (``agent/session/list`` entries)."""
        return {
            "sessionId": self.session_id,
            "title": self.title,
            "workspaceFolder": self.workspace_folder,
            "createdAt": self.created_at,
            "updatedAt": self.updated_at,
            "state": self.state,
            "usage": self.usage.to_json(),
        }


@attrs.frozen(kw_only=True)
class TextPartView:
    part_id: str
    type: Literal["text", "reasoning"]
    text: str
    signature: str | None = None
    redacted_data: str | None = None
    attachment: str | None = None
    """A user message's attachment (core/attachments.py): its source. The model is sent
    it; the transcript shows the link or mention instead."""
    image_type: str | None = None
    """An image of a user message (core/images.py): ``text`` is its placeholder, the model
    is sent ``image_data`` (base64) of this type."""
    image_data: str | None = attrs.field(default=None, repr=False)

    def to_json(self) -> dict[str, Any]:
        return {"type": self.type, "text": self.text}


@attrs.frozen(kw_only=True)
class ToolCallView:
    tool_call_id: str
    tool_name: str
    status: ToolStatus
    input: dict[str, Any]
    output: str | None = None
    error: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "type": "tool_call",
            "toolCallId": self.tool_call_id,
            "toolName": self.tool_name,
            "status": self.status,
            "input": self.input,
        }
        if self.output is not None:
            out["output"] = self.output
        if self.error is not None:
            out["error"] = self.error
        return out


PartView = TextPartView | ToolCallView


@attrs.frozen(kw_only=True)
class TranscriptMessage:
    message_id: str
    role: Literal["user", "assistant"]
    status: MessageStatus
    parts: tuple[PartView, ...]
    seq: int = 0
    """The seq of the event that added the message (its place in the conversation)."""

    @property
    def shown_parts(self) -> tuple[PartView, ...]:
        """The parts people are shown: attachments left out (their link is a part)."""
        return tuple(
            p for p in self.parts if not (isinstance(p, TextPartView) and p.attachment is not None)
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "messageId": self.message_id,
            "role": self.role,
            "status": self.status,
            "parts": [p.to_json() for p in self.shown_parts],
        }
