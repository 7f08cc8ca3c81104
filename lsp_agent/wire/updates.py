"""Committed events → ``agent/session/update`` params (protocol.md §3).

Every event yields exactly one update with its ``seq``, so a client can detect gaps.
Events with nothing to render become ``internal`` updates.
"""

from __future__ import annotations

from typing import Any

from lsp_agent.core.events import StoredEvent

_RENAMED = {
    "text_delta": "agent_message_chunk",
    "reasoning_delta": "agent_thought_chunk",
    "assistant_message_ended": "agent_message_end",
    "usage_updated": "usage_update",
    "state_changed": "state_update",
}


def to_update(event: StoredEvent) -> dict[str, Any]:
    """The full notification params: ``{sessionId, seq, update}``."""
    return {"sessionId": event.session_id, "seq": event.seq, "update": _update_body(event)}


def _update_body(event: StoredEvent) -> dict[str, Any]:
    data = event.data
    kind = event.type
    if kind in ("text_delta", "reasoning_delta"):
        return {
            "sessionUpdate": _RENAMED[kind],
            "messageId": data["messageId"],
            "text": data["text"],
        }
    if kind == "assistant_message_ended":
        return {
            "sessionUpdate": "agent_message_end",
            "messageId": data["messageId"],
            "status": data["status"],
        }
    if kind in ("usage_updated", "state_changed"):
        return {"sessionUpdate": _RENAMED[kind], **data}
    if kind in ("user_message_admitted", "user_message_promoted"):
        state = "admitted" if kind == "user_message_admitted" else "promoted"
        return {
            "sessionUpdate": "user_message",
            "messageId": data["messageId"],
            "content": data.get("content", []),
            "state": state,
        }
    if kind == "tool_call_updated":
        return _tool_call_update(data)
    if kind in ("permission_asked", "permission_resolved"):
        return _permission_update(data)
    if kind in ("question_asked", "question_resolved"):
        return {
            "sessionUpdate": "question_update",
            "toolCallId": data["toolCallId"],
            "state": data.get("state", "asked"),
        }
    if kind in ("compaction_started", "compaction_ended"):
        phase = "started" if kind == "compaction_started" else "ended"
        return {
            "sessionUpdate": "compaction_update",
            "phase": phase,
            "auto": data.get("auto", True),
        }
    if kind == "checkpoint_recorded":
        return {
            "sessionUpdate": "checkpoint_update",
            "checkpointId": data["checkpointId"],
            "messageId": data["messageId"],
            "files": data["files"],
            "patch": data.get("patch", ""),
        }
    if kind in ("revert_staged", "revert_cleared", "revert_committed"):
        return {
            "sessionUpdate": "revert_update",
            "state": kind.removeprefix("revert_"),
            "messageId": data.get("messageId"),
            "files": data.get("files", []),
            "scope": data.get("scope", "both"),
        }
    if kind in ("review_recorded", "review_resolved"):
        return {"sessionUpdate": "review_update", "files": data.get("files", [])}
    if kind == "config_changed":
        return {
            "sessionUpdate": "config_option_update",
            "configOptions": data.get("configOptions", []),
        }
    if kind == "plan_updated":
        return {"sessionUpdate": "plan_update", "entries": data["entries"]}
    if kind == "title_set":
        return {
            "sessionUpdate": "session_info_update",
            "title": data["title"],
            "updatedAt": event.time,
        }
    if kind == "session_created":
        return {
            "sessionUpdate": "session_info_update",
            "title": data.get("title", ""),
            "updatedAt": event.time,
        }
    return {"sessionUpdate": "internal", "type": kind}


def _tool_call_update(data: dict[str, Any]) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": data["toolCallId"],
        "messageId": data["messageId"],
        "toolName": data["toolName"],
    }
    for key in ("title", "kind", "status", "locations", "exitCode", "refused"):
        if key in data:
            update[key] = data[key]
    if "input" in data:
        update["rawInput"] = data["input"]
    text = data.get("error") if data.get("error") is not None else data.get("output")
    if text is not None:
        update["content"] = [{"type": "text", "text": text}]
    return update


def _permission_update(data: dict[str, Any]) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "permission_update",
        "toolCallId": data["toolCallId"],
        "permission": data["permission"],
        "state": data.get("state", "asked"),
    }
    for key in ("optionKind", "reason", "modified"):
        if key in data:
            update[key] = data[key]
    return update
