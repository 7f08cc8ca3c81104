"""What a prompt's ``@file`` links and ``#`` mentions name, read once at admission: the core's
:class:`~lsp_agent.core.attachments.PromptAttachments` port.

- ``resource_link`` (``@a.py``; with a ``range``, ``@symbol``): the file's text — the editor's
  buffer when it is open, else the disk through the same wall as the ``read`` tool (inside
  the workspace only, a regular file, no NUL byte) — capped like ``read``
  (:data:`MAX_LINES` lines, :data:`MAX_BYTES` bytes); with a range, those lines numbered as
  ``read`` numbers them. A link whose text the prompt already embeds (a ``resource`` block
  of the same uri) is not attached again. A link to an image file (``@shot.png``: PNG, JPEG,
  GIF or WebP by its name, checked by its first bytes, at most 5 MiB) attaches the image
  (core/images.py): its placeholder is the text, the image goes beside it (``image``).
- ``mention``: ``diagnostics`` (the editor's known ones plus the prompt's own; one file's
  with a ``uri``), ``selection`` (the prompt's selection), ``buffers`` (the open documents:
  path, line count, unsaved marker), ``diff`` (``git diff HEAD`` of the session's folder).

Every text passes the secret filter. Anything that cannot be read becomes a one-line
attachment saying why, never an error: the prompt is admitted either way.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

import attrs

from lsp_agent.core.attachments import AttachScope, PromptFocus, covered_lines
from lsp_agent.core.diagnostics import Diagnostic, format_diagnostics
from lsp_agent.core.images import IMAGE_SUFFIXES, MAX_IMAGE_BYTES, image_block, placeholder, sniff
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter
from lsp_agent.core.uris import path_of_uri
from lsp_agent.snapshots.head_diff import NoHeadDiff, head_diff
from lsp_agent.tools.read import DEFAULT_LIMIT, MAX_OUTPUT_BYTES
from lsp_agent.workspace.boundary import Resolved, WorkspaceBoundary
from lsp_agent.workspace.context_read import FileBytes, Refused, Unreadable, read_confined
from lsp_agent.workspace.files import count_lines

__all__ = ["DIFF_TIMEOUT", "MAX_BYTES", "MAX_LINES", "PromptExpansion"]

MAX_LINES = DEFAULT_LIMIT
"""Lines of one attachment: a page of the ``read`` tool."""
MAX_BYTES = MAX_OUTPUT_BYTES
"""Bytes of one attachment (``read``'s cap); the disk is read up to 4 times that."""
DIFF_TIMEOUT = 10.0
_DIAGNOSTIC_FILES = 20
_BOM = "\ufeff"


class PromptExpansion:
    """Implements ``PromptAttachments`` with the host's editor (open buffers, diagnostics)."""

    def __init__(self, editor: Editor, *, secrets: SecretFilter = NO_SECRETS) -> None:
        self._editor = editor
        self._secrets = secrets

    async def expand(
        self, content: Sequence[Mapping[str, Any]], scope: AttachScope
    ) -> list[dict[str, Any]]:
        embedded = {b.get("uri") for b in content if b.get("type") == "resource"}
        boundary = WorkspaceBoundary(scope.roots or (scope.folder,))
        attached: list[dict[str, Any]] = []
        for block in content:
            kind = block.get("type")
            if kind == "resource_link" and block.get("uri") not in embedded:
                uri = str(block.get("uri", ""))
                image = await _image(uri, boundary)
                if image is not None:
                    attached.append(image)
                    continue
                text = await self._file(uri, block.get("range"), boundary, scope)
            elif kind == "mention":
                uri = f"#{block.get('name', '')}"
                text = await self._mention(block, boundary, scope)
            else:
                continue
            attached.append({"text": self._secrets.mask(text).with_note(), "source": uri})
        return attached

    # -- @file ----------------------------------------------------------------------------

    async def _file(
        self, uri: str, range_: Any, boundary: WorkspaceBoundary, scope: AttachScope
    ) -> str:
        path = path_of_uri(uri)
        where = boundary.resolve(path) if path is not None else None
        if not isinstance(where, Resolved):
            shown = path if path is not None else uri
            return f"[{shown}: not attached: outside the workspace]"
        text = await self._editor.open_document_text(where.path)
        if text is None:
            disk = await asyncio.to_thread(_disk_text, where.path, scope.roots or (scope.folder,))
            if isinstance(disk, NotRead):
                return f"[{where.display}: not attached: {disk.reason}]"
            text = disk
        text = text.removeprefix(_BOM)
        lines = text.splitlines()
        lines_range = _line_span(range_)
        if lines_range is None:
            body = _capped(lines, f"read {where.display} with offset")
            return f"<attached_file path={json.dumps(where.display)}>\n{body}</attached_file>"
        first, last = lines_range
        numbered = [f"{n + 1}: {line}" for n, line in enumerate(lines[first : last + 1], first)]
        body = _capped(numbered, f"read {where.display}")
        span = f"{first + 1}-{last + 1}" if last > first else f"{first + 1}"
        label = json.dumps(f"{where.display}:{span}")
        return f"<attached_lines path={label}>\n{body}</attached_lines>"

    # -- #mentions ----------------------------------------------------------------------------

    async def _mention(
        self, block: Mapping[str, Any], boundary: WorkspaceBoundary, scope: AttachScope
    ) -> str:
        name = block.get("name")
        if name == "diagnostics":
            return self._diagnostics(block.get("uri"), boundary, scope.focus)
        if name == "selection":
            return _selection(scope.focus, boundary)
        if name == "buffers":
            return await self._buffers(boundary)
        if name == "diff":
            return await _diff(scope.folder, scope.roots)
        return f"[#{name}: not a mention this server knows]"

    def _diagnostics(self, uri: Any, boundary: WorkspaceBoundary, focus: PromptFocus | None) -> str:
        known: dict[str, list[Diagnostic]] = {}
        cache = self._editor.diagnostics
        for path, cached in (cache.all() if cache is not None else {}).items():
            known.setdefault(path, []).extend(cached)
        for path, sent in (focus.diagnostics if focus is not None else {}).items():
            have = known.setdefault(path, [])
            have.extend(d for d in sent if d not in have)
        only = path_of_uri(uri) if isinstance(uri, str) else None
        if only is not None:
            only = os.path.realpath(only)
            known = {only: known.get(only, [])}
        blocks = []
        for path, found in sorted(known.items(), key=lambda item: _errors_first(item[1])):
            where = boundary.resolve(path)
            if not isinstance(where, Resolved):
                continue
            block = format_diagnostics(where.display, found)
            if block:
                blocks.append(block)
        scope_name = "this file" if only is not None else "the workspace"
        if not blocks:
            return f"[#diagnostics: no problems known in {scope_name}]"
        more = len(blocks) - _DIAGNOSTIC_FILES
        shown = blocks[:_DIAGNOSTIC_FILES] + ([f"… and {more} more files"] if more > 0 else [])
        return f"[#diagnostics of {scope_name}]\n" + "\n".join(shown)

    async def _buffers(self, boundary: WorkspaceBoundary) -> str:
        documents = await self._editor.open_documents()
        rows = []
        for path, text in sorted(documents.items()):
            where = boundary.resolve(path)
            if not isinstance(where, Resolved):
                continue
            disk = await asyncio.to_thread(_disk_text, where.path, boundary.roots)
            unsaved = " (unsaved changes)" if disk != text.removeprefix(_BOM) else ""
            rows.append(f"{where.display}: {count_lines(text)} lines{unsaved}")
        if not rows:
            return "[#buffers: no workspace file is open in the editor]"
        return "[#buffers: the files open in the editor]\n" + "\n".join(rows)


def _selection(focus: PromptFocus | None, boundary: WorkspaceBoundary) -> str:
    selection = focus.selection if focus is not None else None
    if selection is None:
        return "[#selection: the editor sent no selection]"
    where = boundary.resolve(selection.path)
    if not isinstance(where, Resolved):
        return "[#selection: not attached: outside the workspace]"
    span = f"{selection.start_line + 1}-{selection.end_line + 1}"
    body = _capped(selection.text.splitlines(), "read the file")
    return f"<selection path={json.dumps(f'{where.display}:{span}')}>\n{body}</selection>"


async def _diff(folder: str, roots: Sequence[str]) -> str:
    """``git diff HEAD`` of ``folder``, capped; a note when there is none. Computed without
    the repository's configuration (:mod:`lsp_agent.snapshots.head_diff`): no filter,
    textconv, diff driver or fsmonitor of the project runs."""
    found = await asyncio.to_thread(head_diff, folder, avoid=(*roots, folder), timeout=DIFF_TIMEOUT)
    if isinstance(found, NoHeadDiff):
        return f"[#diff: {found.reason}]"
    if not found.text.strip():
        return "[#diff: no changes against HEAD]"
    body = _capped(found.text.splitlines(), "run git diff")
    return f"<git_diff>\n{body}</git_diff>"


async def _image(uri: str, boundary: WorkspaceBoundary) -> dict[str, Any] | None:
    """The attachment of a link to an image file, or None for any other link (and for one
    that cannot be read: the text path says why)."""
    path = path_of_uri(uri)
    if path is None or os.path.splitext(path)[1].lower() not in IMAGE_SUFFIXES:
        return None
    where = boundary.resolve(path)
    if not isinstance(where, Resolved):
        return None
    read = await asyncio.to_thread(read_confined, where.path, boundary.roots, limit=MAX_IMAGE_BYTES)
    if not isinstance(read, FileBytes):
        return None
    media_type = sniff(read.data[:16])
    if media_type is None:
        reason = "not a PNG, JPEG, GIF or WebP image"
    elif read.truncated:
        reason = f"an image over {MAX_IMAGE_BYTES // (1024 * 1024)} MiB"
    else:
        block = image_block(read.data, media_type, where.display)
        return {"text": placeholder(block), "source": uri, "image": block}
    return {"text": f"[{where.display}: not attached: {reason}]", "source": uri}


@attrs.frozen
class NotRead:
    reason: str


def _disk_text(path: str, roots: Sequence[str]) -> str | NotRead:
    """The file's text through the wall, or why not."""
    read = read_confined(path, roots, limit=4 * MAX_BYTES)
    if isinstance(read, Unreadable):
        return NotRead("no such file" if read.missing else f"cannot read it: {read.reason}")
    if isinstance(read, Refused):
        return NotRead(read.reason)
    if b"\0" in read.data:
        return NotRead("a binary file")
    text = read.data.decode("utf-8", errors="replace")
    if read.truncated:
        text = text[: text.rfind("\n") + 1] if "\n" in text else text
    return text


def _capped(lines: Sequence[str], how: str) -> str:
    """At most :data:`MAX_LINES` lines and :data:`MAX_BYTES` bytes, each line ended; a last
    line says how to get the rest."""
    kept: list[str] = []
    size = 0
    for line in lines:
        cost = len(line.encode("utf-8", errors="replace")) + 1
        if len(kept) == MAX_LINES or size + cost > MAX_BYTES:
            break
        kept.append(line)
        size += cost
    body = "".join(f"{line}\n" for line in kept)
    left = len(lines) - len(kept)
    if left > 0:
        body += f"[… {left} more lines not attached; {how} for them]\n"
    return body


def _line_span(range_: Any) -> tuple[int, int] | None:
    """The 0-based first and last line of an LSP range (an end at column 0 of a later
    line ends on the line before)."""
    try:
        first = int(range_["start"]["line"])
        last = int(range_["end"]["line"])
        end_character = int(range_["end"].get("character", 1))
    except (TypeError, KeyError, ValueError, AttributeError):
        return None
    if first < 0 or last < first:
        return None
    return covered_lines(first, last, end_character)


def _errors_first(found: Sequence[Diagnostic]) -> tuple[int, int]:
    return (min((d.level for d in found), default=9), -len(found))
