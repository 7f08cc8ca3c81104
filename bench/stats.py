"""Summaries of repeated measurements: median, p95, max, and the spread the report shows."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence

import attrs


def percentile(values: Sequence[float], q: float) -> float:
    """The nearest-rank percentile (``q`` in 0..1) of a non-empty sample."""
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


@attrs.frozen(kw_only=True)
class Summary:
    """One figure over its samples; ``None`` fields when nothing was measured."""

    n: int
    median: float | None
    p95: float | None
    max: float | None
    min: float | None

    @classmethod
    def of(cls, values: Sequence[float]) -> Summary:
        if not values:
            return cls(n=0, median=None, p95=None, max=None, min=None)
        return cls(
            n=len(values),
            median=statistics.median(values),
            p95=percentile(values, 0.95),
            max=max(values),
            min=min(values),
        )

    def to_json(self) -> dict[str, float | int | None]:
        return attrs.asdict(self)
