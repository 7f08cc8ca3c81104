"""ACP image blocks in and out: a prompt's image (or embedded image blob) becomes the core's
``image`` block, and ``session/load`` replays it as the image the client sent."""

from __future__ import annotations

from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
)

from lsp_agent.acp.content import user_content
from lsp_agent.acp.updates import user_blocks

PNG_MAGIC = "iVBORw0KGgo="


def test_an_image_block_becomes_the_cores_image_named_by_its_uri() -> None:
    blocks = user_content(
        [
            ImageContentBlock(
                type="image", data=PNG_MAGIC, mime_type="image/png", uri="file:///w/ui/shot.png"
            ),
            EmbeddedResourceContentBlock(
                type="resource",
                resource=BlobResourceContents(
                    uri="file:///w/logo.gif", blob="R0lGODlh", mime_type="image/gif"
                ),
            ),
        ]
    )
    assert blocks == [
        {"type": "image", "mimeType": "image/png", "data": PNG_MAGIC, "name": "shot.png"},
        {"type": "image", "mimeType": "image/gif", "data": "R0lGODlh", "name": "logo.gif"},
    ]


def test_a_stored_image_is_replayed_as_an_image_block() -> None:
    stored = [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": PNG_MAGIC, "name": "shot.png"},
    ]
    assert user_blocks(stored) == [
        {"type": "text", "text": "look"},
        {"type": "image", "mimeType": "image/png", "data": PNG_MAGIC},
    ]
