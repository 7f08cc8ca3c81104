"""The recent edits of each open document — the user's typing and the agent's edits alike, as
both reach the server as ``didChange`` — for next-edit suggestions to continue them. Each
change is reduced to the whole lines that differ from the text before it (compared a block at
a time: it runs on every keystroke); typing on one line stays one edit."""

from __future__ import annotations

from collections import deque

import attrs

EDITS = 8
"""Edits kept per document (the latest)."""
CLIP = 300
"""Characters kept of each side of an edit."""
_BLOCK = 4096


@attrs.frozen(kw_only=True)
class Edit:
    line: int
    """0-based, where the changed region starts."""
    old: str
    new: str


class EditHistory:
    def __init__(self) -> None:
        self._texts: dict[str, str] = {}
        self._edits: dict[str, deque[Edit]] = {}

    def opened(self, uri: str, text: str) -> None:
        self._texts[uri] = text
        self._edits.setdefault(uri, deque(maxlen=EDITS))

    def closed(self, uri: str) -> None:
        self._texts.pop(uri, None)
        self._edits.pop(uri, None)

    def changed(self, uri: str, text: str) -> None:
        """The document's text after a change; the region that differs is recorded."""
        before = self._texts.get(uri)
        self._texts[uri] = text
        if before is None or before == text:
            return
        start = _common_prefix(before, text)
        end = _common_suffix(before, text, start)
        # Whole lines read better to a model than the characters that differ.
        start = before.rfind("\n", 0, start) + 1
        old_end = _line_end(before, len(before) - end)
        new_end = _line_end(text, len(text) - end)
        edit = Edit(
            line=before.count("\n", 0, start),
            old=before[start:old_end][:CLIP],
            new=text[start:new_end][:CLIP],
        )
        edits = self._edits.setdefault(uri, deque(maxlen=EDITS))
        last = edits[-1] if edits else None
        if last is not None and last.line == edit.line and last.new == edit.old:
            edits[-1] = Edit(line=edit.line, old=last.old, new=edit.new)  # typing on one line
        else:
            edits.append(edit)

    def edits(self, uri: str) -> list[Edit]:
        return list(self._edits.get(uri, ()))


def _line_end(text: str, offset: int) -> int:
    found = text.find("\n", offset)
    return len(text) if found < 0 else found


def _common_prefix(a: str, b: str) -> int:
    n = min(len(a), len(b))
    i = 0
    while i + _BLOCK <= n and a[i : i + _BLOCK] == b[i : i + _BLOCK]:
        i += _BLOCK
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _common_suffix(a: str, b: str, floor: int) -> int:
    """The length of the common end, never reaching into the common start."""
    n = min(len(a), len(b)) - floor
    la, lb = len(a), len(b)
    j = 0
    while j + _BLOCK <= n and a[la - j - _BLOCK : la - j] == b[lb - j - _BLOCK : lb - j]:
        j += _BLOCK
    while j < n and a[la - j - 1] == b[lb - j - 1]:
        j += 1
    return j
