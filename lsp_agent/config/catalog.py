"""The built-in model catalog: context windows, output limits and list prices.

``image_input`` says whether a model takes images in a prompt (core/images.py). Prices are
USD per million tokens (the providers' public list prices); config entries under
``providers.<name>.models.<model>`` override any field. A model that is not here is still
accepted, with :data:`UNKNOWN_CONTEXT_WINDOW` and :data:`UNKNOWN_MAX_OUTPUT`
(docs/configuration.md).

Only ``lsp_agent.core`` is imported here: no SDK, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from types import MappingProxyType

from lsp_agent.core.models import ModelInfo

__all__ = [
    "CATALOG",
    "UNKNOWN_CONTEXT_WINDOW",
    "UNKNOWN_MAX_OUTPUT",
    "lookup",
]

UNKNOWN_CONTEXT_WINDOW = 128_000
UNKNOWN_MAX_OUTPUT = 8_192


def _anthropic(
    model: str,
    *,
    window: int,
    output: int,
    input_price: float,
    output_price: float,
    images: bool = True,
) -> ModelInfo:
    # Anthropic prompt caching: reads cost 0.1x input, 5-minute writes 1.25x input.
    return ModelInfo(
        provider="anthropic",
        model=model,
        context_window=window,
        max_output=output,
        input_price=input_price,
        output_price=output_price,
        cache_read_price=round(input_price * 0.1, 6),
        cache_write_price=round(input_price * 1.25, 6),
        image_input=images,
    )


def _openai(
    model: str,
    *,
    window: int,
    output: int,
    input_price: float,
    output_price: float,
    cached_input_price: float,
    reasoning: bool = False,
) -> ModelInfo:
    # OpenAI caches automatically: cached input has its own price, writes cost nothing extra.
    # Its reasoning models reason (and bill output tokens for it) even when not asked to.
    return ModelInfo(
        provider="openai",
        model=model,
        context_window=window,
        max_output=output,
        input_price=input_price,
        output_price=output_price,
        cache_read_price=cached_input_price,
        cache_write_price=input_price,
        reasons_unasked=reasoning,
        image_input=True,
    )


_MODELS: tuple[ModelInfo, ...] = (
    # Anthropic
    _anthropic(
        "claude-opus-4-5", window=200_000, output=64_000, input_price=5.0, output_price=25.0
    ),
    _anthropic(
        "claude-opus-4-1", window=200_000, output=32_000, input_price=15.0, output_price=75.0
    ),
    _anthropic(
        "claude-opus-4-0", window=200_000, output=32_000, input_price=15.0, output_price=75.0
    ),
    _anthropic(
        "claude-sonnet-4-5", window=200_000, output=64_000, input_price=3.0, output_price=15.0
    ),
    _anthropic(
        "claude-sonnet-4-0", window=200_000, output=64_000, input_price=3.0, output_price=15.0
    ),
    _anthropic(
        "claude-haiku-4-5", window=200_000, output=64_000, input_price=1.0, output_price=5.0
    ),
    _anthropic(  # text only: no image input
        "claude-3-5-haiku",
        window=200_000,
        output=8_192,
        input_price=0.8,
        output_price=4.0,
        images=False,
    ),
    # OpenAI
    _openai(
        "gpt-5",
        window=400_000,
        output=128_000,
        input_price=1.25,
        output_price=10.0,
        cached_input_price=0.125,
        reasoning=True,
    ),
    _openai(
        "gpt-5-mini",
        window=400_000,
        output=128_000,
        input_price=0.25,
        output_price=2.0,
        cached_input_price=0.025,
        reasoning=True,
    ),
    _openai(
        "gpt-5-nano",
        window=400_000,
        output=128_000,
        input_price=0.05,
        output_price=0.4,
        cached_input_price=0.005,
        reasoning=True,
    ),
    _openai(
        "gpt-4.1",
        window=1_047_576,
        output=32_768,
        input_price=2.0,
        output_price=8.0,
        cached_input_price=0.5,
    ),
    _openai(
        "gpt-4.1-mini",
        window=1_047_576,
        output=32_768,
        input_price=0.4,
        output_price=1.6,
        cached_input_price=0.1,
    ),
    _openai(
        "gpt-4.1-nano",
        window=1_047_576,
        output=32_768,
        input_price=0.1,
        output_price=0.4,
        cached_input_price=0.025,
    ),
    _openai(
        "gpt-4o",
        window=128_000,
        output=16_384,
        input_price=2.5,
        output_price=10.0,
        cached_input_price=1.25,
    ),
    _openai(
        "gpt-4o-mini",
        window=128_000,
        output=16_384,
        input_price=0.15,
        output_price=0.6,
        cached_input_price=0.075,
    ),
    _openai(
        "o3",
        window=200_000,
        output=100_000,
        input_price=2.0,
        output_price=8.0,
        cached_input_price=0.5,
        reasoning=True,
    ),
    _openai(
        "o4-mini",
        window=200_000,
        output=100_000,
        input_price=1.1,
        output_price=4.4,
        cached_input_price=0.275,
        reasoning=True,
    ),
)

#: Known models by ``provider/model`` reference.
CATALOG: Mapping[str, ModelInfo] = MappingProxyType({info.ref: info for info in _MODELS})

# Same model under another name: a dated snapshot ("claude-sonnet-4-5-20250929",
# "gpt-4.1-2025-04-14") or Anthropic's "-0" short form ("claude-sonnet-4" = "claude-sonnet-4-0").
_DATED = re.compile(r"^(?P<base>.+?)-(?:\d{8}|\d{4}-\d{2}-\d{2})$")


def _candidates(model: str) -> list[str]:
    names = [model]
    match = _DATED.match(model)
    if match:
        names.append(match.group("base"))
    for name in list(names):
        if name.endswith("-latest"):
            names.append(name.removesuffix("-latest"))
    names.extend([f"{name}-0" for name in names])
    return names


def lookup(catalog_provider: str, model: str) -> ModelInfo | None:
    """The catalog entry for ``catalog_provider/model`` (dated snapshots included), or None.

    The entry keeps the catalog's provider name; callers rename it with ``attrs.evolve``.
    """
    for name in _candidates(model):
        info = CATALOG.get(f"{catalog_provider}/{name}")
        if info is not None:
            return info
    return None
