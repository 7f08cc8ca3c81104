"""Open documents: what the editor answers when a tool changes one, and diff previews.

A file that is open in the editor is changed *through* the editor
(:meth:`~lsp_agent.core.interfaces.Editor.apply_document_edit`), so the change lands in the
user's buffer and undo history instead of under it on disk. The editor answers with a
:class:`DocumentEditResult`: ``applied``; ``not_open`` (it has no such document);
``conflict`` (the buffer no longer holds the text the change was made against, or the editor
refused the edit) — a conflict is reported to the model, never turned into a disk write.
An applied edit may carry a ``note`` when the disk did not follow the buffer.

A :class:`FilePreview` is the before/after text of one file of an ``edit`` permission ask,
for an editor that shows the change as a diff. It travels with the ask in memory only
(``PermissionRequest.previews``); events carry the unified diff in ``subject.patch``.
"""

from __future__ import annotations

from typing import Literal

import attrs

__all__ = [
    "APPLIED",
    "NOT_OPEN",
    "DocumentEditResult",
    "DocumentEditStatus",
    "FilePreview",
]

DocumentEditStatus = Literal["applied", "not_open", "conflict"]


@attrs.frozen(kw_only=True)
class DocumentEditResult:
    status: DocumentEditStatus
    message: str = ""
    """For ``conflict``: why (the model reads it), e.g. "the editor refused the edit"."""
    note: str = ""
    """For ``applied``: what the model must know about the file on disk, e.g. that the
    buffer kept the user's unsaved changes and was not saved, so commands see the disk's
    older text (appended to the tool's result)."""


APPLIED = DocumentEditResult(status="applied")
NOT_OPEN = DocumentEditResult(status="not_open")


@attrs.frozen(kw_only=True)
class FilePreview:
    """One file of a proposed change: its text now and the text it would get.

    Texts have no BOM and keep their line endings as stored (the buffer's when the file is
    open); bytes that are not UTF-8 are shown as U+FFFD.
    """

    path: str
    """Absolute path."""
    base_text: str | None
    """The text now (an open buffer's, unsaved changes included); None: the file does not
    exist yet."""
    proposed_text: str | None
    """The text after the change; None: the change deletes the file."""
