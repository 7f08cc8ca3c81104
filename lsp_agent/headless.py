"""The terminal adapter for ``lsp-agent run``: an Editor that prints.

The assistant's text streams to stdout; one line per tool call (and retries, errors) goes
to stderr, so ``lsp-agent run … > answer.txt`` captures just the answer. With ``--json``
every committed event is printed as one ``agent/session/update`` params object per line.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.updates import to_update

_SUMMARY_KEYS = ("file_path", "path", "pattern", "command", "url")


class TerminalEditor:
    def __init__(self, *, stdout: TextIO, stderr: TextIO, json_lines: bool = False) -> None:
        self._out = stdout
        self._err = stderr
        self._json = json_lines
        self._mid_line = False
        self._inputs: dict[str, dict[str, Any]] = {}

    async def publish(self, event: StoredEvent) -> None:
        if self._json:
            self._out.write(json.dumps(to_update(event), ensure_ascii=False) + "\n")
            self._out.flush()
            return
        handler = getattr(self, f"_on_{event.type}", None)
        if handler is not None:
            handler(event.data)

    async def open_document_text(self, path: str) -> str | None:
        return None  # a terminal has no unsaved buffers

    def _on_text_delta(self, data: dict[str, Any]) -> None:
        text: str = data["text"]
        if not text:
            return
        self._out.write(text)
        self._out.flush()
        self._mid_line = not text.endswith("\n")

    def _on_assistant_message_ended(self, data: dict[str, Any]) -> None:
        if self._mid_line:
            self._out.write("\n")
            self._out.flush()
            self._mid_line = False
        if data.get("status") == "interrupted":
            self._say("[interrupted]")

    def _on_tool_call_updated(self, data: dict[str, Any]) -> None:
        status = data.get("status")
        name = data.get("toolName", "?")
        call_id = data.get("toolCallId", "")
        if "input" in data:
            self._inputs[call_id] = data["input"]
        if status == "in_progress":
            self._say(f"→ {name} {_summary(self._inputs.get(call_id, {}))}".rstrip())
        elif status in ("failed", "cancelled", "interrupted"):
            reason = (
                str(data.get("error") or status).splitlines()[0] if data.get("error") else status
            )
            self._say(f"✗ {name}: {reason}")

    def _on_state_changed(self, data: dict[str, Any]) -> None:
        error = data.get("error")
        if error and error.get("retryAt"):
            self._say(f"retrying at {error['retryAt']}: {error['message']}")

    def _say(self, line: str) -> None:
        self._err.write(line + "\n")
        self._err.flush()


def _summary(args: dict[str, Any]) -> str:
    for key in _SUMMARY_KEYS:
        if key in args:
            return str(args[key])
    return ""
