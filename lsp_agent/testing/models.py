"""A model catalog for tests: a fixed set of models, each on its own (scripted) provider."""

from __future__ import annotations

from collections.abc import Sequence

from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.interfaces import Provider
from lsp_agent.core.models import ModelChoice, ModelInfo


class FakeModels:
    """``models`` are ``(info, provider)`` pairs, offered in the given order; ``extra`` resolve
    too but are not offered. ``resolved`` records every ``resolve`` call."""

    def __init__(
        self,
        models: Sequence[tuple[ModelInfo, Provider]],
        *,
        extra: Sequence[tuple[ModelInfo, Provider]] = (),
    ) -> None:
        self._offered = [info for info, _ in models]
        self._known = {info.ref: (provider, info) for info, provider in [*models, *extra]}
        self.resolved: list[str] = []

    def offered(self) -> list[ModelChoice]:
        return [
            ModelChoice(ref=info.ref, name=info.model, description=f"{info.provider} model")
            for info in self._offered
        ]

    def cheapest(self, ref: str, *, min_context_window: int = 0) -> str | None:
        """The known model of ``ref``'s provider with the lowest input + output price."""
        provider = ref.partition("/")[0]
        priced = [
            (info.input_price + info.output_price, info.ref)
            for _, info in self._known.values()
            if info.provider == provider
            and info.input_price is not None
            and info.output_price is not None
            and info.context_window >= min_context_window
            and not info.reasons_unasked
        ]
        return min(priced)[1] if priced else None

    def resolve(self, ref: str) -> tuple[Provider, ModelInfo]:
        self.resolved.append(ref)
        if ref not in self._known:
            raise InvalidConfigValue(f"unknown model {ref!r}: expected one of the offered")
        return self._known[ref]
