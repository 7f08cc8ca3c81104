"""``lsp-agent run --file PATH``: workspace files put into the prompt as delimited blocks.

An attachment goes through the same wall as the ``read`` tool and the context files: the
path is resolved by the workspace boundary (symlinks followed) and must land inside the
workspace, then :func:`~lsp_agent.workspace.context_read.read_confined` reads it (a regular file
only, never a FIFO or a device, which could block or never end; a link swapped in meanwhile
is refused), at most :data:`MAX_ATTACHMENT_BYTES`; the agent's own secrets are masked.
Any problem is an :class:`AttachmentError` naming the path: the CLI reports it as bad
usage, before any session is created.

An image (PNG, JPEG, GIF or WebP, known by its magic bytes; a file named ``.png`` … that is
not one is refused) becomes an ``image`` content block (core/images.py), at most
:data:`~lsp_agent.core.images.MAX_IMAGE_BYTES`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.images import IMAGE_SUFFIXES, MAX_IMAGE_BYTES, image_block, sniff
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.workspace.boundary import Outside, WorkspaceBoundary
from lsp_agent.workspace.context_read import Refused, Unreadable, read_confined

__all__ = ["MAX_ATTACHMENT_BYTES", "AttachmentError", "attachment_blocks"]

MAX_ATTACHMENT_BYTES = 256 * 1024
"""Bigger text files are better read by the agent page by page (the ``read`` tool)."""


class AttachmentError(LspAgentError):
    """A ``--file`` that cannot be attached; the message names it and says why."""


def attachment_blocks(
    workspace: Path, paths: Sequence[str], secrets: SecretFilter
) -> list[dict[str, Any]]:
    """One content block per file, in the order given: text, or an image."""
    boundary = WorkspaceBoundary([workspace])
    blocks: list[dict[str, Any]] = []
    for raw in paths:
        # Relative to the current directory, as a shell user means it.
        where = boundary.resolve(os.path.abspath(raw))
        if isinstance(where, Outside):
            if where.hidden:
                raise AttachmentError(f"--file {raw}: in {where.hidden_what}, never attached")
            raise AttachmentError(f"--file {raw}: outside the workspace {workspace}")
        data = _read(raw, where.path, workspace)
        media_type = sniff(data[:16])
        if media_type is None and os.path.splitext(raw)[1].lower() in IMAGE_SUFFIXES:
            raise AttachmentError(f"--file {raw}: not a PNG, JPEG, GIF or WebP image")
        if media_type is not None:
            blocks.append(image_block(data, media_type, where.display))
            continue
        text = _text(raw, data)
        body = secrets.redact(text)
        if body and not body.endswith("\n"):
            body += "\n"
        blocks.append(
            {
                "type": "text",
                "text": f"<attached_file path={json.dumps(where.display)}>\n{body}</attached_file>",
            }
        )
    return blocks


def _read(raw: str, path: str, workspace: Path) -> bytes:
    read = read_confined(path, [str(workspace)], limit=MAX_IMAGE_BYTES)
    if isinstance(read, Unreadable):
        reason = "no such file" if read.missing else f"cannot read it: {read.reason}"
        raise AttachmentError(f"--file {raw}: {reason}")
    if isinstance(read, Refused):
        raise AttachmentError(f"--file {raw}: {read.reason}")
    if sniff(read.data[:16]) is not None:
        if read.truncated:
            raise AttachmentError(
                f"--file {raw}: an image over the {MAX_IMAGE_BYTES // (1024 * 1024)} MiB an"
                " image may have"
            )
    elif read.truncated or len(read.data) > MAX_ATTACHMENT_BYTES:
        raise AttachmentError(
            f"--file {raw}: more than the {MAX_ATTACHMENT_BYTES // 1024} KiB an attachment may"
            " have; ask the agent to read it instead"
        )
    return read.data


def _text(raw: str, data: bytes) -> str:
    if b"\0" in data:
        raise AttachmentError(f"--file {raw}: a binary file cannot be attached")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise AttachmentError(f"--file {raw}: not UTF-8 text") from None
