"""``agent/nextEdit/feedback``: what the user did with a suggestion, recorded in the session
last active in the suggestion's folder as a ``suggestion_feedback`` event — the model hears of
it at its next turn (``core/suggestions.py``). A suggestion this server did not make, or a
folder without a session, records nothing."""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from lsp_agent.completion.exclusion import Exclusions
from lsp_agent.completion.inline import InlineCompletions
from lsp_agent.completion.next_edit import NextEdits
from lsp_agent.completion.task import FolderTasks
from lsp_agent.core import events as ev
from lsp_agent.core.uris import path_of_uri

Append = Callable[[str, ev.Event], Awaitable[None]]
"""(session id, event) → appended to its log and published."""


def _short(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


class Feedback:
    def __init__(
        self,
        *,
        inline: InlineCompletions,
        next_edits: NextEdits,
        exclusions: Exclusions,
        tasks: FolderTasks,
        append: Append,
    ) -> None:
        self._inline = inline
        self._next_edits = next_edits
        self._exclusions = exclusions
        self._tasks = tasks
        self._append = append

    async def record(self, suggestion_id: str, accepted: bool) -> bool:
        """Whether it was recorded (a known suggestion, a session in its folder)."""
        event = self._event(suggestion_id, accepted)
        if event is None:
            return False
        path = path_of_uri(event.uri)
        place = self._exclusions.place(path) if path is not None else None
        if place is None:
            return False
        session_id = await self._tasks.active_session(place[0])
        if session_id is None:
            return False
        await self._append(session_id, event)
        return True

    def _event(self, suggestion_id: str, accepted: bool) -> ev.SuggestionFeedback | None:
        edit = self._next_edits.shown.get(suggestion_id)
        if edit is not None:
            if edit.reason:
                summary = _short(edit.reason)
            else:
                summary = f"{_short(edit.old_text, 30)} → {_short(edit.new_text, 30)}"
            return ev.SuggestionFeedback(
                suggestion_id=suggestion_id,
                kind="next_edit",
                accepted=accepted,
                uri=edit.uri,
                line=edit.start[0],
                summary=summary,
            )
        inline = self._inline.shown.get(suggestion_id)
        if inline is not None:
            return ev.SuggestionFeedback(
                suggestion_id=suggestion_id,
                kind="inline",
                accepted=accepted,
                uri=inline.uri,
                line=inline.line,
                summary=f"inserting {_short(inline.text)!r}",
            )
        return None
