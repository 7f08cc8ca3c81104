"""A step's hunks, from the texts its snapshot trees hold (``review_recorded`` data).

Each changed file's text before and after the step is read from the two trees (documents
open in the editor were recorded as their buffers held them). Files that cannot be hunked
— binary, with bytes that are not UTF-8, or over ``MAX_REVIEW_CHARS`` — are skipped: they
stay revertable through the checkpoint, but get no hunks to keep or undo.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from lsp_agent.core import events as ev
from lsp_agent.core.checkpoints import BOM, SnapshotChange, SnapshotStore
from lsp_agent.core.interfaces import IdFactory
from lsp_agent.core.review.hunks import diff_hunks, reviewable


async def step_hunks(
    snapshots: SnapshotStore,
    root: Path,
    before: str,
    after: str,
    changes: Sequence[SnapshotChange],
    ids: IdFactory,
) -> list[ev.HunkRecord]:
    """The hunks of every reviewable changed file, each with a new ``hnk_`` id."""
    out: list[ev.HunkRecord] = []
    for change in changes:
        old = await snapshots.read(root, before, change.path)
        new = await snapshots.read(root, after, change.path)
        if not (reviewable(old) and reviewable(new)):
            continue
        old = None if old is None else old.removeprefix(BOM)
        new = None if new is None else new.removeprefix(BOM)
        for hunk in diff_hunks(old, new):
            out.append(
                {
                    "hunkId": ids.new("hnk"),
                    "path": change.path,
                    "kind": hunk.kind,
                    "oldStart": hunk.old_start,
                    "newStart": hunk.new_start,
                    "oldText": "".join(hunk.old_lines),
                    "newText": "".join(hunk.new_lines),
                }
            )
    return out
