"""What the core knows about a model: limits and prices (from the catalog, config overrides)."""

from __future__ import annotations

import attrs

from lsp_agent.core.messages import Usage


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
