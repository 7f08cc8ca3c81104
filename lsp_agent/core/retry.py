"""The one retry policy for model calls: which errors, how many times, how long to wait.

Only failures before the first streamed event are retried here (a request that never
started can be re-sent as is); a response that breaks off later is sent once more by the
loop. A response that stops sending for ``stream_idle_timeout`` seconds has failed too.
The wait honours ``retry-after`` hints, capped, and otherwise backs off exponentially with
jitter so that many clients do not retry in step.
"""

from __future__ import annotations

import random
from collections.abc import Callable

import attrs

from lsp_agent.core.errors import ProviderError

MAX_HINTED_DELAY = 60.0

STREAM_IDLE_TIMEOUT = 300.0
"""Seconds a response may go without progress before it counts as stalled. Generous: a
reasoning model can think for minutes before its first streamed token."""


@attrs.frozen(kw_only=True)
class RetryPolicy:
    max_retries: int = 2
    initial_delay: float = 1.0
    max_delay: float = 30.0
    jitter: float = 0.2
    rng: Callable[[], float] = random.random
    stream_idle_timeout: float = STREAM_IDLE_TIMEOUT
    """The longest wait for the response's next event (its first included); then it stalled."""

    def should_retry(self, error: ProviderError, attempt: int) -> bool:
        """``attempt`` counts retries already made (0 before the first retry)."""
        return error.retryable and attempt < self.max_retries

    def delay(self, error: ProviderError, attempt: int) -> float:
        """Seconds to wait before retry number ``attempt + 1``."""
        if error.retry_after is not None and error.retry_after >= 0:
            return min(error.retry_after, MAX_HINTED_DELAY)
        base = min(self.initial_delay * (1 << attempt), self.max_delay)
        spread: float = 1.0 + self.jitter * (2 * self.rng() - 1)
        return base * spread
