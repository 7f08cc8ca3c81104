"""Committed events → ``agent/session/update`` params (protocol.md §3).

Every event yields exactly one update with its ``seq``, so a client can detect gaps.
Events with nothing to render become ``internal`` updates.
"""

from __future__ import annotations

from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent, encode


def to_update(event: StoredEvent) -> dict[str, Any]:
    """The full notification params: ``{sessionId, seq, update}``."""
    return {"sessionId": event.session_id, "seq": event.seq, "update": _update_body(event)}


def _update_body(stored: StoredEvent) -> dict[str, Any]:
    match stored.event:
        case ev.TextDelta(message_id=message_id, text=text):
            return {"sessionUpdate": "agent_message_chunk", "messageId": message_id, "text": text}
        case ev.ReasoningDelta(message_id=message_id, text=text):
            return {"sessionUpdate": "agent_thought_chunk", "messageId": message_id, "text": text}
        case ev.AssistantMessageEnded(message_id=message_id, status=status):
            return {"sessionUpdate": "agent_message_end", "messageId": message_id, "status": status}
        case ev.UsageUpdated() as usage:
            return {"sessionUpdate": "usage_update", **encode(usage)}
        case ev.StateChanged() as state:
            return {"sessionUpdate": "state_update", **encode(state)}
        case ev.UserMessageAdmitted(message_id=message_id, content=content):
            return _user_message(message_id, content, "admitted")
        case ev.UserMessagePromoted(message_id=message_id, content=content):
            return _user_message(message_id, content or [], "promoted")
        case ev.ToolCallUpdated() as call:
            return _tool_call_update(call)
        case ev.PermissionAsked(tool_call_id=call_id, permission=permission):
            return _permission_update(call_id, permission, "asked")
        case ev.PermissionResolved() as resolved:
            update = _permission_update(resolved.tool_call_id, resolved.permission, resolved.state)
            if resolved.option_kind is not None:
                update["optionKind"] = resolved.option_kind
            if resolved.reason is not None:
                update["reason"] = resolved.reason
            if resolved.modified is not None:
                update["modified"] = resolved.modified
            return update
        case ev.QuestionAsked(tool_call_id=call_id):
            return {"sessionUpdate": "question_update", "toolCallId": call_id, "state": "asked"}
        case ev.QuestionResolved(tool_call_id=call_id, state=state):
            return {"sessionUpdate": "question_update", "toolCallId": call_id, "state": state}
        case ev.CompactionStarted(auto=auto):
            return {"sessionUpdate": "compaction_update", "phase": "started", "auto": auto}
        case ev.CompactionEnded(auto=auto):
            return {"sessionUpdate": "compaction_update", "phase": "ended", "auto": auto}
        case ev.CheckpointRecorded() as checkpoint:
            return {
                "sessionUpdate": "checkpoint_update",
                "checkpointId": checkpoint.checkpoint_id,
                "messageId": checkpoint.message_id,
                "files": checkpoint.files,
                "patch": checkpoint.patch,
            }
        case ev.RevertStaged() | ev.RevertCleared() | ev.RevertCommitted() as revert:
            return {
                "sessionUpdate": "revert_update",
                "state": revert.TYPE.removeprefix("revert_"),
                "messageId": revert.message_id,
                "files": revert.files if not isinstance(revert, ev.RevertCommitted) else [],
                "scope": revert.scope or "both",
            }
        case (
            ev.ReviewRecorded(files=files)
            | ev.ReviewResolved(files=files)
            | ev.ReviewCommented(files=files)
            | ev.ReviewCommentsSent(files=files)
        ):
            return {"sessionUpdate": "review_update", "files": files}
        case ev.ConfigChanged(config_options=options):
            return {"sessionUpdate": "config_option_update", "configOptions": options}
        case ev.UntilChecked() as checked:
            return {"sessionUpdate": "until_update", **encode(checked)}
        case ev.PlanUpdated(entries=entries):
            return {"sessionUpdate": "plan_update", "entries": entries}
        case ev.TitleSet(title=title) | ev.SessionCreated(title=title):
            return {
                "sessionUpdate": "session_info_update",
                "title": title,
                "updatedAt": stored.time,
            }
    return {"sessionUpdate": "internal", "type": stored.type}


def _user_message(message_id: str, content: list[ev.JsonObject], state: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "user_message",
        "messageId": message_id,
        "content": content,
        "state": state,
    }


def _tool_call_update(call: ev.ToolCallUpdated) -> dict[str, Any]:
    update: dict[str, Any] = {
        "sessionUpdate": "tool_call_update",
        "toolCallId": call.tool_call_id,
        "messageId": call.message_id,
        "toolName": call.tool_name,
    }
    if call.title is not None:
        update["title"] = call.title
    if call.kind is not None:
        update["kind"] = call.kind
    update["status"] = call.status
    if call.exit_code is not None:
        update["exitCode"] = call.exit_code
    if call.refused is not None:
        update["refused"] = call.refused
    if call.input is not None:
        update["rawInput"] = call.input
    text = call.error if call.error is not None else call.output
    if text is not None:
        update["content"] = [{"type": "text", "text": text}]
    return update


def _permission_update(call_id: str, permission: str, state: str) -> dict[str, Any]:
    return {
        "sessionUpdate": "permission_update",
        "toolCallId": call_id,
        "permission": permission,
        "state": state,
    }
