"""Errors a person reads. (Errors the model reads are tool results, never exceptions.)

Every error lsp-agent raises on purpose is an ``LspAgentError``. The front doors turn them
into their protocol's answers (``lsp/errors.py``, ``acp/errors.py``); the CLI prints the
message. The whole tree, wherever a class lives (``tests/unit/core/test_errors.py`` keeps it
complete):

LspAgentError
├── ConfigError             an invalid config file or flag; names the file and key
│   ├── InvalidConfig       a config layer that does not validate (config/settings.py)
│   └── ModelNotConfigured  no model given anywhere (config/settings.py)
├── InvalidConfigValue      a session option (mode, model) set to something not offered
├── InvalidParams           a request that does not fit its method; names the field
├── SessionNotFound         an unknown session id
├── SessionBusy             a session whose turn or exclusive operation is running
├── RevertBlocked           a revert that cannot be done as asked
├── ContextUnavailable      the first baseline needs a source that cannot be read
├── ProviderError           a model call failed; ``kind`` says how
│   └── ContextOverflow     the request no longer fits the model's context window
├── AgentUnavailable        the server could not build the agent (lsp/host.py)
├── AttachmentError         a ``run --file`` that cannot be attached (attachments.py)
├── ReviewFailedError       an agent review of changes that cannot run (lsp/code_review.py)
├── SearchQueryError        a session search that cannot be run (storage/search_index.py)
├── SnapshotError           a snapshot not recorded, compared or restored (snapshots/)
└── StorageError            the database cannot be used (storage/db.py)
    ├── DatabaseCorrupt     it fails ``PRAGMA quick_check`` or is not SQLite at all
    ├── DiskFull            a write failed for want of space, rolled back (storage/event_log.py)
    └── ProjectionError     an event the projections cannot apply (storage/projections.py)

Outside the tree, on purpose: ``FileError`` (workspace/files.py), ``HunkError`` and
``PatchFormatError`` (patch/) are raised below the tools and caught at the tool boundary,
where their text becomes the outcome the model reads; a person never gets them as errors.
Validation problems (pydantic's ``ValidationError``) become text in one place,
:func:`validation_text`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Literal

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


class InvalidParams(LspAgentError):
    """A request that does not fit its method or cannot be served as given (a wrong type, a
    value not offered, a bad uri, a cursor this server never gave out); the message names the
    field. Every front door answers it as its protocol's invalid params."""


class SessionBusy(LspAgentError):
    """A session that cannot take this request now: a turn is running, or another exclusive
    operation holds it (``doing`` says which)."""

    def __init__(self, session_id: str, doing: str) -> None:
        super().__init__(f"session {session_id} is busy ({doing}); try again when it is idle")
        self.session_id = session_id
        self.doing = doing


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


def validation_text(
    problems: Iterable[Mapping[str, Any]], *, limit: int | None = None, root: str = ""
) -> str:
    """Validation problems as one line, each named by its field path:
    ``sessionId: Field required; prompt.0.text: Input should be a valid string``.

    ``problems`` are pydantic's ``ValidationError.errors()`` (the core imports no pydantic);
    ``limit`` keeps the first few (a hostile request cannot make the answer huge); a problem
    of the whole object has no path and is named ``root``, or is its message alone.
    """
    named = []
    for index, problem in enumerate(problems):
        if limit is not None and index >= limit:
            break
        where = ".".join(str(part) for part in problem["loc"]) or root
        named.append(f"{where}: {problem['msg']}" if where else str(problem["msg"]))
    return "; ".join(named)
