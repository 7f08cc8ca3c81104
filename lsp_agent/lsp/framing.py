"""Reading LSP's base protocol (``Content-Length`` headers, then a JSON body) from a byte
stream that may be hostile or simply wrong, without ever losing the stream.

pygls' own reader trusts the header: ``Content-Length: 1000000000000000`` makes it allocate
that much (``MemoryError``, the server dies), and a length that is off by a few bytes
swallows the next message too. This reader:

- caps a body at ``max_body`` bytes (:data:`MAX_MESSAGE_BYTES`); a larger one is reported
  as :class:`TooLarge` and skipped *as it streams by* (never held in memory);
- caps a header block at :data:`MAX_HEADER_BYTES`; anything that is not a header block is
  reported as :class:`BadHeader` and skipped up to the next ``Content-Length:``;
- resynchronises on a wrong length. A JSON body can never hold a header line (a raw CR LF
  is not allowed inside a JSON string, and ``Content-Length`` is not a JSON token), so a
  ``Content-Length: N`` CR LF seen before the announced end means the length was too long:
  the body ends there and the next message starts there. A length that was too short leaves
  the rest of the body where a header should be, which is skipped like any other garbage.

The reader only splits the stream; what a body means is the caller's business (decoding it
and answering ``-32700`` when it is not JSON is in ``server.py``).
"""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from typing import Protocol

import attrs

__all__ = [
    "MAX_HEADER_BYTES",
    "MAX_MESSAGE_BYTES",
    "BadHeader",
    "Body",
    "ByteSource",
    "Frame",
    "TooLarge",
    "read_frames",
]

MAX_MESSAGE_BYTES = 64 * 1024 * 1024
"""The largest body accepted (docs/protocol.md "Transport")."""
MAX_HEADER_BYTES = 8 * 1024
READ_CHUNK = 64 * 1024

_HEADER_LINE = re.compile(rb"content-length[ \t]*:[ \t]*(\d+)[ \t]*\r\n", re.IGNORECASE)
"""A ``Content-Length`` header line: where the next message starts when resynchronising."""
_HEADER_START = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_FIELD = re.compile(rb"([!#$%&'*+.^_`|~0-9A-Za-z-]+)[ \t]*:[ \t]*(.*?)[ \t]*")
_TAIL = 64
"""Bytes kept back while skipping, so a header line split across two reads is still seen."""
_MAX_DIGITS = 30


class ByteSource(Protocol):
    async def read_some(self, limit: int) -> bytes:
        """Up to ``limit`` bytes, at least one; ``b""`` at the end of the stream."""
        ...


@attrs.frozen
class Body:
    data: bytes
    resynced: bool = False
    """The announced length was wrong: the body was cut where the next header began."""


@attrs.frozen
class TooLarge:
    """A body longer than the limit was announced, and skipped."""

    length: int


@attrs.frozen
class BadHeader:
    """Bytes that are not a header block were skipped; ``sample`` shows how they began."""

    sample: bytes


Frame = Body | TooLarge | BadHeader


async def read_frames(
    source: ByteSource, *, max_body: int = MAX_MESSAGE_BYTES
) -> AsyncIterator[Frame]:
    """Every frame of ``source`` until it ends."""
    reader = _Reader(source, max_body)
    while True:
        frame = await reader.next()
        if frame is None:
            return
        yield frame


class _Reader:
    def __init__(self, source: ByteSource, max_body: int) -> None:
        self._source = source
        self._max_body = max_body
        self._buf = bytearray()
        self._eof = False

    async def _fill(self) -> bool:
        if self._eof:
            return False
        chunk = await self._source.read_some(READ_CHUNK)
        if not chunk:
            self._eof = True
            return False
        self._buf += chunk
        return True

    async def next(self) -> Frame | None:
        while True:
            while self._buf[:2] == b"\r\n":  # a stray line break between messages
                del self._buf[:2]
            end = self._buf.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buf) > MAX_HEADER_BYTES:
                    return self._skip_garbage()
                if not await self._fill():
                    return self._skip_garbage() if self._buf.strip() else None
                continue
            if end > MAX_HEADER_BYTES:
                return self._skip_garbage()
            length = _content_length(bytes(self._buf[:end]))
            if length is None:
                return self._skip_garbage()
            del self._buf[: end + 4]
            if length > self._max_body:
                await self._skip_body(length)
                return TooLarge(length)
            return await self._body(length)

    def _skip_garbage(self) -> BadHeader:
        """Drop bytes up to the next ``Content-Length:`` (past the first byte, so the
        reader always moves on)."""
        sample = bytes(self._buf[:80])
        found = _HEADER_START.search(self._buf, 1)
        if found is not None:
            del self._buf[: found.start()]
        else:
            del self._buf[: max(1, len(self._buf) - _TAIL)]
        return BadHeader(sample)

    async def _body(self, length: int) -> Body:
        scanned = 0  # each byte is searched about once, however many reads the body takes
        while True:
            found = _HEADER_LINE.search(self._buf, max(0, scanned - _TAIL), length + _TAIL)
            scanned = len(self._buf)
            if found is not None and found.start() < length:
                data = bytes(self._buf[: found.start()])
                del self._buf[: found.start()]
                return Body(data, resynced=True)
            if len(self._buf) >= length:
                data = bytes(self._buf[:length])
                del self._buf[:length]
                return Body(data)
            if not await self._fill():
                data = bytes(self._buf)
                self._buf.clear()
                return Body(data, resynced=True)  # the stream ended inside the body

    async def _skip_body(self, length: int) -> None:
        """Consume ``length`` bytes without keeping them, or stop at a header line."""
        left = length
        while True:
            found = _HEADER_LINE.search(self._buf)
            if found is not None and found.start() < left:
                del self._buf[: found.start()]
                return
            if len(self._buf) >= left:
                del self._buf[:left]
                return
            drop = len(self._buf) - _TAIL
            if drop > 0:
                del self._buf[:drop]
                left -= drop
            if not await self._fill():
                self._buf.clear()
                return


def _content_length(block: bytes) -> int | None:
    """The ``Content-Length`` of a header block, or None when it is not a header block."""
    length: int | None = None
    for line in block.split(b"\r\n"):
        field = _FIELD.fullmatch(line)
        if field is None:
            return None
        name, value = field.groups()
        if name.lower() == b"content-length":
            if not value.isdigit():
                return None
            # Thirty digits are far past any limit; more cannot even be converted.
            length = int(value) if len(value) <= _MAX_DIGITS else 10**_MAX_DIGITS
    return length
