"""HTTP/1.1 on asyncio streams, as little as the fake server needs: a request read with its
limits, a response head, chunked bodies."""

from __future__ import annotations

import asyncio
import dataclasses
import http
import json
import time
from collections.abc import Sequence
from typing import Any

DEFAULT_REQUEST_TIMEOUT = 30.0
DEFAULT_MAX_BODY_BYTES = 64 * 1024 * 1024
MAX_HEAD_BYTES = 64 * 1024


class HttpError(Exception):
    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


@dataclasses.dataclass(frozen=True)
class Request:
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: bytes
    connection: int
    arrived_monotonic: float
    arrived_wall: float
    version: str = "HTTP/1.1"

    @property
    def wants_close(self) -> bool:
        connection = self.headers.get("connection", "").lower()
        if self.version == "HTTP/1.0":
            return "keep-alive" not in connection
        return "close" in connection


async def read_request(
    reader: asyncio.StreamReader, max_body: int, connection: int
) -> Request | None:
    try:
        head = await reader.readuntil(b"\r\n\r\n")
    except asyncio.IncompleteReadError as err:
        if not err.partial.strip():
            return None
        raise HttpError(400, "truncated request head") from None
    except asyncio.LimitOverrunError:
        raise HttpError(431, "request head too large") from None
    arrived_monotonic, arrived_wall = time.monotonic(), time.time()
    lines = head.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[2].startswith("HTTP/1."):
        raise HttpError(400, f"bad request line: {lines[0][:200]!r}")
    method, target, version = parts
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, sep, value = line.partition(":")
        if not sep:
            raise HttpError(400, f"bad header line: {line[:200]!r}")
        key = name.strip().lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    if "chunked" in headers.get("transfer-encoding", "").lower():
        raise HttpError(501, "chunked request bodies are not supported")
    try:
        length = int(headers.get("content-length", "0"))
    except ValueError:
        raise HttpError(400, "bad content-length") from None
    if length < 0:
        raise HttpError(400, "bad content-length")
    if length > max_body:
        raise HttpError(413, f"request body of {length} bytes exceeds {max_body}")
    body = await reader.readexactly(length) if length else b""
    path, _, query = target.partition("?")
    return Request(
        method, path, query, headers, body, connection, arrived_monotonic, arrived_wall, version
    )


_EXTRA_REASONS = {529: "Overloaded"}


def _reason(status: int) -> str:
    try:
        return http.HTTPStatus(status).phrase
    except ValueError:
        return _EXTRA_REASONS.get(status, "Error")


def response_head(status: int, headers: Sequence[tuple[str, str]]) -> bytes:
    lines = [f"HTTP/1.1 {status} {_reason(status)}"]
    lines.extend(f"{k}: {v}" for k, v in headers)
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def chunk_frame(data: bytes) -> bytes:
    return b"%x\r\n%s\r\n" % (len(data), data)


LAST_CHUNK = b"0\r\n\r\n"


async def send_json(
    writer: asyncio.StreamWriter,
    status: int,
    payload: Any,
    *,
    close: bool = False,
    extra_headers: Sequence[tuple[str, str]] = (),
) -> None:
    """A whole JSON response, its length known."""
    data = json.dumps(payload, ensure_ascii=False).encode()
    headers = [
        ("content-type", "application/json"),
        ("content-length", str(len(data))),
        ("connection", "close" if close else "keep-alive"),
        *extra_headers,
    ]
    writer.write(response_head(status, headers) + data)
    await writer.drain()
