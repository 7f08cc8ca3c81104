"""The ``read`` tool: a page of a file (numbered lines) or a directory listing.

The path goes through the workspace boundary first; nothing outside is ever opened, except
the session's own spill folder (``ctx.extra_roots``), so the model can page through a spilled
output. An open
editor buffer wins over the disk, so the model sees the user's unsaved text — and is told
when that is not what the disk (and so every command) has. Files are
streamed line by line in a worker thread: a page of a huge file costs a page of memory.
"""

from __future__ import annotations

import asyncio
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from typing import BinaryIO, Literal

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import PathDetails, ReadDetails
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.base import ToolRunContext, load_description, refusal, shown_path
from lsp_agent.workspace.boundary import Outside, Resolved, WorkspaceBoundary
from lsp_agent.workspace.disk_copy import DiskCopy, compare_disk
from lsp_agent.workspace.files import not_found_message

__all__ = [
    "DEFAULT_LIMIT",
    "MAX_LINE_CHARS",
    "MAX_OUTPUT_BYTES",
    "ReadParams",
    "ReadTool",
]

DEFAULT_LIMIT = 2000
MAX_LINE_CHARS = 2000
MAX_OUTPUT_BYTES = 50 * 1024
SAMPLE_BYTES = 4096
# Enough bytes for MAX_LINE_CHARS characters of UTF-8 plus one: a line cut at this many
# bytes always decodes to more than MAX_LINE_CHARS characters, so it is marked as cut.
_LINE_READ_BYTES = 4 * MAX_LINE_CHARS + 1
_SKIP_CHUNK = 64 * 1024
_COUNT_CHUNK = 1024 * 1024

_BINARY_EXTENSIONS = frozenset[str]().union(
    {".zip", ".tar", ".gz", ".tgz", ".bz2", ".xz", ".7z", ".rar", ".jar", ".war"},
    {".exe", ".dll", ".so", ".dylib", ".class", ".bin", ".dat", ".obj", ".o", ".a", ".lib"},
    {".wasm", ".pyc", ".pyo", ".sqlite", ".db"},
    {".doc", ".docx", ".xls", ".xlsx", ".ppt", ".pptx", ".odt", ".ods", ".odp", ".pdf"},
    {".png", ".jpg", ".jpeg", ".gif", ".webp", ".bmp", ".ico", ".tiff"},
    {".mp3", ".mp4", ".wav", ".ogg", ".avi", ".mov", ".ttf", ".otf", ".woff", ".woff2"},
)

Unit = Literal["lines", "entries"]


class ReadParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    file_path: str = Field(
        description="The file or directory to read: absolute, or relative to the first "
        "workspace folder."
    )
    offset: int | None = Field(
        default=None,
        ge=1,
        description="The line number to start reading from (1-based; default 1). For a "
        "directory, the entry to start from.",
    )
    limit: int | None = Field(
        default=None,
        ge=1,
        description=f"The number of lines to read (default {DEFAULT_LIMIT}).",
    )


class ReadTool:
    """Implements ``Tool[ReadParams]``."""

    name = "read"
    kind: ToolKind = "read"
    permission = PermissionKind.READ
    mutates = False
    Params = ReadParams

    def __init__(self) -> None:
        self.description = load_description(self.name)

    def describe(self, params: ReadParams, roots: Sequence[str]) -> str:
        return f"Read {shown_path(params.file_path, roots)}"

    async def run(self, params: ReadParams, ctx: ToolRunContext) -> ToolOutcome:
        where = await ctx.resolve(params.file_path, kind="file", spill=True)
        if isinstance(where, ToolOutcome):
            return where
        verdict = await ctx.ask(
            PermissionRequest(
                permission=self.permission, patterns=(where.display,), title=f"Read {where.display}"
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=where.display)
        offset = params.offset or 1
        limit = params.limit or DEFAULT_LIMIT
        text = await ctx.editor.open_document_text(where.path)
        if text is not None:
            lines = iter(_split_lines(text))
            page = _paginate(lines, offset, limit, _numbered, lambda: sum(1 for _ in lines))
            outcome = _page_outcome(where, page, source="editor")
            disk = await asyncio.to_thread(compare_disk, where.path, text)
            if disk.agrees or outcome.is_error:
                return outcome
            return attrs.evolve(outcome, output=f"{outcome.output}\n\n{unsaved_note(disk)}")
        return await asyncio.to_thread(_read_disk, where, offset, limit, ctx.boundary)


def unsaved_note(disk: DiskCopy) -> str:
    """What the model must know when the buffer it read is not the file on disk."""
    where = "differs" if disk.exists else "does not exist yet"
    return (
        "Note: this is the editor's buffer, which has unsaved changes; the file on disk "
        f"{where}, and commands, tests, searches and git see the disk's version."
    )


# --- pages ----------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Page:
    rendered: tuple[str, ...]
    first: int
    total: int
    capped: bool
    unit: Unit = "lines"

    @property
    def last(self) -> int:
        return self.first + len(self.rendered) - 1

    @property
    def truncated(self) -> bool:
        return self.capped or self.last < self.total

    def footer(self) -> str:
        span = f"{self.unit} {self.first}-{self.last}"
        more = f"Use offset={self.last + 1} to continue."
        if self.capped:
            return f"(Output capped at 50 KB. Showing {span}. {more})"
        if self.last < self.total:
            return f"(Showing {span} of {self.total}. {more})"
        if self.unit == "entries":
            return f"({self.total} entries)"
        return f"(End of file - total {self.total} lines)"

    def text(self) -> str:
        body = "\n".join(self.rendered)
        return f"{body}\n\n{self.footer()}" if body else self.footer()


def _paginate(
    items: Iterator[str],
    offset: int,
    limit: int,
    render: Callable[[int, str], str],
    count_rest: Callable[[], int],
) -> _Page:
    """Render items ``offset``… until ``limit`` or the byte cap; then count the rest."""
    rendered: list[str] = []
    size = 0
    seen = 0
    for seen, item in enumerate(items, start=1):
        if seen < offset:
            continue
        entry = render(seen, item)
        cost = len(entry.encode("utf-8")) + 1
        if len(rendered) == limit or size + cost > MAX_OUTPUT_BYTES:
            capped = len(rendered) < limit
            total = seen + count_rest()
            return _Page(rendered=tuple(rendered), first=offset, total=total, capped=capped)
        rendered.append(entry)
        size += cost
    return _Page(rendered=tuple(rendered), first=offset, total=seen, capped=False)


def _numbered(number: int, line: str) -> str:
    if len(line) > MAX_LINE_CHARS:
        line = f"{line[:MAX_LINE_CHARS]}... (line truncated to {MAX_LINE_CHARS} chars)"
    return f"{number}: {line}"


def _page_outcome(
    where: Resolved, page: _Page, *, source: Literal["disk", "editor"]
) -> ToolOutcome:
    if page.first > page.total and not (page.first == 1 and page.total == 0):
        what = "file" if page.unit == "lines" else "directory"
        return _error(
            where,
            f"Offset {page.first} is out of range for this {what} ({page.total} {page.unit})",
        )
    return ToolOutcome(
        output=page.text(),
        title=where.display,
        details=ReadDetails(
            path=where.path,
            unit=page.unit,
            first=page.first,
            last=page.last,
            total=page.total,
            truncated=page.truncated,
            source=source,
        ),
    )


def _error(where: Resolved, message: str) -> ToolOutcome:
    return ToolOutcome(
        output=message, is_error=True, title=where.display, details=PathDetails(path=where.path)
    )


def _split_lines(text: str) -> list[str]:
    """Lines as the disk reader sees them: split on ``\\n``, a final newline ends the last."""
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    return [line.removesuffix("\r") for line in lines]


# --- the disk (runs in a worker thread) -------------------------------------------------


def _read_disk(
    where: Resolved, offset: int, limit: int, boundary: WorkspaceBoundary
) -> ToolOutcome:
    try:
        mode = os.stat(where.path).st_mode
    except (FileNotFoundError, NotADirectoryError):
        return _error(where, not_found_message(where.path))
    except OSError as exc:
        return _error(where, f"Cannot read {where.path}: {exc.strerror or exc}")
    if stat.S_ISDIR(mode):
        return _list_directory(where, offset, limit, boundary)
    if not stat.S_ISREG(mode):
        return _error(where, f"Not a regular file: {where.path}")
    try:
        with open(where.path, "rb") as f:
            if _is_binary(where.path, f):
                return _error(where, f"Cannot read binary file: {where.path}")
            page = _paginate(_disk_lines(f), offset, limit, _numbered, lambda: _count_lines(f))
    except OSError as exc:
        return _error(where, f"Cannot read {where.path}: {exc.strerror or exc}")
    return _page_outcome(where, page, source="disk")


def _is_binary(path: str, f: BinaryIO) -> bool:
    if os.path.splitext(path)[1].lower() in _BINARY_EXTENSIONS:
        return True
    sample = f.read(SAMPLE_BYTES)
    f.seek(0)
    if b"\0" in sample:
        return True
    control = sum(1 for byte in sample if byte < 9 or 14 <= byte <= 31)
    return control > 0.3 * len(sample)


def _disk_lines(f: BinaryIO) -> Iterator[str]:
    """Decoded lines without their ending; an overlong line is read only up to its cut."""
    while raw := f.readline(_LINE_READ_BYTES):
        if len(raw) == _LINE_READ_BYTES and not raw.endswith(b"\n"):
            while (rest := f.readline(_SKIP_CHUNK)) and not rest.endswith(b"\n"):
                pass
        yield raw.removesuffix(b"\n").removesuffix(b"\r").decode("utf-8", errors="replace")


def _count_lines(f: BinaryIO) -> int:
    """Lines from the current position (at a line start) to the end of the file."""
    count = 0
    last = b"\n"
    while chunk := f.read(_COUNT_CHUNK):
        count += chunk.count(b"\n")
        last = chunk[-1:]
    return count + (last != b"\n")


def _list_directory(
    where: Resolved, offset: int, limit: int, boundary: WorkspaceBoundary
) -> ToolOutcome:
    try:
        names = os.listdir(where.path)
    except OSError as exc:
        return _error(where, f"Cannot list {where.path}: {exc.strerror or exc}")
    entries: list[str] = []
    for name in sorted(names, key=lambda n: (n.casefold(), n)):
        full = os.path.join(where.path, name)
        # A symlink that leaves the workspace is not shown at all.
        if isinstance(boundary.resolve(full, extra_roots=(where.root,)), Outside):
            continue
        entries.append(f"{name}/" if os.path.isdir(full) else name)
    items = iter(entries)
    page = _paginate(items, offset, limit, _plain, lambda: sum(1 for _ in items))
    return _page_outcome(where, attrs.evolve(page, unit="entries"), source="disk")


def _plain(_number: int, entry: str) -> str:
    return entry
