"""File I/O shared by every tool that changes files (``write``, ``edit``, ``apply_patch``).

- **Reading** keeps the encoding facts a rewrite must preserve: a UTF-8 byte order mark and
  the line-ending style. Bytes that are not UTF-8 are decoded with ``surrogateescape``, so an
  edit elsewhere in a Latin-1 file writes them back unchanged. An open editor buffer is the
  base text when there is one (:func:`read_current`).
- **Writing** (:func:`commit`): a change whose base text came from an open editor buffer goes
  through the editor (``Editor.apply_document_edit``), so it lands in the user's buffer and
  undo history; a buffer that changed meanwhile, was closed, or an edit the editor refused is
  a conflict the model reads — never a disk write. Everything else is written to disk
  atomically (``system.beneath``: a synced temporary file in the same folder, renamed over it,
  the folder synced), the temporary file named and recorded by ``temp_files``, so recovery
  removes it if the process is killed. The existing file's permission bits are kept; a new
  file gets the umask's. Parent folders are created.
- **The disk after an editor edit**: the editor adapter brings the disk in line (saves the
  buffer) unless that would save the user's own unsaved text; its note saying so reaches the
  model (:class:`Committed`, :func:`with_disk_note`).
- **Locks**: :class:`FileLocks` serializes changes to one path. One instance is shared by all
  the file-changing tools, so ``edit`` and ``apply_patch`` on the same file also take turns.
- **Diffs**: :func:`unified_diff` gives the patch shown in the permission dialog and the
  added/removed line counts; :func:`edit_request` also attaches a :class:`FilePreview` (text
  before and after) per file for an editor that shows its own diff.
"""

from __future__ import annotations

import asyncio
import contextlib
import difflib
import errno
import os
import stat
from collections.abc import AsyncIterator, Sequence
from typing import Literal, NamedTuple

import attrs

from lsp_agent.core.documents import DocumentEditResult, FilePreview
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission.subjects import EditedFileStat, EditSubject
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.system import beneath
from lsp_agent.workspace.temp_files import create_temp_at

__all__ = [
    "BOM",
    "Committed",
    "EditedFile",
    "FileDiff",
    "FileError",
    "FileLocks",
    "Newline",
    "TextFile",
    "commit",
    "count_lines",
    "detect_newline",
    "edit_request",
    "editor_conflict",
    "encode_text",
    "file_preview",
    "link_in_the_way",
    "load_text",
    "not_found_message",
    "read_current",
    "save",
    "unified_diff",
    "with_disk_note",
    "write_atomic",
]

BOM = "\ufeff"
_BINARY_SAMPLE = 8192
Newline = Literal["\n", "\r\n"]


class FileError(Exception):
    """A file that cannot be changed; ``str(error)`` is written for the model."""


@attrs.frozen(kw_only=True)
class TextFile:
    """A file's current text and the facts a rewrite keeps."""

    text: str
    """The text without its BOM, line endings as stored."""
    bom: bool = False
    on_disk: bool = True
    """False for an editor buffer that was never saved."""
    source: Literal["disk", "editor"] = "disk"
    buffer_bom: bool = False
    """For an editor buffer: its text started with U+FEFF (stripped from ``text``). Most
    editors keep the BOM out of the buffer (``bom`` then still says the disk has one)."""

    @property
    def newline(self) -> Newline:
        return detect_newline(self.text)

    def as_buffer(self, text: str) -> str:
        """``text`` (without BOM) in the editor buffer's form: U+FEFF first when the buffer
        had one. ``as_buffer(self.text)`` is exactly what ``open_document_text`` returned."""
        return BOM + text if self.buffer_bom else text


def detect_newline(text: str) -> Newline:
    """The dominant line ending: CRLF when CRLF lines are at least as many as bare-LF lines.

    (Dominant rather than "any CRLF": one stray CRLF in an LF file must not turn every line
    the tools write into CRLF.)
    """
    crlf = text.count("\r\n")
    return "\r\n" if crlf and crlf >= text.count("\n") - crlf else "\n"


def count_lines(text: str) -> int:
    """Lines as an editor counts them: a final line without a newline counts too."""
    return text.count("\n") + (not text.endswith("\n") and text != "")


def encode_text(text: str, *, bom: bool) -> bytes:
    """UTF-8 (``surrogateescape`` gives back bytes that were not UTF-8), BOM first if asked.

    Raises ``UnicodeEncodeError`` for lone surrogates that do not stand for a byte.
    """
    data = text.removeprefix(BOM).encode("utf-8", errors="surrogateescape")
    return BOM.encode("utf-8") + data if bom else data


def load_text(path: str) -> TextFile | None:
    """The file at ``path`` (absolute, real) as text, or None if it does not exist (blocking:
    use a thread).

    Read without following a link (``system.beneath``): a folder on the way or the file
    itself swapped for a link since the path was checked is an error, never followed.
    Raises :class:`FileError` for a directory, a non-regular file, a binary file (a NUL byte
    near the start) or an error from the system.
    """
    try:
        data = beneath.read_bytes(path)
    except IsADirectoryError as exc:
        raise FileError(f"Path is a directory, not a file: {path}") from exc
    except beneath.LinkInTheWay as exc:
        raise FileError(f"Cannot read {path}: {exc.strerror}") from exc
    except OSError as exc:
        if exc.errno == errno.EINVAL:
            raise FileError(f"Not a regular file: {path}") from exc
        raise FileError(f"Cannot read {path}: {exc.strerror or exc}") from exc
    if data is None:
        return None
    if b"\0" in data[:_BINARY_SAMPLE]:
        raise FileError(f"Cannot change binary file: {path}")
    text = data.decode("utf-8", errors="surrogateescape")
    return TextFile(text=text.removeprefix(BOM), bom=text.startswith(BOM))


async def read_current(editor: Editor, path: str) -> TextFile | None:
    """The base text of a change: the editor's buffer when open (unsaved text included),
    else the disk; None when neither has the file. The BOM flag always comes from the disk.
    """
    disk = await asyncio.to_thread(load_text, path)
    buffer = await editor.open_document_text(path)
    if buffer is None:
        return disk
    return TextFile(
        text=buffer.removeprefix(BOM),
        bom=disk.bom if disk else buffer.startswith(BOM),
        on_disk=disk is not None,
        source="editor",
        buffer_bom=buffer.startswith(BOM),
    )


async def commit(
    editor: Editor,
    path: str,
    base: TextFile | None,
    text: str,
    data: bytes,
    *,
    display: str | None = None,
) -> Committed | str:
    """Make ``path`` hold ``text`` (``data``: its bytes on disk); :class:`Committed` on
    success (with the editor's note about the disk, if any), else the message for the model.

    When ``base`` came from an open editor buffer, the change goes through the editor, from
    the buffer as read to ``text`` (both in the buffer's form, :meth:`TextFile.as_buffer`),
    and ``data`` is not used: the editor saves in its own encoding. A conflict — the buffer
    changed, was closed, or the editor refused — writes nothing anywhere. Otherwise ``data``
    is written atomically (:func:`save`). ``display`` names the file in messages.

    A new file (``base`` None) is offered to the editor first, from the empty text: an
    editor that writes files itself (an ACP client's ``fs/write_text_file``) creates it;
    ``not_open`` (every other editor) means the disk.
    """
    if base is None:
        created = BOM + text if data.startswith(BOM.encode("utf-8")) else text
        result = await editor.apply_document_edit(path, "", created)
        if result.status == "applied":
            return Committed(note=result.note)
        if result.status == "conflict":
            conflict = editor_conflict(display or path, result)
            return f"{conflict}; nothing was written. Read it again, then retry."
        return _saved(await save(path, data))
    if base.source != "editor":
        return _saved(await save(path, data))
    result = await editor.apply_document_edit(path, base.as_buffer(base.text), base.as_buffer(text))
    if result.status == "applied":
        return Committed(note=result.note)
    conflict = editor_conflict(display or path, result)
    return f"{conflict}; nothing was written. Read it again, then retry."


@attrs.frozen
class Committed:
    """A change that landed. ``note``: what the model must know about the file on disk
    (the editor's buffer was not saved, say); empty when buffer and disk agree."""

    note: str = ""


def _saved(failed: str | None) -> Committed | str:
    return Committed() if failed is None else failed


def with_disk_note(output: str, display: str, note: str) -> str:
    """A tool's ``output`` with the editor's note about ``display`` on disk, if any."""
    return f"{output}\nNote on {display}: {note}" if note else output


def editor_conflict(display: str, result: DocumentEditResult) -> str:
    """Why an edit of the open document ``display`` did not apply (``result`` not applied)."""
    if result.status == "not_open":
        return f"{display} was closed in the editor after it was read"
    return f"{display} changed in the editor ({result.message or 'the edit did not apply'})"


async def save(path: str, data: bytes) -> str | None:
    """``write_atomic`` in a thread; the reason it failed (for the model), or None."""
    try:
        await asyncio.to_thread(write_atomic, path, data)
    except OSError as exc:
        return f"Cannot write {path}: {exc.strerror or exc}"
    return None


def write_atomic(path: str, data: bytes) -> None:
    """Replace ``path`` (absolute, real) with ``data`` atomically, its temporary file
    journaled (blocking: use a thread).

    Every folder on the way is reached without following a link (``system.beneath``): one
    swapped for a link since the path was checked raises ``LinkInTheWay`` and nothing is
    written anywhere. Parent folders are created; the file's permission bits are kept (a new
    file gets the umask's). Readers see the old bytes or the new bytes, never a mix, and a
    failure leaves the old file and no temporary file behind. Raises ``OSError``.
    """
    beneath.write_atomic(path, data, make=create_temp_at)


def write_temp(final: str, data: bytes, mode: int | None) -> str:
    """``data``, synced, in a new temporary file beside ``final`` (same file system, so a
    rename onto ``final`` is atomic; :func:`system.beneath.replace` does it without following
    a link); recovery removes it if this process is killed."""
    return beneath.write_temp(final, data, mode=mode, make=create_temp_at)


def link_in_the_way(path: str) -> str | None:
    """Why an edit of ``path`` (absolute, real) must not be sent to an editor now: a folder
    on its way, or the file itself, became a symbolic link since the path was checked
    (None: it is still where it was). Checked right before a ``workspace/applyEdit`` or an
    ACP ``fs/write_text_file`` goes out, since the editor writes wherever the path leads."""
    try:
        found = beneath.lstat(path)
    except beneath.LinkInTheWay as error:
        return str(error.strerror)
    except (OSError, ValueError):
        return None  # nothing the editor could be led astray by
    if found is not None and stat.S_ISLNK(found.st_mode):
        return f"{path} is a symbolic link now (it changed after the path was checked)"
    return None


class FileLocks:
    """One ``asyncio.Lock`` per path, made on demand and dropped when nobody holds or waits.

    Create one per application (``default_registry``) and hand it to every tool that changes
    files. Paths are compared as given: pass resolved (realpath-ed) paths.
    """

    def __init__(self) -> None:
        self._entries: dict[str, _LockEntry] = {}

    @contextlib.asynccontextmanager
    async def hold(self, *paths: str) -> AsyncIterator[None]:
        """Hold the locks of all ``paths``, taken in sorted order so two holders of
        overlapping sets cannot deadlock."""
        async with contextlib.AsyncExitStack() as stack:
            for path in sorted(set(paths)):
                await stack.enter_async_context(self._hold_one(path))
            yield

    def held(self) -> tuple[str, ...]:
        """The paths with a holder or a waiter (for tests and diagnostics)."""
        return tuple(self._entries)

    @contextlib.asynccontextmanager
    async def _hold_one(self, path: str) -> AsyncIterator[None]:
        entry = self._entries.setdefault(path, _LockEntry())
        entry.users += 1
        try:
            async with entry.lock:
                yield
        finally:
            entry.users -= 1
            if entry.users == 0:
                del self._entries[path]


@attrs.define
class _LockEntry:
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    users: int = 0


class FileDiff(NamedTuple):
    patch: str
    additions: int
    deletions: int


def unified_diff(
    old: str | None, new: str | None, label: str, *, new_label: str | None = None
) -> FileDiff:
    """A unified diff (3 lines of context) from ``old`` to ``new``; None is a missing file.

    Line endings are shown as LF (an ending-only change shows no lines), bytes that are not
    UTF-8 as U+FFFD, and a last line without a newline gets the usual
    ``\\ No newline at end of file`` marker.
    """
    before = _display_lines(old)
    after = _display_lines(new)
    lines = list(
        difflib.unified_diff(
            before,
            after,
            fromfile="/dev/null" if old is None else label,
            tofile="/dev/null" if new is None else (new_label or label),
        )
    )
    additions = sum(1 for line in lines[2:] if line.startswith("+"))
    deletions = sum(1 for line in lines[2:] if line.startswith("-"))
    patch = "".join(
        line if line.endswith("\n") else f"{line}\n\\ No newline at end of file\n" for line in lines
    )
    return FileDiff(patch=patch, additions=additions, deletions=deletions)


def _display_lines(text: str | None) -> list[str]:
    if not text:
        return []
    shown = text.encode("utf-8", errors="surrogateescape").decode("utf-8", errors="replace")
    return shown.replace("\r\n", "\n").splitlines(keepends=True)


class EditedFile(NamedTuple):
    """One file of an ``edit`` ask."""

    path: str
    """Absolute path."""
    diff: FileDiff
    base: str | None
    """The text now, without BOM (None: the file does not exist yet)."""
    proposed: str | None
    """The text after the change, without BOM (None: the change deletes the file)."""


def edit_request(
    *, title: str, patterns: Sequence[str], files: Sequence[EditedFile]
) -> PermissionRequest:
    """The ``edit`` ask for a change to ``files``: the subject carries every file's counts
    and the patches, one after the other; the previews (in memory only) every file's text
    before and after."""
    return PermissionRequest(
        permission=PermissionKind.EDIT,
        patterns=tuple(patterns),
        always=("*",),
        title=title,
        subject=EditSubject(
            files=tuple(
                EditedFileStat(path=f.path, additions=f.diff.additions, deletions=f.diff.deletions)
                for f in files
            ),
            patch="".join(f.diff.patch for f in files),
        ),
        previews=tuple(file_preview(f.path, f.base, f.proposed) for f in files),
    )


def file_preview(path: str, base: str | None, proposed: str | None) -> FilePreview:
    """A :class:`FilePreview`; bytes that are not UTF-8 (``surrogateescape``) become U+FFFD,
    so the texts can be sent as JSON."""
    return FilePreview(path=path, base_text=_shown(base), proposed_text=_shown(proposed))


def _shown(text: str | None) -> str | None:
    if text is None:
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        try:
            data = text.encode("utf-8", errors="surrogateescape")
        except UnicodeEncodeError:  # a lone surrogate that stands for no byte
            data = text.encode("utf-8", errors="replace")
        return data.decode("utf-8", errors="replace")
    return text


def not_found_message(path: str) -> str:
    """``File not found: path``, with up to three similarly named siblings as hints."""
    message = f"File not found: {path}"
    folder, name = os.path.split(path)
    wanted = name.lower()
    try:
        siblings = os.listdir(folder)
    except OSError:
        return message
    similar = sorted(
        (s for s in siblings if wanted and (wanted in s.lower() or s.lower() in wanted)),
        key=lambda s: (s.lower() != wanted, s.lower(), s),
    )
    if not similar:
        return message
    hints = "\n".join(os.path.join(folder, s) for s in similar[:3])
    return f"{message}\n\nDid you mean one of these?\n{hints}"
