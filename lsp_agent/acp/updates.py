"""Committed events → ACP ``session/update`` bodies (issue 23 §4); pure, one mapper per session.

The ACP shapes are not the LSP protocol's (``wire/``): a tool call is announced once
(``tool_call``) and then updated (``tool_call_update``), so the mapper remembers which calls
it announced. Kinds and statuses map onto ACP's (``cancelled``/``interrupted`` → ``failed``);
``locations`` come from the call's input (the files it names); an edit's ``diff`` content
(oldText/newText) from the texts the editor wrote or the permission ask previewed
(:meth:`UpdateMapper.note_diff`); the title is the tool's own (every update carries it); a
bash call run in the client's terminal (:meth:`UpdateMapper.note_terminal`) embeds that
terminal, and its final output as text too (not every client renders terminals). A call
whose input is still streaming is not announced until the input is complete: the first
``tool_call`` carries the input, title and kind.

Events the client has no update for (state changes, permission and question records,
checkpoints, …) map to nothing. With ``replay`` (``session/load``) the user's messages are
sent back too (``user_message_chunk``); live, the client already shows what it sent.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterable
from typing import Any

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.messages import TOOL_KINDS
from lsp_agent.runtime.until import check_line

_STATUSES = {
    "pending": "pending",
    "in_progress": "in_progress",
    "completed": "completed",
    "failed": "failed",
    "cancelled": "failed",
    "interrupted": "failed",
}
_PATH_KEYS = ("file_path", "path")
_PATCH_FILE = re.compile(r"^\*\*\* (?:Add|Update|Delete) File: (.+)$", re.M)
_PATCH_MOVE = re.compile(r"^\*\*\* Move to: (.+)$", re.M)
_TITLE_CHARS = 120
_PLAN_STATUSES = {"pending": "pending", "in_progress": "in_progress", "completed": "completed"}


class UpdateMapper:
    def __init__(self, *, cwd: str = "", replay: bool = False) -> None:
        """``cwd``: the session's folder (relative paths in tool input are resolved
        against it); ``replay``: the events are a stored session sent again."""
        self._cwd = cwd
        self._replay = replay
        self._announced: set[str] = set()
        self._paths: dict[str, tuple[str, ...]] = {}
        self._diffs: dict[str, dict[str, tuple[str | None, str]]] = {}
        self._writes: dict[str, tuple[str | None, str]] = {}
        self._terminals: dict[str, str] = {}

    def note_diff(self, tool_call_id: str, path: str, old: str | None, new: str) -> None:
        """The texts of one file a tool call would change (its permission ask's preview)."""
        self._diffs.setdefault(tool_call_id, {})[path] = (old, new)

    def note_write(self, path: str, old: str | None, new: str) -> None:
        """A file the client was asked to write: the ``diff`` of the call naming it."""
        self._writes[path] = (old, new)

    def note_terminal(self, tool_call_id: str, terminal_id: str) -> None:
        """The call runs in the client's terminal ``terminal_id`` (``terminal.py``): its
        updates embed it instead of the output text."""
        self._terminals[tool_call_id] = terminal_id

    def updates(self, stored: StoredEvent) -> list[dict[str, Any]]:
        match stored.event:
            case ev.TextDelta(text=text) if text:
                return [_chunk("agent_message_chunk", text)]
            case ev.ReasoningDelta(text=text) if text:
                return [_chunk("agent_thought_chunk", text)]
            case ev.UserMessageAdmitted(content=content) if self._replay:
                return [
                    {"sessionUpdate": "user_message_chunk", "content": block}
                    for block in user_blocks(content)
                ]
            case ev.ToolCallUpdated() as call:
                body = self._tool_call(call)
                return [body] if body is not None else []
            case ev.PlanUpdated(entries=entries):
                return [plan_update(entries)]
            case ev.UsageUpdated() as usage:
                return [usage_update(usage)]
            case ev.UntilChecked() as checked:
                return [
                    _chunk("agent_message_chunk", f"\n\n_until green: {check_line(checked)}_\n\n")
                ]
            case ev.TitleSet(title=title):
                return [_session_info(title, stored.time)]
            case ev.SessionCreated(title=title) if title:
                return [_session_info(title, stored.time)]
            case ev.ConfigChanged() as changed:
                out = [config_update(changed.config_options)]
                if changed.config_id == "mode":
                    out.append(
                        {"sessionUpdate": "current_mode_update", "currentModeId": changed.value}
                    )
                return out
        return []

    def _tool_call(self, call: ev.ToolCallUpdated) -> dict[str, Any] | None:
        call_id = call.tool_call_id
        raw_input = call.input
        if call_id not in self._announced and call.status == "pending" and not raw_input:
            # the model has begun a call whose input is still streaming: announced once,
            # with its input, title and kind, when the input is complete
            return None
        if raw_input is not None and (raw_input or call_id not in self._paths):
            # a streamed call is announced with no input yet: its paths come with the input
            self._paths[call_id] = tuple(self._input_paths(raw_input))
        first = call_id not in self._announced
        self._announced.add(call_id)
        body: dict[str, Any] = {
            "sessionUpdate": "tool_call" if first else "tool_call_update",
            "toolCallId": call_id,
        }
        status = _STATUSES.get(call.status)
        if status is not None:
            body["status"] = status
        if first or call.kind is not None:
            tool_kind = call.kind or "other"
            body["kind"] = tool_kind if tool_kind in TOOL_KINDS else "other"
        # the tool's own words for the call (core/turn/records.py); a call logged before
        # calls had titles is announced by its tool's name (ACP's tool_call needs a title)
        title = call.title or (call.tool_name if first else None)
        if title:
            body["title"] = title[:_TITLE_CHARS]
        if raw_input is not None:
            body["rawInput"] = raw_input
        paths = self._paths.get(call_id, ())
        if paths and (first or raw_input is not None):
            body["locations"] = [{"path": path} for path in paths]
        content = self._content(call, status)
        if content:
            body["content"] = content
        if status in ("completed", "failed"):
            self._diffs.pop(call_id, None)
            self._terminals.pop(call_id, None)
        return body

    def _content(self, call: ev.ToolCallUpdated, status: str | None) -> list[dict[str, Any]]:
        call_id = call.tool_call_id
        content: list[dict[str, Any]] = []
        terminal = self._terminals.get(call_id)
        if terminal:
            content.append({"type": "terminal", "terminalId": terminal})
        if status == "completed":
            diffs = dict(self._diffs.get(call_id, {}))
            for path in self._paths.get(call_id, ()):
                if path in self._writes:
                    diffs[path] = self._writes.pop(path)
            for path, (old, new) in diffs.items():
                diff: dict[str, Any] = {"type": "diff", "path": path, "newText": new}
                if old is not None:
                    diff["oldText"] = old
                content.append(diff)
        text = call.error if call.error is not None else call.output
        if text and (not terminal or status in ("completed", "failed")):
            # the final output too when a terminal shows it: not every client renders one
            content.append({"type": "content", "content": {"type": "text", "text": text}})
        return content

    def _input_paths(self, raw_input: dict[str, Any]) -> Iterable[str]:
        for key in _PATH_KEYS:
            value = raw_input.get(key)
            if isinstance(value, str) and value:
                yield self._absolute(value)
        patch = raw_input.get("patch") or raw_input.get("input")
        if isinstance(patch, str):
            for match in (*_PATCH_FILE.finditer(patch), *_PATCH_MOVE.finditer(patch)):
                yield self._absolute(match.group(1).strip())

    def _absolute(self, path: str) -> str:
        if os.path.isabs(path) or not self._cwd:
            return os.path.normpath(path)
        return os.path.normpath(os.path.join(self._cwd, path))


def _chunk(kind: str, text: str) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}}


def _session_info(title: str, time: str) -> dict[str, Any]:
    return {"sessionUpdate": "session_info_update", "title": title, "updatedAt": time}


def user_blocks(content: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our stored user content as ACP content blocks (what ``content.py`` made of them)."""
    blocks: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type")
        if kind == "text":
            blocks.append({"type": "text", "text": str(block.get("text", ""))})
        elif kind == "resource_link":
            uri = str(block.get("uri", ""))
            name = str(block.get("name") or uri.rsplit("/", 1)[-1] or uri)
            blocks.append({"type": "resource_link", "uri": uri, "name": name})
        elif kind == "resource":
            blocks.append(
                {
                    "type": "resource",
                    "resource": {"uri": str(block.get("uri", "")), "text": str(block["text"])},
                }
            )
        elif kind == "image" and block.get("mimeType") and block.get("data"):
            image = {"type": "image", "mimeType": block["mimeType"], "data": block["data"]}
            blocks.append(image)
    return blocks


def plan_update(entries: list[dict[str, Any]]) -> dict[str, Any]:
    """The todo list as an ACP plan (a cancelled item is shown as done)."""
    return {
        "sessionUpdate": "plan",
        "entries": [
            {
                "content": str(entry.get("content", "")),
                "priority": entry.get("priority")
                if entry.get("priority") in ("high", "medium", "low")
                else "medium",
                "status": _PLAN_STATUSES.get(str(entry.get("status")), "completed"),
            }
            for entry in entries
        ],
    }


def usage_update(usage: ev.UsageUpdated) -> dict[str, Any]:
    """The context gauge: tokens in the context now, the window's size, the cost so far."""
    update: dict[str, Any] = {
        "sessionUpdate": "usage_update",
        "used": max(0, int(usage.context_used or 0)),
        "size": max(0, int(usage.context_size or 0)),
    }
    cost = usage.cost
    if isinstance(cost, (int, float)) and not isinstance(cost, bool):
        update["cost"] = {"amount": float(cost), "currency": "USD"}
    return update


def config_options(options: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Our ``configOptions`` (protocol.md §1, ``configId``) in ACP's shape (``id``)."""
    converted = []
    for option in options:
        acp_option = {
            "id": option["configId"],
            "name": option.get("name", option["configId"]),
            "type": option.get("type", "select"),
            "currentValue": option["currentValue"],
            "options": [
                {k: v for k, v in choice.items() if k in ("value", "name", "description")}
                for choice in option.get("options", [])
            ],
        }
        if option.get("category") in ("mode", "model", "thought_level"):
            acp_option["category"] = option["category"]
        if option.get("description"):
            acp_option["description"] = option["description"]
        converted.append(acp_option)
    return converted


def config_update(options: list[dict[str, Any]]) -> dict[str, Any]:
    return {"sessionUpdate": "config_option_update", "configOptions": config_options(options)}
