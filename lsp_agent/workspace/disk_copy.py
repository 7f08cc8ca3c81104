"""The file on disk beside an open editor buffer (blocking: call in a thread).

An agent edit to an open document lands in the editor's buffer, but commands, searches,
snapshots and git read the disk. The disk may follow the buffer only when it held what the
buffer held before the edit: otherwise the buffer carries the user's own unsaved text, and
saving it would save their work behind their back (docs/protocol.md §6). The comparison
ignores a BOM the editor keeps out of its buffer, and an editor that holds a CRLF file with
LF line ends (Emacs does) still agrees (a file with mixed line ends does not); the disk form of
a text puts both back.
"""

from __future__ import annotations

import attrs

from lsp_agent.workspace.files import BOM, FileError, encode_text, load_text, write_atomic

__all__ = ["DiskCopy", "compare_disk", "write_disk_form"]


@attrs.frozen(kw_only=True)
class DiskCopy:
    """What the disk held when compared with a buffer's text."""

    agrees: bool
    """The disk held the buffer's text (or nothing, for an empty buffer)."""
    exists: bool
    bom: bool = False
    crlf_for_lf: bool = False
    """The disk has CRLF where the buffer has LF: a write converts them back."""


def compare_disk(path: str, buffer_text: str) -> DiskCopy:
    """The file at ``path`` against ``buffer_text`` (a buffer as the editor sent it)."""
    try:
        disk = load_text(path)
    except FileError:  # a directory, binary: never the buffer's text
        return DiskCopy(agrees=False, exists=True)
    text = buffer_text.removeprefix(BOM)
    if disk is None:
        return DiskCopy(agrees=text == "", exists=False)
    if disk.text == text:
        return DiskCopy(agrees=True, exists=True, bom=disk.bom)
    crlf_only = "\r\n" in disk.text and disk.text.count("\n") == disk.text.count("\r\n")
    if crlf_only and "\r" not in text and disk.text.replace("\r\n", "\n") == text:
        return DiskCopy(agrees=True, exists=True, bom=disk.bom, crlf_for_lf=True)
    return DiskCopy(agrees=False, exists=True, bom=disk.bom)


def write_disk_form(path: str, buffer_text: str, copy: DiskCopy) -> None:
    """Write ``buffer_text`` at ``path`` atomically, in the form the disk had (its BOM and
    line ends). Raises ``OSError``."""
    text = buffer_text.removeprefix(BOM)
    if copy.crlf_for_lf:
        text = text.replace("\n", "\r\n")
    try:
        data = encode_text(text, bom=copy.bom or buffer_text.startswith(BOM))
    except UnicodeEncodeError as error:
        raise OSError(f"the text cannot be written as UTF-8 ({error.reason})") from error
    write_atomic(path, data)
