from __future__ import annotations

import pytest

from lsp_agent.core.errors import ProviderError, ProviderErrorKind
from lsp_agent.core.retry import MAX_HINTED_DELAY, RetryPolicy


def error(kind: ProviderErrorKind, retry_after: float | None = None) -> ProviderError:
    return ProviderError("x", kind=kind, retry_after=retry_after)


@pytest.mark.parametrize(
    ("kind", "retryable"),
    [
        ("rate_limit", True),
        ("overloaded", True),
        ("server", True),
        ("connection", True),
        ("auth", False),
        ("bad_request", False),
        ("context_overflow", False),
        ("stream_dropped", False),
    ],
)
def test_which_errors_are_retried(kind: ProviderErrorKind, retryable: bool) -> None:
    assert RetryPolicy().should_retry(error(kind), 0) is retryable


def test_retries_stop_after_max_retries() -> None:
    policy = RetryPolicy(max_retries=2)
    assert policy.should_retry(error("server"), 1)
    assert not policy.should_retry(error("server"), 2)


def test_retry_after_is_honoured_and_capped() -> None:
    policy = RetryPolicy()
    assert policy.delay(error("rate_limit", retry_after=3.5), 0) == 3.5
    assert policy.delay(error("rate_limit", retry_after=3600), 0) == MAX_HINTED_DELAY


def test_backoff_is_exponential_with_bounded_jitter() -> None:
    low = RetryPolicy(initial_delay=1.0, jitter=0.2, rng=lambda: 0.0)
    high = RetryPolicy(initial_delay=1.0, jitter=0.2, rng=lambda: 1.0)
    assert low.delay(error("server"), 0) == pytest.approx(0.8)
    assert high.delay(error("server"), 0) == pytest.approx(1.2)
    assert low.delay(error("server"), 2) == pytest.approx(3.2)
    assert high.delay(error("server"), 10) == pytest.approx(36.0)  # capped at 30 s ± jitter
