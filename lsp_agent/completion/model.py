"""The completion model, in its two forms: a fill-in-the-middle model behind an
OpenAI-compatible ``/v1/completions`` (``prompt`` + ``suffix``: llama.cpp, Ollama, vLLM), or any
chat model through the agent's own providers. Both answer text and the tokens it cost."""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from lsp_agent.completion.context import CompletionContext
from lsp_agent.completion.prompt import CHAT_SYSTEM, chat_prompt, fim_prompt
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.messages import Message, ModelRequest, SystemBlock, TextPart
from lsp_agent.core.stream_events import TextDelta, UsageReported

if TYPE_CHECKING:
    import httpx2

FILL_TOKENS = 96
"""An inline suggestion finishes a line or a statement: its answer is kept short."""
REQUEST_TIMEOUT = 20.0


@attrs.frozen
class ModelAnswer:
    text: str
    tokens: int
    """Prompt and answer tokens, as the server reported them (else estimated)."""


class CompletionModel(Protocol):
    async def fill(self, ctx: CompletionContext) -> ModelAnswer:
        """The text to insert at the cursor."""
        ...

    async def instruct(self, system: str, prompt: str, max_tokens: int) -> ModelAnswer:
        """An answer to an instruction (next-edit suggestions)."""
        ...

    async def aclose(self) -> None: ...


def estimate(*texts: str) -> int:
    return sum(len(text) for text in texts) // 4 + 1


class FimModel:
    """``POST {base_url}/completions`` (the base URL ends in ``/v1``), one HTTP client kept."""

    def __init__(
        self, *, model: str, base_url: str, api_key_env: str | None, env: Mapping[str, str]
    ) -> None:
        self._model = model
        self._url = base_url.rstrip("/") + "/completions"
        self._api_key_env = api_key_env
        self._env = env
        self._client: httpx2.AsyncClient | None = None

    async def fill(self, ctx: CompletionContext) -> ModelAnswer:
        prompt = fim_prompt(ctx)
        body = {
            "model": self._model,
            "prompt": prompt,
            "suffix": ctx.suffix,
            "max_tokens": FILL_TOKENS,
            "temperature": 0.1,
            "stream": False,
        }
        return await self._post(body, prompt, ctx.suffix)

    async def instruct(self, system: str, prompt: str, max_tokens: int) -> ModelAnswer:
        text = f"{system}\n\n{prompt}\n"
        body = {
            "model": self._model,
            "prompt": text,
            "max_tokens": max_tokens,
            "temperature": 0.1,
            "stream": False,
        }
        return await self._post(body, text)

    async def _post(self, body: dict[str, Any], *sent: str) -> ModelAnswer:
        import httpx2  # the SDKs' HTTP client, imported by the agent's provider already

        if self._client is None:
            self._client = httpx2.AsyncClient(timeout=REQUEST_TIMEOUT)
        headers = {}
        key = self._key()
        if key:
            headers["authorization"] = f"Bearer {key}"
        try:
            response = await self._client.post(self._url, json=body, headers=headers)
        except httpx2.HTTPError as error:
            raise ProviderError(f"completion request failed: {error}", kind="connection") from error
        if response.status_code >= 400:
            raise ProviderError(
                f"completion request failed: HTTP {response.status_code}",
                kind="server" if response.status_code >= 500 else "bad_request",
            )
        data = response.json()
        choices = data.get("choices") or [{}]
        text = str(choices[0].get("text") or "")
        usage = data.get("usage") or {}
        tokens = usage.get("total_tokens")
        if not isinstance(tokens, int):
            tokens = estimate(*sent, text)
        return ModelAnswer(text=text, tokens=tokens)

    def _key(self) -> str:
        return self._env.get(self._api_key_env, "") if self._api_key_env else ""

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


class ChatModel:
    """A chat model through the agent's provider (the compact prompt of ``prompt.py``)."""

    def __init__(self, *, provider: Provider, model: str) -> None:
        self._provider = provider
        self._model = model

    async def fill(self, ctx: CompletionContext) -> ModelAnswer:
        return await self.instruct(CHAT_SYSTEM, chat_prompt(ctx), FILL_TOKENS)

    async def instruct(self, system: str, prompt: str, max_tokens: int) -> ModelAnswer:
        request = ModelRequest(
            model=self._model,
            system=(SystemBlock(text=system),),
            messages=(Message(role="user", parts=(TextPart(text=prompt),)),),
            max_output_tokens=max_tokens,
            cache_conversation=False,  # a different text every time: no cache to write
        )
        pieces: list[str] = []
        tokens = 0
        async for event in self._provider.stream(request):
            if isinstance(event, TextDelta):
                pieces.append(event.text)
            elif isinstance(event, UsageReported):
                usage = event.usage
                tokens = usage.input_tokens + usage.output_tokens + usage.cache_read_tokens
        text = "".join(pieces)
        return ModelAnswer(text=text, tokens=tokens or estimate(system, prompt, text))

    async def aclose(self) -> None:
        return None
