"""What the user did with the editor's suggestions (``suggestion_feedback`` events), told to the
model once: at its next turn, one short line per suggestion in a context note, so the agent
knows which of its predicted edits the user took."""

from __future__ import annotations

from collections.abc import Iterable

from lsp_agent.core import events as ev
from lsp_agent.core.uris import path_of_uri

MAX_LINES = 10
"""The latest ones, when many came between two turns."""


def unnoted_feedback(events: Iterable[ev.StoredEvent]) -> list[ev.StoredEvent]:
    """The ``suggestion_feedback`` events no context note has told the model about yet."""
    found: dict[int, ev.StoredEvent] = {}
    noted: set[int] = set()
    for stored in events:
        if stored.type == "suggestion_feedback":
            found[stored.seq] = stored
        elif stored.type == "context_noted":
            event = stored.event
            assert isinstance(event, ev.ContextNoted)
            noted.update(event.suggestion_feedback or ())
    return [stored for seq, stored in sorted(found.items()) if seq not in noted]


def feedback_note(events: Iterable[ev.StoredEvent]) -> str:
    """One line per suggestion, e.g. "The user accepted the suggested edit at src/a.py:12
    (rename x → y)"."""
    lines = []
    for stored in events:
        event = stored.event
        assert isinstance(event, ev.SuggestionFeedback)
        what = "suggested edit" if event.kind == "next_edit" else "inline completion"
        verb = "accepted" if event.accepted else "rejected"
        where = path_of_uri(event.uri) or event.uri
        lines.append(f"The user {verb} the {what} at {where}:{event.line + 1} ({event.summary})")
    return "\n".join(lines[-MAX_LINES:])
