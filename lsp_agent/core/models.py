"""What the core knows about a model: limits and prices (from the catalog, config overrides),
the port through which a session lists and switches models (:class:`ModelCatalog`), and the
model a side request (a title, a summary) goes to (:class:`SideModel`)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol

import attrs

from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.messages import ThinkingConfig, Usage

if TYPE_CHECKING:
    from lsp_agent.core.interfaces import Provider


@attrs.frozen(kw_only=True)
class ModelInfo:
    """``provider``/``model`` as in ``anthropic/claude-sonnet-4-5``; prices in USD per 1M tokens."""

    provider: str
    model: str
    context_window: int = 128_000
    max_output: int = 8_192
    input_price: float | None = None
    output_price: float | None = None
    cache_read_price: float | None = None
    cache_write_price: float | None = None
    image_input: bool | None = None
    """Takes images in a prompt (core/images.py): True, False (a prompt with one is refused,
    naming the model), None (not known: sent, and the endpoint decides)."""
    reasons_unasked: bool = False
    """Spends output tokens on reasoning even when no thinking is asked for (OpenAI's
    reasoning models): a poor choice for a short side answer such as a title."""

    @property
    def ref(self) -> str:
        return f"{self.provider}/{self.model}"

    def cost(self, usage: Usage) -> float | None:
        """USD for ``usage``, or None when the catalog has no prices for this model."""
        if self.input_price is None or self.output_price is None:
            return None
        cache_read = self.cache_read_price
        if cache_read is None:
            cache_read = self.input_price * 0.1
        cache_write = self.cache_write_price
        if cache_write is None:
            cache_write = self.input_price * 1.25
        total = (
            usage.input_tokens * self.input_price
            + usage.output_tokens * self.output_price
            + usage.cache_read_tokens * cache_read
            + usage.cache_write_tokens * cache_write
        )
        return total / 1_000_000


@attrs.frozen(kw_only=True)
class ModelChoice:
    """One entry of a session's model list: ``ref`` is ``provider/model``."""

    ref: str
    name: str
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        """A ``configOptions`` option: ``{value, name, description?}``."""
        option: dict[str, Any] = {"value": self.ref, "name": self.name}
        if self.description:
            option["description"] = self.description
        return option


class ModelCatalog(Protocol):
    """The models a session may use, and how to reach them (built by the composition root)."""

    def offered(self) -> list[ModelChoice]:
        """What a client lists; every entry resolves."""
        ...

    def resolve(self, ref: str) -> tuple[Provider, ModelInfo]:
        """The provider and model of ``ref``; ``InvalidConfigValue`` for an unknown or
        unusable reference (its message says why)."""
        ...

    def cheapest(self, ref: str, *, min_context_window: int = 0) -> str | None:
        """The cheapest model (by list price) of ``ref``'s provider that answers without
        reasoning first and has at least ``min_context_window`` tokens of context, or None
        when no such model has a known price."""
        ...


@attrs.frozen(kw_only=True)
class SideModel:
    """Where a side request (a title, a compaction summary) goes, and how big it may be."""

    provider: Provider
    info: ModelInfo
    max_output_tokens: int
    thinking: ThinkingConfig | None = None


class SingleModel:
    """A catalog of exactly one model: what a service built without a catalog offers."""

    def __init__(self, provider: Provider, info: ModelInfo) -> None:
        self._provider = provider
        self._info = info

    def offered(self) -> list[ModelChoice]:
        return [ModelChoice(ref=self._info.ref, name=self._info.ref)]

    def cheapest(self, ref: str, *, min_context_window: int = 0) -> str | None:
        return None

    def resolve(self, ref: str) -> tuple[Provider, ModelInfo]:
        if ref != self._info.ref:
            raise InvalidConfigValue(f"unknown model {ref!r}: expected {self._info.ref}")
        return self._provider, self._info
