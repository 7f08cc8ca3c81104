"""The one place where errors become JSON-RPC error codes (protocol.md "Errors").

Handlers raise the core's errors (``SessionNotFound``, ``InvalidParams``, ``SessionBusy``,
``RevertBlocked``…, all in ``core/errors.py``); :func:`to_rpc_error` maps them. Anything
unexpected is ``-32603`` with a short message and is logged with its traceback — the server
itself keeps running.
"""

from __future__ import annotations

import logging

from pydantic import ValidationError
from pygls.exceptions import JsonRpcException

from lsp_agent.core.errors import (
    ConfigError,
    InvalidConfigValue,
    InvalidParams,
    LspAgentError,
    RevertBlocked,
    SessionBusy,
    SessionNotFound,
    validation_text,
)
from lsp_agent.lsp.protocol import ErrorCodes

_log = logging.getLogger(__name__)


class RpcError(JsonRpcException):
    """An error response with our code and message."""


def describe_validation_error(error: ValidationError) -> str:
    """``invalid params: sessionId: Field required; prompt.0.text: …`` — names every field."""
    return "invalid params: " + validation_text(
        error.errors(include_url=False), limit=5, root="params"
    )


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
