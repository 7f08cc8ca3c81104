"""Newline-delimited JSON-RPC over stdio, for the SDK's ``Connection`` (a message transport).

The SDK's own stdio framing drops a line that is not JSON without an answer, and a line that
is JSON but not an object (or has an id that is not a string or number) stops its receive
loop. This transport answers both as JSON-RPC says — ``-32700`` Parse error, ``-32600``
Invalid Request, ``id: null`` when there is no usable id — and hands the connection only
well-formed messages, so the process stays up whatever a client sends. A line longer than
:data:`MAX_LINE_BYTES` is skipped and answered ``-32600``.

Writes are whole lines written synchronously before the first ``await``: a response is on
the wire before any notification a handler scheduled while making it (``host.py`` relies on
this to send ``available_commands_update`` after ``session/new``'s answer).
"""

from __future__ import annotations

import asyncio
import json
import logging
from typing import Any

_log = logging.getLogger(__name__)

MAX_LINE_BYTES = 64 * 1024 * 1024
"""Big enough for an image or a whole file in a prompt or a ``fs/read_text_file`` answer."""


class NdjsonStdio:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        if self._closed:
            raise ConnectionError("the connection is closed")
        line = json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n"
        self._writer.write(line.encode("utf-8", errors="surrogatepass"))
        try:
            await self._writer.drain()
        except (ConnectionError, BrokenPipeError) as error:
            self._closed = True
            raise ConnectionError("the client closed the connection") from error

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if line is None:
                return None
            message = await self._parse(line)
            if message is not None:
                return message

    async def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._writer.close()

    async def _read_line(self) -> bytes | None:
        """The next line; None at the end of input. An over-long line is answered and
        skipped (its bytes read and dropped)."""
        too_long = False
        while True:
            try:
                line = await self._reader.readuntil(b"\n")
            except asyncio.IncompleteReadError as error:
                if too_long or not error.partial.strip():
                    return None
                return error.partial
            except asyncio.LimitOverrunError as error:
                await self._reader.readexactly(error.consumed)
                too_long = True
                continue
            if too_long:
                await self._error(None, -32600, "Invalid Request: the message is too long")
                too_long = False
                continue
            if line.strip():
                return line

    async def _parse(self, line: bytes) -> dict[str, Any] | None:
        try:
            message = json.loads(line)
        except (ValueError, RecursionError) as error:
            await self._error(None, -32700, f"Parse error: {error}")
            return None
        if not isinstance(message, dict):
            await self._error(None, -32600, "Invalid Request: a message must be a JSON object")
            return None
        request_id = message.get("id")
        if "id" in message and (
            isinstance(request_id, bool) or not isinstance(request_id, (str, int, type(None)))
        ):
            await self._error(None, -32600, "Invalid Request: id must be a string or a number")
            return None
        if "method" in message:
            if not isinstance(message["method"], str):
                await self._error(request_id, -32600, "Invalid Request: method must be a string")
                return None
            return message
        if "id" in message and ("result" in message or "error" in message):
            return message  # an answer to one of our requests
        await self._error(request_id, -32600, "Invalid Request: no method")
        return None

    async def _error(self, request_id: Any, code: int, message: str) -> None:
        _log.warning("malformed input: %s", message)
        await self.send(
            {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}
        )


async def stdio_streams(limit: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """Non-blocking streams over this process's stdin and stdout."""
    import sys

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(
        asyncio.streams.FlowControlMixin, sys.stdout
    )
    writer = asyncio.StreamWriter(transport, protocol, reader, loop)
    return reader, writer
