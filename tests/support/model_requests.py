"""What the tests read in the requests the fake LLM received, and a script they share."""

from __future__ import annotations

from pathlib import Path
from typing import Any


def tool_result_texts(body: dict[str, Any]) -> list[str]:
    """The text of every tool result the model was sent in ``body`` (Anthropic's shape)."""
    found = []
    for message in body["messages"]:
        content = message.get("content")
        for block in content if isinstance(content, list) else []:
            if block.get("type") == "tool_result":
                inner = block.get("content")
                if isinstance(inner, list):
                    found.append("".join(part.get("text", "") for part in inner))
                else:
                    found.append(str(inner))
    return found


def edit_then_cat(path: Path, answer: str) -> dict[str, Any]:
    """A turn that edits ``value = 1`` to ``value = 2`` in ``path``, then ``cat`` s it (in
    its folder), then says ``answer``."""
    edit = {"file_path": str(path), "old_string": "value = 1", "new_string": "value = 2"}
    cat = {"command": f"cat {path.name}", "description": "Show the file"}
    return {
        "turns": [
            {"tool_calls": [{"name": "edit", "input": edit}]},
            {"tool_calls": [{"name": "bash", "input": cat}]},
            {"text": answer},
        ]
    }


def last_user_text(body: dict[str, Any]) -> str:
    """The text blocks of the last user message in ``body`` (Anthropic's shape), joined."""
    message = [m for m in body["messages"] if m["role"] == "user"][-1]
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")
