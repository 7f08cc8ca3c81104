"""What the model is told about changes the user took back: one note before its next request.

The note names each hunk — its file, its lines, the text the agent had written and the text
the user restored — and asks the model not to make the change again unless the user asks
for it. Kept hunks need no note: the files already show them. A rewind of the code alone
(``revert/stage`` with ``scope: "code"``) keeps the messages that say the model changed the
files, so it gets a note too: which files went back, and to read them again before editing.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.review.hunks import split_lines
from lsp_agent.core.review.ledger import Hunk

MAX_NOTE_LINES = 40
"""Lines of each text shown; the rest is counted, not shown."""


def undo_note(hunks: Sequence[Hunk], lines: dict[str, int | None]) -> str:
    """The note for ``hunks`` (undone, in the order recorded); ``lines``: the 0-based line
    each one's old text was restored at."""
    parts = [
        "The user reviewed your changes and undid these hunks; the files no longer contain "
        "them. Do not make these changes again unless the user asks you to."
    ]
    for hunk in hunks:
        restored = split_lines(hunk.old_text)
        at = lines.get(hunk.hunk_id)
        parts.append(
            f"{_where(hunk, at, len(restored))}\n"
            f"You had written:\n{_block(hunk.new_text)}\n"
            f"Restored:\n{_block(hunk.old_text)}"
        )
    return "<review-update>\n" + "\n\n".join(parts) + "\n</review-update>"


def _where(hunk: Hunk, at: int | None, count: int) -> str:
    if hunk.kind == "created":
        return f"{hunk.path}: the file you created (the user removed it)"
    if hunk.kind == "deleted":
        return f"{hunk.path}: the file you deleted (the user restored it)"
    line = (at if at is not None else hunk.new_start) + 1
    if count == 0:
        return f"{hunk.path}, at line {line} (your added lines were removed)"
    if count == 1:
        return f"{hunk.path}, line {line}"
    return f"{hunk.path}, lines {line}-{line + count - 1}"


def _block(text: str) -> str:
    if not text:
        return "(nothing)"
    lines = split_lines(text)
    shown = "".join(lines[:MAX_NOTE_LINES])
    if not shown.endswith("\n"):
        shown += "\n"
    more = len(lines) - MAX_NOTE_LINES
    tail = f"… ({more} more lines)\n" if more > 0 else ""
    return f"```\n{shown}{tail}```"


def code_rewind_note(files: Sequence[str]) -> str:
    """The note for a ``code``-scope rewind that restored ``files`` (workspace-relative)."""
    shown = ", ".join(files[:MAX_NOTE_LINES])
    more = len(files) - MAX_NOTE_LINES
    if more > 0:
        shown += f" and {more} more"
    return (
        "<review-update>\nThe user rewound the code: these files are back to how they were "
        "before the user's earlier message, and the changes you made to them since are gone "
        f"(the conversation was kept): {shown}. Read a file again before you edit it, and do "
        "not make those changes again unless the user asks you to.\n</review-update>"
    )
