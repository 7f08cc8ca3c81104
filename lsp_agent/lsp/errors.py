"""The one place where errors become JSON-RPC error codes (protocol.md "Errors").

Handlers raise the core's errors (``SessionNotFound``, ``RevertBlocked``…) or the ones below;
:func:`to_rpc_error` maps them. Anything unexpected is ``-32603`` with a short message and is
logged with its traceback — the server itself keeps running.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from lsp_agent.core.errors import (
    ConfigError,
    InvalidConfigValue,
    LspAgentError,
    RevertBlocked,
    SessionNotFound,
)
from lsp_agent.lsp.protocol import ErrorCodes

_log = logging.getLogger(__name__)


class InvalidParams(LspAgentError):
    """Params that do not fit the method (a wrong type, a value not offered, a bad uri)."""


class SessionBusy(LspAgentError):
    def __init__(self, session_id: str, doing: str) -> None:
        super().__init__(f"session {session_id} is busy ({doing}); try again when it is idle")
        self.session_id = session_id


class RpcError(JsonRpcException):
    """An error response with our code and message."""


def describe_validation_error(error: ValidationError) -> str:
    """``invalid params: sessionId: Field required; prompt.0.text: …`` — names every field."""
    problems = []
    for item in error.errors(include_url=False)[:5]:
        location = ".".join(str(part) for part in item["loc"]) or "params"
        problems.append(f"{location}: {item['msg']}")
    return "invalid params: " + "; ".join(problems)


def to_rpc_error(error: BaseException, method: str) -> RpcError:
    """The error response for ``error`` raised while handling ``method``."""
    if isinstance(error, RpcError):
        return error
    if isinstance(error, ValidationError):
        return RpcError(describe_validation_error(error), ErrorCodes.INVALID_PARAMS)
    if isinstance(error, (InvalidParams, InvalidConfigValue)):
        return RpcError(f"invalid params: {error}", ErrorCodes.INVALID_PARAMS)
    if isinstance(error, SessionNotFound):
        return RpcError(str(error), ErrorCodes.SESSION_NOT_FOUND, {"sessionId": error.session_id})
    if isinstance(error, SessionBusy):
        return RpcError(str(error), ErrorCodes.SESSION_BUSY, {"sessionId": error.session_id})
    if isinstance(error, RevertBlocked):
        return RpcError(str(error), ErrorCodes.REVERT_BLOCKED)
    if isinstance(error, ConfigError):
        return RpcError(f"configuration: {error}", -32603)
    if isinstance(error, LspAgentError):
        return RpcError(str(error), -32603)
    _log.error("unexpected error in %s", method, exc_info=error)
    return RpcError(f"internal error in {method}: {type(error).__name__}: {error}", -32603)
