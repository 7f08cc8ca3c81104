"""A session as a document: Markdown for people, JSON for programs (and re-import).

The JSON export carries the raw events too, so a session can be rebuilt from it exactly:
the event log is the truth, the messages are there for convenience.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any, Literal

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.transcript import SessionInfo, TextPartView, ToolCallView, TranscriptMessage

ExportFormat = Literal["markdown", "json"]
EXPORT_KIND = "lsp-agent.session"
EXPORT_VERSION = 1


def export_session(
    info: SessionInfo,
    transcript: Sequence[TranscriptMessage],
    events: Sequence[StoredEvent],
    fmt: ExportFormat,
) -> str:
    if fmt == "json":
        return json.dumps(export_json(info, transcript, events), ensure_ascii=False, indent=2)
    return export_markdown(info, transcript)


def export_json(
    info: SessionInfo, transcript: Sequence[TranscriptMessage], events: Sequence[StoredEvent]
) -> dict[str, Any]:
    return {
        "kind": EXPORT_KIND,
        "version": EXPORT_VERSION,
        "session": info.to_json(),
        "messages": [message.to_json() for message in transcript],
        "events": [event.to_json() | {"version": event.version} for event in events],
    }


def export_markdown(info: SessionInfo, transcript: Sequence[TranscriptMessage]) -> str:
    lines = [
        f"# {info.title or 'Untitled session'}",
        "",
        f"- Session: `{info.session_id}`",
        f"- Workspace: {info.workspace_folder}",
        f"- Model: {info.model} ({info.mode} mode)",
        f"- Created: {info.created_at}; updated: {info.updated_at}",
        "",
    ]
    for message in transcript:
        lines += _message_markdown(message)
    return "\n".join(lines).rstrip() + "\n"


def _message_markdown(message: TranscriptMessage) -> list[str]:
    heading = "## User" if message.role == "user" else "## Assistant"
    if message.status != "completed":
        heading += f" ({message.status})"
    lines = [heading, ""]
    for part in message.shown_parts:
        if isinstance(part, ToolCallView):
            lines += _tool_markdown(part)
        elif part.type == "reasoning":
            lines += [_quote(part), ""]
        else:
            lines += [part.text, ""]
    return lines


def _tool_markdown(call: ToolCallView) -> list[str]:
    lines = [f"### Tool: {call.tool_name} ({call.status})", "", "Input:", ""]
    lines += _fenced(json.dumps(call.input, ensure_ascii=False, indent=2), "json")
    if call.output is not None:
        lines += ["Output:", "", *_fenced(call.output, "text")]
    if call.error is not None:
        lines += ["Error:", "", *_fenced(call.error, "text")]
    return lines


def _quote(part: TextPartView) -> str:
    body = "\n".join(f"> {line}" if line else ">" for line in part.text.splitlines())
    return f"> **Thinking**\n>\n{body}"


def _fenced(text: str, language: str) -> list[str]:
    """A code fence longer than any backtick run inside, so content cannot close it."""
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    fence = "`" * max(3, longest + 1)
    return [f"{fence}{language}", text, fence, ""]
