"""Line hunks between two texts of one file: the unit the user keeps or undoes.

Lines are whole lines, each with its ``\\n`` (a last line without one has none); only ``\\n``
ends a line, so a CRLF file keeps its ``\\r`` inside the lines. A file that did not exist is
``None``: a created file is one hunk from ``""``, a deleted file one hunk to ``""``.
"""

from __future__ import annotations

import difflib
from typing import Literal

import attrs

HunkKind = Literal["created", "deleted", "modified"]

MAX_REVIEW_CHARS = 1_000_000
"""Files larger than this (before or after the step) get no hunks: diffing and storing
them per step would cost more than reviewing them line by line is worth."""


@attrs.frozen(kw_only=True)
class HunkText:
    """One contiguous changed region: ``old_lines`` at ``old_start`` of the old text became
    ``new_lines`` at ``new_start`` of the new text (0-based line indexes)."""

    kind: HunkKind
    old_start: int
    new_start: int
    old_lines: tuple[str, ...]
    new_lines: tuple[str, ...]


def split_lines(text: str) -> list[str]:
    """``text`` as lines that each keep their ``\\n`` (the last one may have none)."""
    lines = text.split("\n")
    out = [line + "\n" for line in lines[:-1]]
    if lines[-1]:
        out.append(lines[-1])
    return out


def reviewable(text: str | None) -> bool:
    """Whether a file's text can be hunked: absent (created/deleted), or text that is not
    binary (a NUL), has no bytes that are not UTF-8 (``surrogateescape`` stand-ins cannot be
    stored as JSON) and is not over :data:`MAX_REVIEW_CHARS`."""
    if text is None:
        return True
    if len(text) > MAX_REVIEW_CHARS or "\0" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def diff_hunks(old: str | None, new: str | None) -> list[HunkText]:
    """The hunks that turn ``old`` into ``new`` (None: the file does not exist), in file
    order; empty when nothing changed."""
    if old is None and new is None:
        return []
    if old is None:
        return [_whole("created", (), tuple(split_lines(new or "")))]
    if new is None:
        return [_whole("deleted", tuple(split_lines(old)), ())]
    a, b = split_lines(old), split_lines(new)
    matcher = difflib.SequenceMatcher(None, a, b, autojunk=False)
    return [
        HunkText(
            kind="modified",
            old_start=i1,
            new_start=j1,
            old_lines=tuple(a[i1:i2]),
            new_lines=tuple(b[j1:j2]),
        )
        for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        if tag != "equal"
    ]


def _whole(kind: HunkKind, old: tuple[str, ...], new: tuple[str, ...]) -> HunkText:
    return HunkText(kind=kind, old_start=0, new_start=0, old_lines=old, new_lines=new)
