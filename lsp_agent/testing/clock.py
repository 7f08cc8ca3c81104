"""A clock tests control, and ids that read well in assertions."""

from __future__ import annotations

import asyncio


class FakeClock:
    """Time stands still until a test (or a sleeping coroutine) moves it.

    ``sleep`` advances the clock by the requested amount at once and records it, so a
    retry backoff of 30 s costs a test nothing and can be asserted on.
    """

    def __init__(self, start: float = 1_800_000_000.0) -> None:
        self._now = start
        self._mono = 0.0
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def monotonic(self) -> float:
        return self._mono

    def advance(self, seconds: float) -> None:
        self._now += seconds
        self._mono += seconds

    async def sleep(self, seconds: float) -> None:
        self.sleeps.append(seconds)
        self.advance(seconds)
        await asyncio.sleep(0)


class SequentialIds:
    """``ses_0001``, ``msg_0002``, …: one counter across prefixes, so order is visible."""

    def __init__(self) -> None:
        self._n = 0

    def new(self, prefix: str) -> str:
        self._n += 1
        return f"{prefix}_{self._n:04d}"
