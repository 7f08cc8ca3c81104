"""Makes a compaction: one summary request (its prompt is here), recorded as events, then a
new context epoch. What stays verbatim and when to compact is ``compaction``'s."""

from __future__ import annotations

from collections.abc import Sequence

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core import prompts
from lsp_agent.core.compaction.policy import (
    CompactionPoint,
    current_view,
    render_part,
    split_for_compaction,
)
from lsp_agent.core.context import ContextSources, Epoch, build_baseline, local_date
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.history import fold
from lsp_agent.core.interfaces import Clock, EventStore, Provider
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart, ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.stream_events import TextDelta

SUMMARY_MAX_TOKENS = 4096
TOOL_OUTPUT_CHARS = 2000
"""Each tool output is cut to this for the summary request."""
SECTIONS = (
    "## Objective",
    "## Important Details",
    "## Work State",
    "### Completed",
    "### Active",
    "### Blocked",
    "## Next Move",
    "## Relevant Files",
)


@attrs.frozen(kw_only=True)
class Compacted:
    point: CompactionPoint
    epoch: Epoch | None
    """The new epoch's baseline (None if its sources could not be read: keep the old)."""


class Compactor:
    def __init__(
        self,
        *,
        session_id: str,
        store: EventStore,
        provider: Provider,
        recorder: Recorder,
        clock: Clock,
        sources: ContextSources,
        model: ModelInfo,
        keep_recent_tokens: int,
        workspace_roots: tuple[str, ...],
        max_tokens: int | None = None,
        thinking: ThinkingConfig | None = None,
    ) -> None:
        """``provider``/``model`` write the summary (the ``summary`` agent's, or the
        session's); ``max_tokens`` caps it (default :data:`SUMMARY_MAX_TOKENS`, never more
        than the model's limit), ``thinking`` is the agent's reasoning, if any."""
        self._session_id = session_id
        self._store = store
        self._provider = provider
        self._rec = recorder
        self._clock = clock
        self._sources = sources
        self._model = model
        self._keep = keep_recent_tokens
        self._roots = workspace_roots
        self._max_tokens = min(max_tokens or SUMMARY_MAX_TOKENS, model.max_output)
        self._thinking = thinking

    async def run(
        self, point: CompactionPoint | None, epoch_number: int, *, auto: bool, reason: str
    ) -> Compacted | None:
        """Summarize what is older than the newest ``keep_recent_tokens``; None if nothing
        could be compacted (too little history, or the summary request failed)."""
        await self._rec.emit(ev.CompactionStarted(auto=auto, reason=reason))
        view = current_view(await self._store.transcript(self._session_id), point)
        head, tail = split_for_compaction(view, self._keep)
        if not head:
            await self._ended(auto, error="nothing old enough to compact")
            return None
        previous = point.summary if point is not None else None
        try:
            summary = await self._summarize(fold(head), previous)
        except ProviderError as error:
            await self._ended(auto, error=f"the summary request failed: {error}")
            return None
        if not summary.strip():
            await self._ended(auto, error="the summary came back empty")
            return None
        first_kept = tail[0].message_id if tail else None
        stored = await self._rec.emit(
            ev.CompactionEnded(auto=auto, summary=summary, first_kept_message_id=first_kept)
        )
        compacted = CompactionPoint(
            summary=summary, first_kept=first_kept, compacted_seq=stored.seq
        )
        return Compacted(point=compacted, epoch=await self._new_epoch(epoch_number + 1))

    async def _summarize(self, head: list[Message], previous: str | None) -> str:
        request = ModelRequest(
            model=self._model.model,
            system=(SystemBlock(text=prompts.load("compaction")),),
            messages=(
                Message(role="user", parts=(TextPart(text=summary_prompt(head, previous)),)),
            ),
            max_output_tokens=self._max_tokens,
            thinking=self._thinking,
        )
        chunks: list[str] = []
        async for event in self._provider.stream(request):
            if isinstance(event, TextDelta):
                chunks.append(event.text)
        return "".join(chunks)

    async def _new_epoch(self, number: int) -> Epoch | None:
        snapshot = await self._sources.collect(self._roots, full=True)
        if snapshot.unreadable():
            return None
        epoch = build_baseline(snapshot, local_date(self._clock.now()), number)
        await self._rec.emit(epoch.built())
        return epoch

    async def _ended(self, auto: bool, *, error: str) -> None:
        await self._rec.emit(ev.CompactionEnded(auto=auto, error=error))


def summary_prompt(head: Sequence[Message], previous: str | None) -> str:
    """The single user message of a summary request."""
    lines = ["<conversation>"]
    for message in head:
        for part in message.parts:
            lines.append(render_part(part, limit=TOOL_OUTPUT_CHARS, role=message.role))
    lines.append("</conversation>")
    if previous:
        opening = (
            "Update the summary below with the conversation above. Keep what is still true, "
            "drop what is stale, merge in the new facts.\n"
            f"<previous-summary>\n{previous.strip()}\n</previous-summary>"
        )
    else:
        opening = "Write a summary of the conversation above."
    rules = (
        "Answer with exactly this Markdown structure, every heading present and in this "
        "order (write (none) under an empty one):\n"
        + "\n".join(SECTIONS)
        + "\nUse terse bullets; numbered steps under Next Move. Keep file paths, function "
        "and symbol names, commands, error messages and URLs verbatim. Do not mention "
        "that this is a summary."
    )
    return "\n".join(lines) + "\n\n" + opening + "\n\n" + rules
