"""Images in a prompt: the one content block shape, what is accepted, and the text that
stands for an image wherever text is needed.

A prompt carries an image as ``{"type": "image", "mimeType", "data", "name"?}`` (``data``:
base64; ACP's image block, plus the file's name when it came from one). It is stored as it
came, in the ``user_message_admitted`` event, like the text the other attachments hold, so
every later request sends the same bytes. The transcript, exports, the search index and
compaction summaries see :func:`placeholder` instead; the model is sent the image when its
catalogue entry allows (``ModelInfo.image_input``) and the placeholder otherwise.
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Mapping, Sequence
from typing import Any, Final

__all__ = [
    "IMAGE_SUFFIXES",
    "IMAGE_TYPES",
    "MAX_IMAGE_BYTES",
    "image_block",
    "image_problem",
    "images_of",
    "placeholder",
    "refusal",
    "sniff",
]

IMAGE_TYPES: Final = ("image/png", "image/jpeg", "image/gif", "image/webp")
"""What both APIs take."""
IMAGE_SUFFIXES: Final = frozenset({".png", ".jpg", ".jpeg", ".gif", ".webp"})
"""The file names a link or ``--file`` is taken as an image by (its bytes must agree)."""
MAX_IMAGE_BYTES: Final = 5 * 1024 * 1024
"""An image's size before base64: the Anthropic API refuses bigger ones."""

_MAGIC: Final = (
    (b"\x89PNG\r\n\x1a\n", "image/png"),
    (b"\xff\xd8\xff", "image/jpeg"),
    (b"GIF87a", "image/gif"),
    (b"GIF89a", "image/gif"),
)


def sniff(data: bytes) -> str | None:
    """The image type ``data`` starts like (its magic bytes), or None."""
    for magic, media_type in _MAGIC:
        if data.startswith(magic):
            return media_type
    if data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        return "image/webp"
    return None


def image_block(data: bytes, media_type: str, name: str | None = None) -> dict[str, Any]:
    """The content block for ``data`` (checked by the caller with :func:`image_problem`)."""
    block: dict[str, Any] = {
        "type": "image",
        "mimeType": media_type,
        "data": base64.b64encode(data).decode("ascii"),
    }
    if name:
        block["name"] = name
    return block


def image_problem(block: Mapping[str, Any]) -> str | None:
    """Why ``block`` (an ``image`` content block) cannot be sent, or None: a type the
    models do not take, data that is not base64 of an image of that type, too big."""
    media_type = block.get("mimeType")
    if media_type not in IMAGE_TYPES:
        return f"an image of type {media_type!r}: expected one of {', '.join(IMAGE_TYPES)}"
    data = block.get("data")
    if not isinstance(data, str) or not data:
        return "an image without data"
    if len(data) > (MAX_IMAGE_BYTES + 2) // 3 * 4 + 4:
        return f"an image over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB"
    try:
        raw = base64.b64decode(data, validate=True)
    except (binascii.Error, ValueError):
        return "an image whose data is not base64"
    if len(raw) > MAX_IMAGE_BYTES:
        return f"an image over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB"
    found = sniff(raw[:16])
    if found != media_type:
        return f"an image said to be {media_type} that is {found or 'not an image it knows'}"
    return None


def images_of(
    content: Sequence[Mapping[str, Any]], attachments: Sequence[Mapping[str, Any]] = ()
) -> list[Mapping[str, Any]]:
    """The image blocks of a prompt: its own, then those its mentions attached (an
    attachment's ``image``)."""
    found = [block for block in content if block.get("type") == "image"]
    for item in attachments:
        image = item.get("image")
        if isinstance(image, Mapping):
            found.append(image)
    return found


def refusal(model_ref: str) -> str:
    """What a person is told when the session's model takes no images."""
    return (
        f"{model_ref} does not take images (its catalogue entry says no image input): "
        "choose a model that does, or send the prompt without the image"
    )


def placeholder(block: Mapping[str, Any]) -> str:
    """The text that stands for an image block where text is needed:
    ``[image: shot.png (image/png, 12,345 bytes)]``."""
    data = str(block.get("data", ""))
    size = len(data) * 3 // 4 - data[-2:].count("=")
    name = str(block.get("name") or "").replace("]", "")
    what = f"{block.get('mimeType', 'image')}, {size:,} bytes"
    return f"[image: {name} ({what})]" if name else f"[image ({what})]"
