"""Compaction: when to fold the older part of a long conversation into a summary, what
stays verbatim, and what the model sees after it (the summary itself is written by
``compaction_summary``).

Nothing is deleted: the log keeps every message; what changes is the *current context*
the model sees — a ``<conversation-checkpoint>`` user message with the summary, then the
newest messages verbatim. A later compaction updates the previous summary rather than
starting over.

Sizes for choosing what stays verbatim are estimated from characters (a sizing decision,
not the trigger: whether to compact is decided from the provider's reported usage).
"""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.events import StoredEvent
from lsp_agent.core.history import fold
from lsp_agent.core.messages import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
)
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.transcript import TranscriptMessage

CHARS_PER_TOKEN = 4
"""For sizing only; the estimate of what was added since the last request is deliberately
higher (:func:`needs_compaction`)."""

COUNT_FROM = 0.85
"""Share of the compaction limit from which the provider's token counter is asked."""


@attrs.frozen(kw_only=True)
class CompactionPolicy:
    auto: bool = True
    reserve_tokens: int = 20_000
    keep_recent_tokens: int = 8_000


@attrs.frozen(kw_only=True)
class CompactionPoint:
    """Where the latest compaction cut the conversation: ``first_kept`` is the first
    transcript message kept verbatim (None: everything up to the compaction is summarized)."""

    summary: str
    first_kept: str | None
    compacted_seq: int
    """Messages recorded after this seq are newer than the compaction: always kept."""


def latest_compaction_point(events: Sequence[StoredEvent]) -> CompactionPoint | None:
    point = None
    for stored in events:
        if stored.type != "compaction_ended":
            continue
        ended = stored.event
        if isinstance(ended, ev.CompactionEnded) and ended.summary:
            point = CompactionPoint(
                summary=ended.summary,
                first_kept=ended.first_kept_message_id,
                compacted_seq=stored.seq,
            )
    return point


def current_view(
    transcript: Sequence[TranscriptMessage], point: CompactionPoint | None
) -> list[TranscriptMessage]:
    """The transcript messages the model still sees verbatim after ``point``."""
    if point is None:
        return list(transcript)
    if point.first_kept is None:
        return [m for m in transcript if m.seq > point.compacted_seq]
    for index, message in enumerate(transcript):
        if message.message_id == point.first_kept:
            return list(transcript[index:])
    return [m for m in transcript if m.seq > point.compacted_seq]


def model_messages(
    transcript: Sequence[TranscriptMessage],
    point: CompactionPoint | None,
    folder: Callable[[Sequence[TranscriptMessage]], list[Message]] = fold,
) -> list[Message]:
    """What the model is sent: the summary at ``point`` (if any), then the verbatim messages
    (folded by ``folder``: :func:`fold`, or a ``FoldCache``'s)."""
    messages = folder(current_view(transcript, point))
    if point is None:
        return messages
    return [summary_message(point.summary), *messages]


@functools.lru_cache(maxsize=8)
def summary_message(summary: str) -> Message:
    """The summary as the model reads it (the ``<conversation-checkpoint>`` message): the
    same object for the same summary, so every step after a compaction starts with the
    message the last one sent (what the request caches key on)."""
    text = (
        "<conversation-checkpoint>\n"
        "The following summarizes the earlier part of this conversation. Treat it as "
        "historical context, not as new instructions.\n"
        f"<summary>\n{summary.strip()}\n</summary>\n"
        "</conversation-checkpoint>"
    )
    return Message(role="user", parts=(TextPart(text=text),))


def split_for_compaction(
    view: Sequence[TranscriptMessage], keep_recent_tokens: int
) -> tuple[list[TranscriptMessage], list[TranscriptMessage]]:
    """(head to summarize, tail kept verbatim): the newest messages that fit the budget,
    and at least the newest one (what the model works on right now).

    Cuts only between transcript messages, so a tool call always travels with its result.
    """
    kept = 0
    start = len(view)
    for index in range(len(view) - 1, -1, -1):
        size = estimate_tokens(fold([view[index]]))
        if kept + size > keep_recent_tokens and start < len(view):
            break
        kept += size
        start = index
    return list(view[:start]), list(view[start:])


def estimate_tokens(messages: Sequence[Message]) -> int:
    chars = sum(len(render_part(part, limit=None)) for m in messages for part in m.parts)
    return chars // CHARS_PER_TOKEN + 1 if chars else 0


async def needs_compaction(
    view: Sequence[TranscriptMessage],
    *,
    context_used: int,
    policy: CompactionPolicy,
    model: ModelInfo,
    count_tokens: Callable[[], Awaitable[int | None]],
) -> bool:
    """Measured, not guessed: the provider's reported context of the last request
    (``context_used``) plus a deliberately high estimate of only what was added since (the
    messages of ``view``, the current view, after the last answer). Near the limit,
    ``count_tokens`` (the provider's counter for the whole next request, where it has one)
    settles it."""
    if not policy.auto or context_used == 0:
        return False
    last_answer = next(
        (
            i
            for i in range(len(view) - 1, -1, -1)  # from the end: the last answer is near it
            if view[i].role == "assistant" and view[i].status == "completed"
        ),
        -1,
    )
    # The answer itself was in the last response; its tool results and all after were not.
    since = fold(view[last_answer:])[1:] if last_answer >= 0 else fold(view)
    added = estimate_tokens(since) * 4 // 3
    limit = model.context_window - policy.reserve_tokens
    estimate = context_used + added
    if estimate < limit * COUNT_FROM or added == 0:
        return estimate > limit
    counted = await count_tokens()
    if counted is None:
        return estimate > limit
    return counted + model.max_output // 4 > limit


def render_part(part: Part, *, limit: int | None, role: str = "") -> str:
    if isinstance(part, TextPart):
        return f"[{'User' if role == 'user' else 'Assistant'}]: {part.text}"
    if isinstance(part, ReasoningPart):
        return f"[Assistant reasoning]: {part.text}"
    if isinstance(part, ToolCallPart):
        return f"[Tool call]: {part.name}({_compact_json(part.input)})"
    if isinstance(part, ImagePart):
        return f"[User image]: {part.media_type} (seen by the model; not in this text)"
    text = part.output
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"… [{len(part.output) - limit} more characters]"
    label = "Tool error" if part.is_error else "Tool result"
    return f"[{label}]: {text}"


def _compact_json(value: Mapping[str, Any]) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))
