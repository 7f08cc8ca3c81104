"""The user's comments on hunks as the text that opens their next prompt.

One block lists every comment not sent yet, in the order made: where the hunk is
(``path:line``), its first lines (what the agent wrote; for a hunk the user undid, what it
had written and is gone now), and the comment or the reason. The block is the start of the
user message itself (``SessionService.admit``), so the person sees in the conversation
exactly what the model was told.
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.review.hunks import split_lines
from lsp_agent.core.review.ledger import Comment, Ledger

SHOWN_LINES = 3
"""Lines of each hunk quoted; the rest is counted."""

_LABEL = {"comment": "Comment", "keep": "Kept, because", "undo": "Undone, because"}


def comments_prompt(ledger: Ledger, comments: Sequence[Comment]) -> str:
    """The block for ``comments`` (unsent, of hunks the ledger lists); "" for none."""
    parts: list[str] = []
    for comment in comments:
        for hunk_id in comment.hunk_ids:
            hunk = ledger.hunk(hunk_id)
            if hunk is None:
                continue
            line = comment.lines.get(hunk_id, hunk.new_start) + 1
            label = _LABEL[comment.action]
            parts.append(
                f"{hunk.path}:{line}{_state(ledger, hunk_id, comment)}\n"
                f"{_quote(hunk.new_text, hunk.old_text)}\n{label}: {comment.text}"
            )
    if not parts:
        return ""
    return "My comments on your changes:\n\n" + "\n\n".join(parts)


def _state(ledger: Ledger, hunk_id: str, comment: Comment) -> str:
    if ledger.status(hunk_id) == "undone" and comment.action != "undo":
        return " (I undid this change)"
    return ""


def _quote(new_text: str, old_text: str) -> str:
    """The hunk's first new lines; for a hunk that only removed lines, the removed ones."""
    lines = split_lines(new_text)
    head = ""
    if not lines:
        lines, head = split_lines(old_text), "(you removed these lines)\n"
    shown = "".join(lines[:SHOWN_LINES])
    if not shown.endswith("\n"):
        shown += "\n"
    more = len(lines) - SHOWN_LINES
    tail = f"… ({more} more lines)\n" if more > 0 else ""
    return f"{head}```\n{shown}{tail}```"
