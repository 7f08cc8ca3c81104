"""Errors a person reads. (Errors the model reads are tool results, never exceptions.)

LspAgentError
├── ConfigError            an invalid config file or flag; names the file and key
├── SessionNotFound        an unknown session id
├── InvalidConfigValue     a session option (mode, model) set to something not offered
└── ProviderError          a model call failed; ``kind`` says how
    └── ContextOverflow    the request no longer fits the model's context window
"""

from __future__ import annotations

from typing import Literal

ProviderErrorKind = Literal[
    "auth",  # 401/403: a missing or wrong key; never retried
    "rate_limit",  # 429
    "overloaded",  # 529 or an overloaded_error event
    "server",  # 500/502/503/504
    "connection",  # no response at all (refused, reset, timed out before the first byte)
    "context_overflow",  # the prompt is too long for the model
    "bad_request",  # any other 4xx
    "stream_dropped",  # the response stream broke after it had started
    "other",
]

RETRYABLE_KINDS: frozenset[ProviderErrorKind] = frozenset(
    {"rate_limit", "overloaded", "server", "connection"}
)


class LspAgentError(Exception):
    """Root of every error lsp-agent raises on purpose."""


class ConfigError(LspAgentError):
    """An invalid configuration: the message names the file and the key."""


class SessionNotFound(LspAgentError):
    def __init__(self, session_id: str) -> None:
        super().__init__(f"no session with id {session_id!r}")
        self.session_id = session_id


class InvalidConfigValue(LspAgentError):
    """A session configuration option that cannot be set: an unknown ``configId``, or a value
    that is not offered (an unknown mode, a model that is unknown or unusable).

    The message names the problem and what is expected; adapters show it as is.
    """


class ProviderError(LspAgentError):
    """A model call failed. Raised by providers, classified once, retried in one place."""

    def __init__(
        self,
        message: str,
        *,
        kind: ProviderErrorKind,
        status: int | None = None,
        retry_after: float | None = None,
        provider: str | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: ProviderErrorKind = kind
        self.status = status
        #: seconds the server asked us to wait (retry-after / retry-after-ms), if it said
        self.retry_after = retry_after
        self.provider = provider

    @property
    def retryable(self) -> bool:
        return self.kind in RETRYABLE_KINDS


class ContextOverflow(ProviderError):
    def __init__(self, message: str, *, status: int | None = 400, provider: str | None = None):
        super().__init__(message, kind="context_overflow", status=status, provider=provider)


class ContextUnavailable(LspAgentError):
    """The first baseline needs a source that cannot be read; the input stays queued."""


class RevertBlocked(LspAgentError):
    """A revert that cannot be done as asked."""
