"""Bounded polling for tests: a hang becomes a failure, never an endless wait."""

from __future__ import annotations

import asyncio
from collections.abc import Callable


async def wait_until(predicate: Callable[[], object], timeout: float = 30.0) -> None:
    """Poll ``predicate`` (a process state, a file, what a client received) until it is
    true; fail after ``timeout`` seconds."""
    for _ in range(int(timeout / 0.05)):
        if predicate():
            return
        await asyncio.sleep(0.05)
    raise AssertionError("condition never became true")
