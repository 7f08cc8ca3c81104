"""The disk follows the agent's edits to open buffers (protocol.md §6).

An edit to an open document lands in the editor's buffer; commands, searches, snapshots and
git read the disk. So right after the edit — before the tool returns, so before anything
else runs — the buffer is saved: by the front-end when it answers ``agent/documents/save``
(``initializationOptions.agent.savesDocuments``), else by the server, which knows the full
text and writes it atomically in the file's own form (a plain LSP client, a front-end that
did not answer in time).

Only a buffer that agreed with the disk before the edit is saved. One that did not holds the
user's own unsaved changes: saving it would save their work behind their back, so it is left
as it is and the model is told that the disk differs.
"""

from __future__ import annotations

import asyncio
import logging
import os
from collections.abc import Awaitable, Callable
from typing import Any

from pydantic import ValidationError

from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.documents import OpenDocuments
from lsp_agent.lsp.timeouts import ClientTimeout
from lsp_agent.workspace.disk_copy import DiskCopy, compare_disk, write_disk_form

__all__ = ["SAVE_METHOD", "UNSAVED_NOTE", "DiskCopy", "DiskFollower", "disk_before", "write_behind"]

_log = logging.getLogger(__name__)

SAVE_METHOD = "agent/documents/save"
UNSAVED_NOTE = (
    "the user has unsaved changes of their own in this file in the editor. The edit was made "
    "in the editor's buffer, which keeps them, and the buffer was not saved (that would save "
    "the user's changes too). The file on disk has neither, so commands, tests, searches and "
    "git see the older version on disk."
)


class DiskFollower:
    """``request`` sends a request to the client (``lsp.editor.Client.request``: the
    answer as plain JSON, :class:`ClientTimeout` when none comes); ``tell_user`` shows the
    user a warning (``window/showMessage``)."""

    def __init__(
        self,
        request: Callable[[str, Any], Awaitable[Any]],
        documents: OpenDocuments,
        *,
        saves: bool,
        tell_user: Callable[[str], None],
    ) -> None:
        self._request = request
        self._documents = documents
        self._saves = saves
        self._tell_user = tell_user

    async def follow(self, path: str, new_text: str, before: DiskCopy) -> str:
        """Bring the disk in line with the buffer the agent just edited to ``new_text``
        (``before``: the disk against the buffer before the edit). The note for the model:
        empty when buffer and disk agree."""
        if not before.agrees:
            return UNSAVED_NOTE
        if self._saves:
            note = await self._save(path, new_text)
            if note is not None:
                return note
        return await write_behind(path, new_text, before)

    async def _save(self, path: str, new_text: str) -> str | None:
        """The front-end's save: the note, or None when the server should write the disk
        itself (the buffer does not show the edit yet, no usable answer)."""
        document = self._documents.document(path)
        if document is None or document.source != new_text or document.version is None:
            return None
        params = p.SaveDocumentsParams(
            documents=[p.DocumentToSave(uri=document.uri, version=document.version)]
        )
        try:
            raw = await self._request(SAVE_METHOD, params.dump())
            result = p.SaveDocumentsResult.model_validate(raw)
        except ClientTimeout as timeout:
            name = os.path.basename(path)
            self._tell_user(
                f"lsp-agent: the editor did not save {name} within {timeout.waited}; "
                "the agent's edit was written on disk by the server instead."
            )
            return None
        except asyncio.CancelledError:
            raise
        except (ValidationError, Exception) as error:
            _log.warning("%s failed or was malformed: %s", SAVE_METHOD, error)
            return None
        answer = next((d for d in result.documents if d.uri == document.uri), None)
        if answer is None:
            return None
        if not answer.saved:
            why = answer.reason or "no reason given"
            return (
                f"the editor did not save it ({why}): the file on disk still has the text "
                "before this edit, so commands, tests, searches and git see that older version."
            )
        if answer.version is not None and answer.version != document.version:
            return (
                "the editor changed the text when it saved it (a format on save): read the "
                "file again before editing it."
            )
        return ""


async def disk_before(path: str, buffer_text: str) -> DiskCopy:
    """The disk against an open buffer's text, read before the agent's edit changes it."""
    return await asyncio.to_thread(compare_disk, path, buffer_text)


async def write_behind(path: str, new_text: str, before: DiskCopy) -> str:
    """Write ``new_text`` on disk in the file's form; the note for the model if it failed."""
    try:
        await asyncio.to_thread(write_disk_form, path, new_text, before)
    except OSError as error:
        return (
            f"the file could not be saved on disk ({error.strerror or error}): commands, "
            "tests, searches and git see the older version on disk."
        )
    return ""
