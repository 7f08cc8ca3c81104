"""The production clock and id factory (tests inject fakes from ``lsp_agent.testing``)."""

from __future__ import annotations

import asyncio
import os
import time
from datetime import UTC, datetime

_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"


class SystemClock:
    def now(self) -> float:
        return time.time()

    def monotonic(self) -> float:
        return time.monotonic()

    async def sleep(self, seconds: float) -> None:
        await asyncio.sleep(seconds)


def iso_time(epoch_seconds: float) -> str:
    """ISO 8601 UTC with milliseconds, e.g. ``2026-11-30T10:44:49.123Z``."""
    moment = datetime.fromtimestamp(epoch_seconds, tz=UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


class UlidIds:
    """Sortable ids: 48-bit millisecond time + 80 random bits, Crockford base32 (ULID layout).

    Ids made within one millisecond by one factory stay sorted: the random part is bumped.
    """

    def __init__(self, clock: SystemClock | None = None) -> None:
        self._clock = clock or SystemClock()
        self._last_ms = -1
        self._last_rand = 0

    def new(self, prefix: str) -> str:
        ms = int(self._clock.now() * 1000)
        if ms <= self._last_ms:
            ms = self._last_ms
            rand = self._last_rand + 1
        else:
            rand = int.from_bytes(os.urandom(10), "big") >> 1
        self._last_ms, self._last_rand = ms, rand
        value = (ms << 80) | (rand & ((1 << 80) - 1))
        chars = []
        for _ in range(26):
            chars.append(_CROCKFORD[value & 31])
            value >>= 5
        return f"{prefix}_{''.join(reversed(chars))}"
