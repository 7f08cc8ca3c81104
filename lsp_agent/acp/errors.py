"""The one place where errors become ACP JSON-RPC errors.

``-32602`` for params that do not validate (each field named) or values we cannot take,
``-32002`` (resource not found) for an unknown session, ``-32000`` (authentication required)
for a missing or rejected provider key — the message names the variable to set — and
``-32603`` for a configuration problem or anything unexpected, the message saying what.
"""

from __future__ import annotations

from acp.exceptions import RequestError
from pydantic import ValidationError

from lsp_agent.core.errors import (
    ConfigError,
    InvalidConfigValue,
    InvalidParams,
    LspAgentError,
    ProviderError,
    SessionBusy,
    SessionNotFound,
    validation_text,
)

SESSION_NOT_FOUND = -32002
AUTH_REQUIRED = -32000


def describe(error: ValidationError) -> str:
    return "Invalid params: " + validation_text(error.errors(), limit=5, root="params")


def to_request_error(error: BaseException) -> RequestError:
    if isinstance(error, RequestError):
        return error
    if isinstance(error, ValidationError):
        return RequestError(-32602, describe(error))
    if isinstance(error, (InvalidParams, InvalidConfigValue)):
        return RequestError(-32602, f"Invalid params: {error}")
    if isinstance(error, SessionNotFound):
        return RequestError(SESSION_NOT_FOUND, str(error), {"sessionId": error.session_id})
    if isinstance(error, SessionBusy):
        return RequestError(-32600, str(error))
    if isinstance(error, ProviderError) and error.kind == "auth":
        return RequestError(AUTH_REQUIRED, str(error))
    if isinstance(error, ConfigError):
        return RequestError(-32603, f"configuration: {error}")
    if isinstance(error, LspAgentError):
        return RequestError(-32603, str(error))
    return RequestError(-32603, f"internal error: {type(error).__name__}: {error}")
