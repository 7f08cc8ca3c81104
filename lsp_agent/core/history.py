"""A pure fold: the transcript projection → the messages the model sees next.

Rules that keep the conversation valid for every provider:
- every tool call gets exactly one result (unfinished ones read as interrupted);
- text of an interrupted or failed assistant message is never sent back, nor are its tool
  calls that never ran;
- messages are never merged: a request's messages are a prefix of the next request's,
  byte for byte, so provider prompt caches keep hitting (providers accept consecutive
  user messages: tool results, then a note or a new prompt).
"""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.messages import (
    ImagePart,
    Message,
    Part,
    ReasoningPart,
    TextPart,
    ToolCallPart,
    ToolResultPart,
)
from lsp_agent.core.transcript import TextPartView, ToolCallView, TranscriptMessage

INTERRUPTED_RESULT = "[Tool execution was interrupted]"


def fold(transcript: Sequence[TranscriptMessage]) -> list[Message]:
    messages: list[Message] = []
    for entry in transcript:
        if entry.role == "user":
            _push(messages, Message(role="user", parts=_user_parts(entry)))
            continue
        calls, results = _assistant_parts(entry)
        if calls:
            _push(messages, Message(role="assistant", parts=calls))
        if results:
            _push(messages, Message(role="user", parts=results))
    return messages


class FoldCache:
    """:func:`fold`, each transcript message folded once for as long as it is unchanged.

    Folding is message by message (one entry never affects another's messages), so the
    messages of an entry seen before — the same object, as ``LiveTranscript`` keeps an
    untouched message's — are reused: a step folds only what it added or changed, and the
    folded ``Message`` objects stay the same ones from request to request. The entries the
    last call began with are taken whole (``common_prefix``)."""

    def __init__(self) -> None:
        self._folded: dict[str, tuple[TranscriptMessage, list[Message]]] = {}
        self._last: list[TranscriptMessage] = []
        self._out: list[Message] = []
        self._ends: list[int] = [0]
        """``_ends[i]``: how many messages the first ``i`` entries of ``_last`` folded into."""

    def fold(self, transcript: Sequence[TranscriptMessage]) -> list[Message]:
        entries = list(transcript)
        start = common_prefix(self._last, entries)
        messages = self._out[: self._ends[start]]
        ends = self._ends[: start + 1]
        for entry in entries[start:]:
            cached = self._folded.get(entry.message_id)
            if cached is None or cached[0] is not entry:
                cached = (entry, fold([entry]))
                self._folded[entry.message_id] = cached
            messages.extend(cached[1])
            ends.append(len(messages))
        self._last, self._out, self._ends = entries, messages, ends
        return list(messages)


def common_prefix(a: Sequence[object], b: Sequence[object]) -> int:
    """How many leading items ``a`` and ``b`` share: compared as list slices (in C, the same
    object compares equal at once), narrowed by halving — cheap for thousands of items."""
    low, high = 0, min(len(a), len(b))
    if list(a[:high]) == list(b[:high]):
        return high
    while low < high:
        middle = (low + high + 1) // 2
        if list(a[:middle]) == list(b[:middle]):
            low = middle
        else:
            high = middle - 1
    return low


def _user_parts(entry: TranscriptMessage) -> tuple[Part, ...]:
    """Text as text; an image as its placeholder (its name for the model) and the image."""
    out: list[Part] = []
    for part in entry.parts:
        if isinstance(part, TextPartView):
            out.append(TextPart(text=part.text))
            if part.image_type is not None and part.image_data:
                out.append(ImagePart(media_type=part.image_type, data=part.image_data))
    return tuple(out)


def without_images(messages: Sequence[Message]) -> list[Message]:
    """``messages`` for a model that takes no images: each image's placeholder stays, the
    image goes (a session whose model was switched after an image was sent)."""
    return [
        Message(role=m.role, parts=tuple(p for p in m.parts if not isinstance(p, ImagePart)))
        if any(isinstance(p, ImagePart) for p in m.parts)
        else m
        for m in messages
    ]


def _assistant_parts(entry: TranscriptMessage) -> tuple[tuple[Part, ...], tuple[Part, ...]]:
    keep_text = entry.status in ("completed", "streaming")
    out: list[Part] = []
    results: list[Part] = []
    for part in entry.parts:
        if isinstance(part, ToolCallView):
            if not keep_text and part.status in ("pending", "cancelled"):
                continue  # an unfinished response's call that never ran: never sent back
            out.append(
                ToolCallPart(tool_call_id=part.tool_call_id, name=part.tool_name, input=part.input)
            )
            results.append(_result_of(part))
        elif part.type == "reasoning":
            if keep_text and (part.signature or part.redacted_data or part.text):
                out.append(
                    ReasoningPart(
                        text=part.text, signature=part.signature, redacted_data=part.redacted_data
                    )
                )
        elif keep_text and part.text:
            out.append(TextPart(text=part.text))
    return tuple(out), tuple(results)


def _result_of(call: ToolCallView) -> ToolResultPart:
    if call.status == "completed":
        return ToolResultPart(tool_call_id=call.tool_call_id, output=call.output or "")
    if call.status == "failed":
        text = call.error or call.output or "the tool failed"
        return ToolResultPart(tool_call_id=call.tool_call_id, output=text, is_error=True)
    if call.status == "cancelled":
        text = call.error or "[Tool call was cancelled before it ran]"
        return ToolResultPart(tool_call_id=call.tool_call_id, output=text, is_error=True)
    text = call.error or INTERRUPTED_RESULT
    return ToolResultPart(tool_call_id=call.tool_call_id, output=text, is_error=True)


def _push(messages: list[Message], message: Message) -> None:
    if message.parts:
        messages.append(message)
