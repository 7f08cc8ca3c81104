"""Where each hunk is in a file's current text, or None when its text is no longer there.

A hunk's lines are known in the text its step left (the step's *after* text). That text is
mapped to the current text with difflib's matching blocks; the hunk is located only when
all its lines fall inside one matching block — intact and in place, whatever was added or
removed above or below it. Hunks of one step that were undone are first put back into the
after text (their old lines for their new ones): that is the text the undo left, so an
undone hunk is located by its restored old lines and the step's other hunks keep their
places. A pure deletion (no lines) is located at a point inside or at the edge of a
matching block.
"""

from __future__ import annotations

import difflib
from collections.abc import Sequence

import attrs

from lsp_agent.core.review.hunks import split_lines
from lsp_agent.core.review.ledger import Hunk, HunkStatus


@attrs.frozen(kw_only=True)
class Span:
    """Lines ``start`` .. ``start + count`` (exclusive) of a text."""

    start: int
    count: int

    @property
    def end(self) -> int:
        return self.start + self.count


def map_spans(
    reference: Sequence[str], current: Sequence[str], spans: Sequence[Span]
) -> list[Span | None]:
    """Each span of ``reference`` in ``current`` when its lines are there, unchanged and
    contiguous; else None."""
    blocks = [
        (a, b, size)
        for a, b, size in difflib.SequenceMatcher(
            None, list(reference), list(current), autojunk=False
        ).get_matching_blocks()
        if size
    ]
    out: list[Span | None] = []
    for span in spans:
        found: Span | None = None
        if span.count == 0 and not reference and not current:
            found = Span(start=0, count=0)
        for a, b, size in blocks:
            if a <= span.start and span.end <= a + size:
                found = Span(start=b + span.start - a, count=span.count)
                break
        out.append(found)
    return out


def locate_step(
    after: str | None,
    hunks: Sequence[Hunk],
    status: dict[str, HunkStatus],
    current: str | None,
) -> dict[str, Span | None]:
    """The current place of each of ``hunks`` — all of one step and one file, ``after``
    being that file's text after the step (None: the step deleted it) — in ``current``
    (None: the file does not exist now). For an undone hunk: where its old text is."""
    out: dict[str, Span | None] = {}
    general: list[Hunk] = []
    for hunk in hunks:
        undone = status.get(hunk.hunk_id) == "undone"
        if hunk.kind == "deleted" and not undone:
            out[hunk.hunk_id] = Span(start=0, count=0) if current is None else None
        elif hunk.kind == "created" and undone:
            out[hunk.hunk_id] = Span(start=0, count=0) if not current else None
        elif current is None:
            out[hunk.hunk_id] = None
        else:
            general.append(hunk)
    if not general or current is None:
        return out
    reference, spans = _reference(after, hunks, status)
    found = map_spans(reference, split_lines(current), [spans[h.hunk_id] for h in general])
    out.update({h.hunk_id: place for h, place in zip(general, found, strict=True)})
    return out


def _reference(
    after: str | None, hunks: Sequence[Hunk], status: dict[str, HunkStatus]
) -> tuple[list[str], dict[str, Span]]:
    """The after text with the undone hunks put back, and every hunk's span in it (its new
    lines, or its old lines when undone)."""
    lines = split_lines(after or "")
    ordered = sorted(hunks, key=lambda h: h.new_start)
    spans: dict[str, Span] = {}
    shift = 0
    pieces: list[str] = []
    taken = 0
    for hunk in ordered:
        new = split_lines(hunk.new_text)
        undone = status.get(hunk.hunk_id) == "undone"
        start = hunk.new_start
        pieces += lines[taken:start]
        if undone:
            old = split_lines(hunk.old_text)
            pieces += old
            spans[hunk.hunk_id] = Span(start=start + shift, count=len(old))
            shift += len(old) - len(new)
        else:
            pieces += new
            spans[hunk.hunk_id] = Span(start=start + shift, count=len(new))
        taken = start + len(new)
    pieces += lines[taken:]
    return pieces, spans
