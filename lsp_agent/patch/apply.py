"""Applying an ``*** Update File`` section's hunks to a file's text. Pure, no I/O.

A hunk's old lines (context and ``-`` lines) are sought from where the previous hunk ended,
in four passes, each over every position before the next pass starts: exact; trailing
whitespace ignored; surrounding whitespace ignored; and that plus typographic punctuation
folded to ASCII (curly quotes, dashes, ellipsis, non-breaking and other wide spaces). A hunk
ending in ``*** End of File`` is tried at the end of the file first. A hunk whose last old line
is empty and that cannot be found is tried again without that line.

Only ``+`` lines come from the patch: context lines keep the file's own text (so a match that
needed a pass past exact does not rewrite whitespace or quotes), and every kept line keeps its
own line ending. New lines take the file's dominant ending (CRLF stays CRLF), a byte-order mark
stays, and a file without a final newline still has none.

A hunk without old lines (only ``+``) is inserted after its last ``@@`` context line, or at the
end of the file when it has none.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import attrs

from lsp_agent.patch.parse import Hunk, HunkLine
from lsp_agent.workspace.files import BOM, detect_newline

__all__ = [
    "HunkError",
    "TextLines",
    "apply_hunks",
    "normalize_punctuation",
    "seek_sequence",
    "split_text",
]

_PUNCTUATION = str.maketrans(
    {
        **dict.fromkeys("\u2018\u2019\u201a\u201b\u2032\u2035", "'"),
        **dict.fromkeys("\u201c\u201d\u201e\u201f\u2033\u2036\u00ab\u00bb", '"'),
        **dict.fromkeys("\u2010\u2011\u2012\u2013\u2014\u2015\u2212\ufe58\ufe63\uff0d", "-"),
        "\u2026": "...",
        **dict.fromkeys(
            "\u00a0\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a\u202f\u205f\u3000",
            " ",
        ),
    }
)


def normalize_punctuation(text: str) -> str:
    """Typographic quotes, dashes, ellipsis and unusual spaces folded to their ASCII forms."""
    return text.translate(_PUNCTUATION)


def _exact(line: str) -> str:
    return line


def _rstripped(line: str) -> str:
    return line.rstrip()


def _stripped(line: str) -> str:
    return line.strip()


def _folded(line: str) -> str:
    return normalize_punctuation(line).strip()


_PASSES: tuple[Callable[[str], str], ...] = (_exact, _rstripped, _stripped, _folded)


class HunkError(ValueError):
    """A hunk that does not fit the file. ``str()`` names the hunk and its patch line."""

    def __init__(self, number: int, hunk: Hunk, problem: str) -> None:
        self.number = number
        self.hunk = hunk
        self.problem = problem
        super().__init__(f"hunk {number} (patch line {hunk.line}): {problem}")


# --- text as lines ----------------------------------------------------------------------


@attrs.define(kw_only=True)
class TextLines:
    """A text split into lines, with everything needed to put it back together unchanged."""

    lines: list[str]
    """The lines without their endings."""
    endings: list[str]
    """Each line's own ending: ``\\n``, ``\\r\\n``, or ``""`` for a last line without one."""
    bom: bool
    newline: str
    """The dominant ending (:func:`~lsp_agent.workspace.files.detect_newline`), for new lines."""

    @property
    def final_newline(self) -> bool:
        return not self.endings or self.endings[-1] != ""

    def join(self) -> str:
        body = "".join(line + ending for line, ending in zip(self.lines, self.endings, strict=True))
        return (BOM if self.bom else "") + body


def split_text(text: str) -> TextLines:
    """Split on ``\\n`` (a preceding ``\\r`` belongs to the ending); a final newline ends the
    last line rather than starting an empty one."""
    bom = text.startswith(BOM)
    if bom:
        text = text[len(BOM) :]
    lines: list[str] = []
    endings: list[str] = []
    parts = text.split("\n")
    for part in parts[:-1]:
        if part.endswith("\r"):
            lines.append(part[:-1])
            endings.append("\r\n")
        else:
            lines.append(part)
            endings.append("\n")
    if parts[-1]:
        lines.append(parts[-1])
        endings.append("")
    return TextLines(lines=lines, endings=endings, bom=bom, newline=detect_newline(text))


# --- seeking ----------------------------------------------------------------------------


def seek_sequence(
    lines: Sequence[str], pattern: Sequence[str], start: int, *, at_end: bool = False
) -> int | None:
    """Where ``pattern`` occurs in ``lines`` at or after ``start``, or None.

    Pass by pass (exact first), the first position wins. With ``at_end``, the position that
    ends the file is tried with every pass before anything else.
    """
    count = len(pattern)
    if count == 0:
        return None
    last = len(lines) - count
    if last < start:
        return None
    if at_end:
        for normalize in _PASSES:
            if _matches_at(lines, pattern, last, normalize):
                return last
    for normalize in _PASSES:
        wanted = [normalize(line) for line in pattern]
        first = wanted[0]
        for index in range(start, last + 1):
            if normalize(lines[index]) != first:
                continue
            if all(normalize(lines[index + k]) == wanted[k] for k in range(1, count)):
                return index
    return None


def _matches_at(
    lines: Sequence[str], pattern: Sequence[str], index: int, normalize: Callable[[str], str]
) -> bool:
    return all(normalize(lines[index + k]) == normalize(p) for k, p in enumerate(pattern))


def _seek_context(lines: Sequence[str], context: str, start: int) -> int | None:
    """The line an ``@@ <context>`` names: a full-line match, else a line beginning with it."""
    found = seek_sequence(lines, [context], start)
    if found is not None:
        return found
    wanted = _folded(context)
    for index in range(start, len(lines)):
        if _folded(lines[index]).startswith(wanted):
            return index
    return None


# --- applying ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Replacement:
    start: int
    """The first file line replaced (or the insertion point)."""
    hunk_lines: tuple[HunkLine, ...]
    """The hunk's lines, a trailing empty old line dropped when that was needed to match."""

    @property
    def old_count(self) -> int:
        return sum(1 for line in self.hunk_lines if line.kind != "+")


def apply_hunks(text: str, hunks: Sequence[Hunk]) -> str:
    """``text`` with every hunk applied in order, or :class:`HunkError` for the first misfit."""
    facts = split_text(text)
    replacements: list[_Replacement] = []
    cursor = 0
    for number, hunk in enumerate(hunks, 1):
        replacement = _locate(facts.lines, hunk, number, cursor)
        replacements.append(replacement)
        cursor = replacement.start + replacement.old_count
    lines: list[str] = []
    endings: list[str] = []
    position = 0
    for replacement in replacements:
        lines.extend(facts.lines[position : replacement.start])
        endings.extend(facts.endings[position : replacement.start])
        position = replacement.start
        for line in replacement.hunk_lines:
            if line.kind == "+":
                lines.append(line.text)
                endings.append(facts.newline)
                continue
            if line.kind == " ":
                lines.append(facts.lines[position])
                endings.append(facts.endings[position])
            position += 1
    lines.extend(facts.lines[position:])
    endings.extend(facts.endings[position:])
    endings = [ending or facts.newline for ending in endings]
    if endings and not facts.final_newline:
        endings[-1] = ""
    return TextLines(lines=lines, endings=endings, bom=facts.bom, newline=facts.newline).join()


def _locate(lines: list[str], hunk: Hunk, number: int, cursor: int) -> _Replacement:
    start = cursor
    for context in hunk.contexts:
        found = _seek_context(lines, context, start)
        if found is None:
            where = f" after line {start}" if start else ""
            raise HunkError(number, hunk, f"could not find the context line {context!r}{where}")
        start = found + 1
    old = hunk.old_lines
    if not old:
        insert_at = start if hunk.contexts else len(lines)
        return _Replacement(start=max(insert_at, cursor), hunk_lines=hunk.lines)
    found = seek_sequence(lines, old, start, at_end=hunk.end_of_file)
    if found is None and hunk.contexts:
        # Models often repeat the @@ line as the hunk's first context line.
        found = seek_sequence(lines, old, start - 1, at_end=hunk.end_of_file)
    if found is not None:
        return _Replacement(start=found, hunk_lines=hunk.lines)
    if old[-1] == "" and len(old) > 1:
        trimmed = _without_last_old_line(hunk.lines)
        found = seek_sequence(lines, old[:-1], start, at_end=hunk.end_of_file)
        if found is not None:
            return _Replacement(start=found, hunk_lines=trimmed)
    where = f" (searching from line {start + 1})" if start else ""
    shown = "\n".join(f"    {line}" for line in old)
    raise HunkError(
        number,
        hunk,
        f"could not find the expected lines{where}:\n{shown}\n"
        "Read the file again and copy the lines exactly.",
    )


def _without_last_old_line(hunk_lines: tuple[HunkLine, ...]) -> tuple[HunkLine, ...]:
    for index in range(len(hunk_lines) - 1, -1, -1):
        if hunk_lines[index].kind != "+":
            return hunk_lines[:index] + hunk_lines[index + 1 :]
    return hunk_lines
