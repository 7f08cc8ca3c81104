"""The ``apply_patch`` envelope: text in, a typed :class:`Patch` out. Pure, no I/O.

The format (one envelope, any number of file sections)::

    *** Begin Patch
    *** Add File: <path>
    +<every line of the new file, each prefixed with '+'>
    *** Delete File: <path>
    *** Update File: <path>
    *** Move to: <new path>            (optional, right after the Update line)
    @@ <optional context line to seek to first>
     <context line>
    -<removed line>
    +<added line>
    *** End of File                    (optional: the hunk ends at the end of the file)
    *** End Patch

Leniencies, each harmless: a shell heredoc (``cat <<'EOF'`` … ``EOF``) or a Markdown code fence
around the envelope is dropped; blank lines between sections are ignored; an empty line inside
a hunk is an empty context line (editors strip the lone space); the first hunk of a section may
leave out its ``@@``; consecutive ``@@ <context>`` lines seek one after another (``@@ class A``
then ``@@ def f``); a unified-diff header ``@@ -3,4 +3,5 @@ text`` counts as ``@@ text``.

Every error is a :class:`PatchFormatError` whose message names the line of the patch.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Literal

import attrs

__all__ = [
    "AddFile",
    "DeleteFile",
    "FileOperation",
    "Hunk",
    "HunkLine",
    "Patch",
    "PatchFormatError",
    "UpdateFile",
    "parse_patch",
]

BEGIN = "*** Begin Patch"
END = "*** End Patch"
END_OF_FILE = "*** End of File"
MOVE_TO = "*** Move to:"

LineKind = Literal[" ", "-", "+"]

_HEADER = re.compile(r"^\*\*\* (Add|Delete|Update) File:(.*)$")
_HEREDOC_OPEN = re.compile(
    r"^(?:(?:cat|apply_patch|applypatch)\s*)?<<-?\s*(['\"]?)([A-Za-z_][A-Za-z0-9_]*)\1$"
)
_FENCE_OPEN = re.compile(r"^```[\w+-]*$")
_UNIFIED_RANGE = re.compile(r"^-\d+(?:,\d+)?\s+\+\d+(?:,\d+)?\s*@@(.*)$")


class PatchFormatError(ValueError):
    """A malformed patch. ``line`` is the 1-based line of the patch text (None: no line)."""

    def __init__(self, message: str, *, line: int | None = None) -> None:
        self.line = line
        self.problem = message
        where = f" at line {line}" if line is not None else ""
        super().__init__(f"Invalid patch{where}: {message}")


@attrs.frozen(kw_only=True)
class HunkLine:
    kind: LineKind
    """`` `` keeps the line, ``-`` removes it, ``+`` adds it."""
    text: str
    """The line without its prefix and without a line ending."""


@attrs.frozen(kw_only=True)
class Hunk:
    """One change inside an updated file."""

    contexts: tuple[str, ...]
    """The ``@@ <text>`` lines: each is sought (forward, in order) before the hunk's lines."""
    lines: tuple[HunkLine, ...]
    end_of_file: bool
    """``*** End of File`` followed: the hunk's old lines are the file's last lines."""
    line: int
    """Where the hunk starts in the patch (its ``@@`` line, or its first line)."""

    @property
    def old_lines(self) -> list[str]:
        """The lines the hunk expects in the file: context and removed lines."""
        return [line.text for line in self.lines if line.kind != "+"]

    @property
    def new_lines(self) -> list[str]:
        """The lines that replace them: context and added lines."""
        return [line.text for line in self.lines if line.kind != "-"]

    @property
    def additions(self) -> int:
        return sum(1 for line in self.lines if line.kind == "+")

    @property
    def deletions(self) -> int:
        return sum(1 for line in self.lines if line.kind == "-")


@attrs.frozen(kw_only=True)
class AddFile:
    path: str
    lines: tuple[str, ...]
    """The new file's lines; the file is written with a newline after each."""
    line: int
    """The ``*** Add File`` line in the patch."""

    @property
    def content(self) -> str:
        return "".join(f"{text}\n" for text in self.lines)


@attrs.frozen(kw_only=True)
class DeleteFile:
    path: str
    line: int


@attrs.frozen(kw_only=True)
class UpdateFile:
    path: str
    move_to: str | None
    hunks: tuple[Hunk, ...]
    """May be empty only for a pure rename (``move_to`` set)."""
    line: int


FileOperation = AddFile | DeleteFile | UpdateFile


@attrs.frozen(kw_only=True)
class Patch:
    operations: tuple[FileOperation, ...]


_Numbered = tuple[int, str]
"""A line of the patch with its 1-based number."""


def parse_patch(text: str) -> Patch:
    """Parse a whole patch, or raise :class:`PatchFormatError` naming the offending line."""
    numbered = [(n, line.removesuffix("\r")) for n, line in enumerate(text.split("\n"), 1)]
    body = _envelope(_unwrap(numbered))
    operations: list[FileOperation] = []
    index = 0
    while index < len(body):
        number, line = body[index]
        if not line.strip():
            index += 1
            continue
        header = _HEADER.match(line.rstrip())
        if header is None:
            raise PatchFormatError(
                "expected a file section ('*** Add File: <path>', '*** Delete File: <path>' or "
                f"'*** Update File: <path>'), found {_show(line)}",
                line=number,
            )
        kind, path = header.group(1), header.group(2).strip()
        if not path:
            raise PatchFormatError(f"'*** {kind} File:' needs a path", line=number)
        end = index + 1
        while end < len(body) and not _HEADER.match(body[end][1].rstrip()):
            end += 1
        section = _drop_trailing_empty(body[index + 1 : end])
        if kind == "Add":
            operations.append(_add(path, number, section))
        elif kind == "Delete":
            operations.append(_delete(path, number, section))
        else:
            operations.append(_update(path, number, section))
        index = end
    if not operations:
        raise PatchFormatError("empty patch: no file sections between the markers")
    return Patch(operations=tuple(operations))


# --- the envelope -----------------------------------------------------------------------


def _trim_blank(lines: Sequence[_Numbered]) -> list[_Numbered]:
    start, stop = 0, len(lines)
    while start < stop and not lines[start][1].strip():
        start += 1
    while stop > start and not lines[stop - 1][1].strip():
        stop -= 1
    return list(lines[start:stop])


def _unwrap(lines: Sequence[_Numbered]) -> list[_Numbered]:
    """Drop a heredoc (``cat <<'EOF'`` … ``EOF``) or a Markdown fence around the envelope."""
    lines = _trim_blank(lines)
    if not lines:
        return lines
    first = lines[0][1].strip()
    last = lines[-1][1].strip() if len(lines) > 1 else ""
    heredoc = _HEREDOC_OPEN.match(first)
    if heredoc is not None:
        closes = last == heredoc.group(2)
        return _trim_blank(lines[1 : -1 if closes else None])
    if _FENCE_OPEN.match(first) and last == "```":
        return _trim_blank(lines[1:-1])
    return lines


def _envelope(lines: list[_Numbered]) -> list[_Numbered]:
    if not lines:
        raise PatchFormatError("empty patch: expected '*** Begin Patch' … '*** End Patch'")
    first_number, first = lines[0]
    if first.strip() != BEGIN:
        raise PatchFormatError(
            f"the patch must start with '{BEGIN}', found {_show(first)}", line=first_number
        )
    last_number, last = lines[-1]
    if len(lines) < 2 or last.strip() != END:
        raise PatchFormatError(
            f"the patch must end with '{END}', found {_show(last)}", line=last_number
        )
    return lines[1:-1]


def _drop_trailing_empty(lines: Sequence[_Numbered]) -> list[_Numbered]:
    """Empty lines just before the next section (or the end) belong to no section."""
    stop = len(lines)
    while stop and lines[stop - 1][1] == "":
        stop -= 1
    return list(lines[:stop])


def _show(line: str, limit: int = 80) -> str:
    return repr(line if len(line) <= limit else line[:limit] + "…")


# --- sections ---------------------------------------------------------------------------


def _add(path: str, number: int, section: list[_Numbered]) -> AddFile:
    content: list[str] = []
    for line_number, line in section:
        if line.startswith("+"):
            content.append(line[1:])
        elif line == "":
            content.append("")
        else:
            raise PatchFormatError(
                f"every line of an added file starts with '+' (in '*** Add File: {path}'), "
                f"found {_show(line)}",
                line=line_number,
            )
    return AddFile(path=path, lines=tuple(content), line=number)


def _delete(path: str, number: int, section: list[_Numbered]) -> DeleteFile:
    for line_number, line in section:
        if line.strip():
            raise PatchFormatError(
                f"'*** Delete File: {path}' takes no lines, found {_show(line)}",
                line=line_number,
            )
    return DeleteFile(path=path, line=number)


@attrs.define
class _HunkBuilder:
    line: int
    contexts: list[str] = attrs.Factory(list)
    lines: list[HunkLine] = attrs.Factory(list)

    def build(self, *, end_of_file: bool) -> Hunk:
        if not self.lines:
            raise PatchFormatError(
                "a hunk needs at least one line (' ' context, '-' removed or '+' added)",
                line=self.line,
            )
        return Hunk(
            contexts=tuple(self.contexts),
            lines=tuple(self.lines),
            end_of_file=end_of_file,
            line=self.line,
        )


def _update(path: str, number: int, section: list[_Numbered]) -> UpdateFile:
    move_to: str | None = None
    start = 0
    if section and section[0][1].startswith(MOVE_TO):
        move_number, move_line = section[0]
        move_to = move_line[len(MOVE_TO) :].strip()
        if not move_to:
            raise PatchFormatError("'*** Move to:' needs a path", line=move_number)
        start = 1
    hunks: list[Hunk] = []
    current: _HunkBuilder | None = None
    for line_number, line in section[start:]:
        if line.startswith("@@"):
            if current is not None and current.lines:
                hunks.append(current.build(end_of_file=False))
                current = None
            if current is None:
                current = _HunkBuilder(line=line_number)
            context = _context(line)
            if context is not None:
                current.contexts.append(context)
        elif line.rstrip() == END_OF_FILE:
            if current is None or not current.lines:
                raise PatchFormatError(
                    f"'{END_OF_FILE}' must follow the lines of a hunk", line=line_number
                )
            hunks.append(current.build(end_of_file=True))
            current = None
        elif line.startswith("***"):
            hint = (
                f" ('{MOVE_TO}' must come right after '*** Update File: {path}')"
                if line.startswith(MOVE_TO)
                else ""
            )
            raise PatchFormatError(
                f"unexpected {_show(line)} in '*** Update File: {path}'{hint}", line=line_number
            )
        elif line == "" or line[0] in " -+":
            if current is None:
                if hunks:
                    raise PatchFormatError(
                        f"a new hunk after '{END_OF_FILE}' must start with '@@'",
                        line=line_number,
                    )
                current = _HunkBuilder(line=line_number)
            kind: LineKind = " " if line == "" else _kind(line[0])
            current.lines.append(HunkLine(kind=kind, text=line[1:]))
        else:
            raise PatchFormatError(
                "a hunk line starts with ' ' (context), '-' (removed) or '+' (added), "
                f"found {_show(line)}",
                line=line_number,
            )
    if current is not None:
        hunks.append(current.build(end_of_file=False))
    if not hunks and move_to is None:
        raise PatchFormatError(
            f"'*** Update File: {path}' has no hunks (a hunk starts with '@@')", line=number
        )
    return UpdateFile(path=path, move_to=move_to, hunks=tuple(hunks), line=number)


def _kind(prefix: str) -> LineKind:
    if prefix == "-":
        return "-"
    if prefix == "+":
        return "+"
    return " "


def _context(line: str) -> str | None:
    """The text after ``@@`` (without a unified-diff range), or None when there is none."""
    rest = line[2:].strip()
    ranged = _UNIFIED_RANGE.match(rest)
    if ranged is not None:
        rest = ranged.group(1).strip()
    return rest or None
