"""Session titles: one side request with no tools, never retried, never in the way."""

from __future__ import annotations

from lsp_agent.core import prompts
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart
from lsp_agent.core.stream import TextDelta

MAX_TITLE_CHARS = 80


async def generate_title(provider: Provider, model: str, first_prompt: str) -> str | None:
    """A short title for the conversation, or None when the side request fails."""
    request = ModelRequest(
        model=model,
        system=(SystemBlock(text=prompts.load("title")),),
        messages=(Message(role="user", parts=(TextPart(text=first_prompt[:4000]),)),),
        max_output_tokens=64,
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
