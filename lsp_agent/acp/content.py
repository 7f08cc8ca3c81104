"""A ``session/prompt``'s ACP content blocks → the user content the core stores.

Text stays text; a ``resource_link`` stays a link, which the core reads at admission
(``mentions.py``: through the editor, so the client's buffer, inside the wall); an embedded
text ``resource`` (``embeddedContext``) becomes a ``resource`` block with its text. An image
(``promptCapabilities.image``), or an embedded blob of an image type, becomes the core's
``image`` block (core/images.py: checked and, for a model that takes no images, refused at
admission). Audio or another binary resource becomes a line telling the model what was
attached and that it cannot see it.
"""

from __future__ import annotations

import base64
import binascii
import posixpath
from typing import Any
from urllib.parse import urlsplit

from acp.schema import (
    AudioContentBlock,
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextContentBlock,
    TextResourceContents,
)

from lsp_agent.core.images import IMAGE_TYPES

PromptBlock = (
    TextContentBlock
    | ImageContentBlock
    | AudioContentBlock
    | ResourceContentBlock
    | EmbeddedResourceContentBlock
)


def user_content(prompt: list[PromptBlock]) -> list[dict[str, Any]]:
    blocks: list[dict[str, Any]] = []
    for block in prompt:
        if isinstance(block, TextContentBlock):
            blocks.append({"type": "text", "text": block.text})
        elif isinstance(block, ResourceContentBlock):
            link: dict[str, Any] = {"type": "resource_link", "uri": block.uri}
            if block.name:
                link["name"] = block.name
            blocks.append(link)
        elif isinstance(block, EmbeddedResourceContentBlock):
            resource = block.resource
            if isinstance(resource, TextResourceContents):
                blocks.append({"type": "resource", "uri": resource.uri, "text": resource.text})
            elif isinstance(resource, BlobResourceContents) and resource.mime_type in IMAGE_TYPES:
                blocks.append(_image(resource.blob, resource.mime_type, resource.uri))
            elif isinstance(resource, BlobResourceContents):
                what = f"{resource.uri} ({resource.mime_type or 'binary'}, {_size(resource.blob)})"
                blocks.append(_unseen(f"a binary resource {what}"))
        elif isinstance(block, ImageContentBlock):
            blocks.append(_image(block.data, block.mime_type, block.uri))
        elif isinstance(block, AudioContentBlock):
            blocks.append(_unseen(f"audio ({block.mime_type}, {_size(block.data)})"))
    return blocks


def _image(data: str, mime_type: str, uri: str | None) -> dict[str, Any]:
    block: dict[str, Any] = {"type": "image", "mimeType": mime_type, "data": data}
    name = posixpath.basename(urlsplit(uri).path) if uri else ""
    if name:
        block["name"] = name
    return block


def _unseen(what: str) -> dict[str, Any]:
    return {
        "type": "text",
        "text": f"[The user attached {what}; lsp-agent cannot show it to the model.]",
    }


def _size(data: str) -> str:
    try:
        size = len(base64.b64decode(data, validate=False))
    except (binascii.Error, ValueError):
        size = len(data)
    return f"{size:,} bytes"
