"""The hourly token cap (``completion.max_tokens_per_hour``): completion spends tokens on every
pause in typing, so it stops for the rest of the hour once the cap is reached."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable

HOUR = 3600.0


class TokenCap:
    """Tokens spent over the last hour against ``limit`` (0: no cap); ``now`` is the clock."""

    def __init__(self, limit: int, now: Callable[[], float]) -> None:
        self._limit = limit
        self._now = now
        self._spent: deque[tuple[float, int]] = deque()
        self._total = 0

    @property
    def limit(self) -> int:
        return self._limit

    def spent(self) -> int:
        """Tokens of the requests in the last hour."""
        self._forget_old()
        return self._total

    def allows(self) -> bool:
        return self._limit == 0 or self.spent() < self._limit

    def add(self, tokens: int) -> None:
        self._spent.append((self._now(), max(tokens, 0)))
        self._total += max(tokens, 0)

    def frees_at(self) -> float:
        """When enough of the spending has aged out of the hour for the next request."""
        self._forget_old()
        total = self._total
        for at, tokens in self._spent:
            total -= tokens
            if total < self._limit:
                return at + HOUR
        return self._now()

    def _forget_old(self) -> None:
        horizon = self._now() - HOUR
        while self._spent and self._spent[0][0] <= horizon:
            _, tokens = self._spent.popleft()
            self._total -= tokens
