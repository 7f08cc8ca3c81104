"""Session titles: one side request with no tools, never retried, never in the way.

``Titles`` starts it once the model first answers a session's first prompt and never waits
for it; ``drain`` gives what is still running a moment at exit.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from lsp_agent.core import events as ev
from lsp_agent.core import prompts
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.interfaces import EventStore, Provider
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart, ThinkingConfig
from lsp_agent.core.models import SideModel
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.stream_events import TextDelta

MAX_TITLE_CHARS = 80
TITLE_MAX_TOKENS = 64
"""A title's answer limit unless ``agents.title.max_tokens`` says otherwise."""


class Titles:
    def __init__(self, *, store: EventStore) -> None:
        self._store = store
        self._background: set[asyncio.Task[None]] = set()

    async def starter(
        self, session_id: str, recorder: Recorder, model: SideModel
    ) -> Callable[[], None] | None:
        """A callback that starts the title side request for the first pending prompt, on
        ``model`` (the ``title`` agent's: ``TurnSetup.side_model``)."""
        pending = await self._store.pending_inputs(session_id)
        if not pending:
            return None
        blocks = await self._store.inbox_content(pending[0])
        text = "\n".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        if not text.strip():
            return None

        async def make_title() -> None:
            title = await generate_title(
                model.provider,
                model.info.model,
                text,
                max_tokens=model.max_output_tokens,
                thinking=model.thinking,
            )
            if title:
                await recorder.emit(ev.TitleSet(title=title))

        def start() -> None:
            task = asyncio.create_task(make_title())
            self._background.add(task)
            task.add_done_callback(self._background.discard)

        return start

    async def drain(self, timeout: float) -> None:
        """Give the titles still being made up to ``timeout`` seconds, then stop them."""
        if not self._background:
            return
        _, pending = await asyncio.wait(self._background, timeout=timeout)
        for task in pending:
            task.cancel()
        await asyncio.gather(*pending, return_exceptions=True)


async def generate_title(
    provider: Provider,
    model: str,
    first_prompt: str,
    *,
    max_tokens: int = TITLE_MAX_TOKENS,
    thinking: ThinkingConfig | None = None,
) -> str | None:
    """A short title for the conversation, or None when the side request fails."""
    request = ModelRequest(
        model=model,
        system=(SystemBlock(text=prompts.load("title")),),
        messages=(Message(role="user", parts=(TextPart(text=first_prompt[:4000]),)),),
        max_output_tokens=max_tokens,
        thinking=thinking,
    )
    chunks: list[str] = []
    try:
        async for event in provider.stream(request):
            if isinstance(event, TextDelta):
                chunks.append(event.text)
    except ProviderError:
        return None
    return clean_title("".join(chunks))


def clean_title(raw: str) -> str | None:
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    line = line.strip("\"'` ").rstrip(".")
    if not line:
        return None
    return line[:MAX_TITLE_CHARS]
