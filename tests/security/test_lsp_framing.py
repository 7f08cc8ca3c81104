"""Findings 8 and 9: no byte sequence on stdin kills ``lsp-agent serve`` or loses a message.

Each test drives the real ``lsp-agent serve`` process over stdio with raw bytes, then sends
a probe request (``agent/session/list`` before ``initialize``, answered ``-32002``): an
answer to the probe proves the server is alive and back in step with the stream.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.lsp.framing import MAX_MESSAGE_BYTES, BadHeader, Body, TooLarge, read_frames

ANSWER_TIMEOUT = 60.0
NOT_INITIALIZED = -32002


def frame(message: Any) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


def raw(body: bytes, length: int | None = None) -> bytes:
    size = len(body) if length is None else length
    return b"Content-Length: %d\r\n\r\n" % size + body


def probe(msg_id: int) -> bytes:
    return frame({"jsonrpc": "2.0", "id": msg_id, "method": "agent/session/list"})


class Server:
    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdin is not None
        assert process.stdout is not None
        self.stdin = process.stdin
        self.stdout = process.stdout

    async def send(self, data: bytes) -> None:
        self.stdin.write(data)
        await self.stdin.drain()

    async def answer(self) -> dict[str, Any]:
        return await asyncio.wait_for(self._read(), ANSWER_TIMEOUT)

    async def answers(self, count: int) -> list[dict[str, Any]]:
        return [await self.answer() for _ in range(count)]

    async def _read(self) -> dict[str, Any]:
        length = 0
        while True:
            line = await self.stdout.readline()
            if not line:
                raise AssertionError(f"the server exited (status {await self.process.wait()})")
            if line == b"\r\n":
                break
            match = re.match(rb"Content-Length: (\d+)", line)
            if match:
                length = int(match.group(1))
        message: dict[str, Any] = json.loads(await self.stdout.readexactly(length))
        return message


@pytest.fixture
async def server(tmp_path: Path, isolated_home: Path) -> AsyncIterator[Server]:
    env = {key: value for key, value in os.environ.items() if key in ("PATH", "PYTHONPATH")}
    env.update(
        HOME=str(isolated_home),
        XDG_CONFIG_HOME=os.environ["XDG_CONFIG_HOME"],
        LSP_AGENT_DATA_DIR=os.environ["LSP_AGENT_DATA_DIR"],
        ANTHROPIC_BASE_URL="http://127.0.0.1:9",
        ANTHROPIC_API_KEY="sk-framing-test",
        LSP_AGENT_MODEL="anthropic/claude-test",
    )
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "lsp_agent", "serve",
        cwd=tmp_path, env=env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        limit=1024 * 1024,
    )  # fmt: skip
    try:
        yield Server(process)
    finally:
        if process.returncode is None:
            process.kill()
        await process.wait()


def codes(answers: list[dict[str, Any]]) -> dict[Any, int]:
    """id → error code; JSON-RPC does not order answers, so tests compare these."""
    found = {a.get("id"): a.get("error", {}).get("code") for a in answers}
    assert len(found) == len(answers), answers  # one answer per id
    return found


def is_error(answer: dict[str, Any], msg_id: Any, code: int) -> bool:
    return bool(
        answer.get("id", "absent") == msg_id and answer.get("error", {}).get("code") == code
    )


# -- finding 8: the size cap ------------------------------------------------------------------


async def test_a_huge_content_length_is_answered_and_the_server_lives(server: Server) -> None:
    await server.send(b"Content-Length: 1000000000000000\r\n\r\n" + probe(1) + probe(2))
    answers = await server.answers(3)
    # The lie was noticed at the next header: both probes were read.
    assert codes(answers) == {None: -32600, 1: NOT_INITIALIZED, 2: NOT_INITIALIZED}
    assert "too large" in next(a for a in answers if a["id"] is None)["error"]["message"]


async def test_a_content_length_past_any_integer_is_too_large(server: Server) -> None:
    await server.send(b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n{}" + probe(3))
    assert codes(await server.answers(2)) == {None: -32600, 3: NOT_INITIALIZED}


async def test_a_real_body_over_the_limit_is_skipped_whole(server: Server) -> None:
    filler = "x" * (MAX_MESSAGE_BYTES + 1024)
    body = json.dumps({"jsonrpc": "2.0", "method": "x/notify", "params": {"text": filler}})
    await server.send(raw(body.encode()) + probe(4))
    assert codes(await server.answers(2)) == {None: -32600, 4: NOT_INITIALIZED}


async def test_an_endless_header_line_is_skipped(server: Server) -> None:
    await server.send(b"X-Junk: " + b"A" * 200_000 + b"\r\n\r\n" + probe(5))
    assert is_error(await server.answer(), 5, NOT_INITIALIZED)


# -- finding 9: parse errors, invalid requests, wrong lengths -------------------------------


NOT_JSON = {
    "invalid-utf8": b'{"jsonrpc": "2.0", "id": 1, "method": "\xff\xfe"}',
    "10000-deep-array": b"[" * 10_000 + b"]" * 10_000,
    "10000-deep-object": b'{"a":' * 10_000 + b"1" + b"}" * 10_000,
    "not-json": b"{oops",
    "empty": b"",
    "bom": b"\xef\xbb\xbf{}",
}

NOT_A_REQUEST: dict[str, Any] = {
    "id-true": {"jsonrpc": "2.0", "id": True, "method": "agent/session/list"},
    "id-null": {"jsonrpc": "2.0", "id": None, "method": "agent/session/list"},
    "id-float": {"jsonrpc": "2.0", "id": 1.5, "method": "initialize"},
    "id-object": {"jsonrpc": "2.0", "id": {"a": 1}, "method": "shutdown"},
    "id-array": {"jsonrpc": "2.0", "id": [1], "method": "x/y"},
    "method-number": {"jsonrpc": "2.0", "method": 5},
    "no-method-no-id": {"jsonrpc": "2.0"},
    "batch": [{"jsonrpc": "2.0", "id": 1, "method": "shutdown"}],
    "number": 42,
    "string": "hello",
}


async def each_answered(server: Server, cases: dict[str, bytes], code: int) -> None:
    """Every case, each followed by a probe, through one server: each gets ``code`` with
    ``id: null``, and its probe is answered too (answers may come in either order)."""
    for number, name in enumerate(cases, start=100):
        await server.send(cases[name] + probe(number))
        answers = await server.answers(2)
        assert codes(answers) == {None: code, number: NOT_INITIALIZED}, (name, answers)


async def test_a_body_that_is_not_json_gets_a_parse_error(server: Server) -> None:
    await each_answered(server, {name: raw(body) for name, body in NOT_JSON.items()}, -32700)


async def test_an_invalid_request_is_answered_with_id_null(server: Server) -> None:
    cases = {name: frame(message) for name, message in NOT_A_REQUEST.items()}
    await each_answered(server, cases, -32600)


async def test_a_too_long_content_length_loses_neither_message(server: Server) -> None:
    first = json.dumps({"jsonrpc": "2.0", "id": 8, "method": "agent/session/list"}).encode()
    await server.send(raw(first, length=len(first) + 500) + probe(9))
    assert codes(await server.answers(2)) == {8: NOT_INITIALIZED, 9: NOT_INITIALIZED}


async def test_a_too_short_content_length_loses_only_its_message(server: Server) -> None:
    first = json.dumps({"jsonrpc": "2.0", "id": 10, "method": "agent/session/list"}).encode()
    await server.send(raw(first, length=len(first) - 7) + probe(11))
    assert codes(await server.answers(2)) == {None: -32700, 11: NOT_INITIALIZED}


async def test_garbage_between_messages_is_skipped(server: Server) -> None:
    await server.send(b"hello there\r\n\r\nGET / HTTP/1.1\r\n" + probe(12) + b"\r\n" + probe(13))
    assert codes(await server.answers(2)) == {12: NOT_INITIALIZED, 13: NOT_INITIALIZED}


async def test_headers_in_any_case_and_order_are_read(server: Server) -> None:
    body = json.dumps({"jsonrpc": "2.0", "id": 14, "method": "agent/session/list"}).encode()
    header = b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\ncontent-length:%d\r\n\r\n"
    await server.send(header % len(body) + body)
    assert is_error(await server.answer(), 14, NOT_INITIALIZED)


async def test_a_stream_that_ends_mid_message_exits_cleanly(server: Server) -> None:
    await server.send(b'Content-Length: 100\r\n\r\n{"jsonrpc"')
    server.stdin.close()
    assert await asyncio.wait_for(server.process.wait(), ANSWER_TIMEOUT) == 0


# -- the frame reader alone -------------------------------------------------------------------


class Chunks:
    """A ``ByteSource`` handing out ``data`` a few bytes at a time."""

    def __init__(self, data: bytes, size: int) -> None:
        self._data = data
        self._size = size

    async def read_some(self, limit: int) -> bytes:
        piece, self._data = self._data[: min(limit, self._size)], self._data[self._size :]
        return piece


async def frames(data: bytes, size: int = 7, max_body: int = MAX_MESSAGE_BYTES) -> list[Any]:
    return [f async for f in read_frames(Chunks(data, size), max_body=max_body)]


@pytest.mark.parametrize("size", [1, 3, 64, 100_000])
async def test_frames_survive_any_split_of_the_stream(size: int) -> None:
    stream = (
        raw(b'{"a":1}')
        + b"Content-Length: 999999\r\n\r\n"
        + raw(b'{"b":2}')
        + b"junk\r\n\r\n"
        + raw(b'{"c":3}', length=3)
        + raw(b'{"d":4}')
    )
    got = await frames(stream, size=size, max_body=1000)
    bodies = [f.data for f in got if isinstance(f, Body)]
    assert bodies[0] == b'{"a":1}'
    assert b'{"b":2}' in bodies
    assert bodies[-1] == b'{"d":4}'
    assert any(isinstance(f, TooLarge) and f.length == 999999 for f in got)
    assert any(isinstance(f, BadHeader) for f in got)
