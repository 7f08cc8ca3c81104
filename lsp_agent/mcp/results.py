"""A tool call's result as the model reads it: text as is, images and binary resources
described (the model sees no pixels through a tool result), resources by their text."""

from __future__ import annotations

import base64
import binascii
import json
from typing import Any

import mcp.types as types

from lsp_agent.core.tooling import ToolOutcome

__all__ = ["outcome_from_result"]


def outcome_from_result(result: types.CallToolResult, *, title: str) -> ToolOutcome:
    """``isError`` results are error outcomes; no content at all says so."""
    parts = [_block_text(block) for block in result.content]
    if not parts and result.structured_content is not None:
        parts.append(json.dumps(result.structured_content, ensure_ascii=False, indent=2))
    output = "\n\n".join(parts) if parts else "(the tool returned no content)"
    return ToolOutcome(output=output, is_error=result.is_error, title=title)


def _block_text(block: Any) -> str:
    if isinstance(block, types.TextContent):
        return block.text
    if isinstance(block, types.ImageContent | types.AudioContent):
        kind = "image" if isinstance(block, types.ImageContent) else "audio"
        return f"[{kind}: {block.mime_type}, {_decoded_size(block.data)} bytes]"
    if isinstance(block, types.EmbeddedResource):
        resource = block.resource
        if isinstance(resource, types.TextResourceContents):
            return f"[resource {resource.uri}]\n{resource.text}"
        mime = resource.mime_type or "application/octet-stream"
        return f"[resource {resource.uri}: {mime}, {_decoded_size(resource.blob)} bytes]"
    if isinstance(block, types.ResourceLink):
        described = f": {block.description}" if block.description else ""
        return f"[resource link {block.uri} ({block.name}){described}]"
    return f"[unsupported content: {getattr(block, 'type', type(block).__name__)}]"


def _decoded_size(data: str) -> int:
    try:
        return len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        return len(data)
