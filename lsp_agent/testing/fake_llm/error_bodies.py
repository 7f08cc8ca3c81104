"""HTTP errors the script asks for (presets or explicit), as each wire format writes them."""

from __future__ import annotations

import dataclasses
from typing import Any

from lsp_agent.testing.fake_llm.records import Provider
from lsp_agent.testing.fake_llm.script import Turn


@dataclasses.dataclass(frozen=True)
class _ErrorInfo:
    status: int
    anthropic_type: str
    anthropic_message: str
    openai_type: str
    openai_message: str
    openai_code: str | None = None
    openai_param: str | None = None


_PRESETS: dict[str, _ErrorInfo] = {
    "context_overflow": _ErrorInfo(
        400,
        "invalid_request_error",
        "prompt is too long: 250000 tokens > 200000 maximum",
        "invalid_request_error",
        "This model's maximum context length is 128000 tokens. However, your messages "
        "resulted in 250000 tokens. Please reduce the length of the messages.",
        "context_length_exceeded",
        "messages",
    ),
    "rate_limit": _ErrorInfo(
        429,
        "rate_limit_error",
        "This request would exceed the rate limit for your organization. Please try again later.",
        "requests",
        "Rate limit reached for requests. Please try again later.",
        "rate_limit_exceeded",
    ),
    "overloaded": _ErrorInfo(
        529,
        "overloaded_error",
        "Overloaded",
        "server_error",
        "The server is overloaded or not ready yet.",
    ),
    "auth": _ErrorInfo(
        401,
        "authentication_error",
        "invalid x-api-key",
        "invalid_request_error",
        "Incorrect API key provided.",
        "invalid_api_key",
    ),
    "server_error": _ErrorInfo(
        500,
        "api_error",
        "Internal server error",
        "server_error",
        "The server had an error while processing your request.",
    ),
    "invalid_request": _ErrorInfo(
        400,
        "invalid_request_error",
        "Invalid request",
        "invalid_request_error",
        "Invalid request",
    ),
}

_ANTHROPIC_TYPE_BY_STATUS = {
    400: "invalid_request_error",
    401: "authentication_error",
    402: "billing_error",
    403: "permission_error",
    404: "not_found_error",
    413: "request_too_large",
    429: "rate_limit_error",
    500: "api_error",
    504: "timeout_error",
    529: "overloaded_error",
}
_OPENAI_BY_STATUS: dict[int, tuple[str, str | None]] = {
    400: ("invalid_request_error", None),
    401: ("invalid_request_error", "invalid_api_key"),
    403: ("invalid_request_error", None),
    404: ("invalid_request_error", "model_not_found"),
    429: ("requests", "rate_limit_exceeded"),
}


def resolve_error(turn: Turn) -> _ErrorInfo:
    if turn.error is not None:
        base = _PRESETS[turn.error]
    else:
        status = turn.status if turn.status is not None else 500
        a_type = _ANTHROPIC_TYPE_BY_STATUS.get(
            status, "api_error" if status >= 500 else "invalid_request_error"
        )
        o_type, o_code = _OPENAI_BY_STATUS.get(
            status, ("server_error" if status >= 500 else "invalid_request_error", None)
        )
        message = f"fake error {status}"
        base = _ErrorInfo(status, a_type, message, o_type, message, o_code)
    return dataclasses.replace(
        base,
        status=turn.status if turn.status is not None else base.status,
        anthropic_type=turn.error_type or base.anthropic_type,
        openai_type=turn.error_type or base.openai_type,
        anthropic_message=turn.error_message or base.anthropic_message,
        openai_message=turn.error_message or base.openai_message,
        openai_code=turn.error_code if turn.error_code is not None else base.openai_code,
    )


def error_body(provider: Provider | None, info: _ErrorInfo, request_id: str) -> dict[str, Any]:
    if provider == "openai":
        return {
            "error": {
                "message": info.openai_message,
                "type": info.openai_type,
                "param": info.openai_param,
                "code": info.openai_code,
            }
        }
    return {
        "type": "error",
        "error": {"type": info.anthropic_type, "message": info.anthropic_message},
        "request_id": request_id,
    }


def simple_error(status: int, message: str, anthropic_type: str | None = None) -> _ErrorInfo:
    a_type = anthropic_type or _ANTHROPIC_TYPE_BY_STATUS.get(
        status, "api_error" if status >= 500 else "invalid_request_error"
    )
    o_type = "server_error" if status >= 500 else "invalid_request_error"
    return _ErrorInfo(status, a_type, message, o_type, message)
