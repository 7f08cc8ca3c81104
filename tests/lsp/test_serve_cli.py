"""``lsp-agent serve`` as a command: TCP transport, bad flags, a client that goes away."""

from __future__ import annotations

import asyncio
import json
import os
import re
import socket
import sys
from pathlib import Path
from typing import Any

from lsp_agent.testing.cli import run_cli


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


async def read_message(reader: asyncio.StreamReader) -> dict[str, Any]:
    length = 0
    while True:
        line = await reader.readline()
        if line in (b"\r\n", b""):
            break
        match = re.match(rb"Content-Length: (\d+)", line)
        if match:
            length = int(match.group(1))
    message: dict[str, Any] = json.loads(await reader.readexactly(length))
    return message


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
        return port


async def test_serve_over_tcp_answers_initialize(
    workspace: Path, server_env: dict[str, str]
) -> None:
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lsp_agent",
        "serve",
        "--tcp",
        f"127.0.0.1:{port}",
        env=server_env,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        for _ in range(200):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.05)
        else:
            raise AssertionError("the server never listened")
        writer.write(
            frame(
                {
                    "jsonrpc": "2.0",
                    "id": 1,
                    "method": "initialize",
                    "params": {
                        "processId": os.getpid(),
                        "rootUri": workspace.as_uri(),
                        "capabilities": {},
                        "initializationOptions": {"agent": {"protocolVersion": 1}},
                    },
                }
            )
        )
        await writer.drain()
        first = await asyncio.wait_for(read_message(reader), 30)
        assert first["id"] == 1
        assert first["result"]["capabilities"]["experimental"]["agent"]["protocolVersion"] == 1
        writer.write(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))
        writer.write(frame({"jsonrpc": "2.0", "id": 2, "method": "agent/session/list"}))
        await writer.drain()
        second = await asyncio.wait_for(read_message(reader), 30)
        assert second == {"jsonrpc": "2.0", "id": 2, "result": {"sessions": []}}
        writer.close()
        assert await asyncio.wait_for(process.wait(), 30) == 0  # its one client left
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def test_garbage_and_requests_before_initialize_are_answered(
    server_env: dict[str, str],
) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "lsp_agent",
        "serve",
        env=server_env,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    assert process.stdin is not None
    assert process.stdout is not None
    process.stdin.write(b"Content-Length: 5\r\n\r\n{oops")  # not JSON: -32700, id null
    process.stdin.write(frame({"jsonrpc": "2.0", "id": 7, "method": "agent/session/list"}))
    process.stdin.write(frame({"jsonrpc": "1.0", "id": 8, "method": "agent/session/list"}))
    process.stdin.write(
        frame({"jsonrpc": "2.0", "id": 9, "method": "agent/session/new", "params": [1]})
    )
    await process.stdin.drain()
    answers = {}
    for _ in range(4):
        message = await asyncio.wait_for(read_message(process.stdout), 30)
        answers[message["id"]] = message["error"]["code"]
    assert answers == {None: -32700, 7: -32002, 8: -32600, 9: -32602}
    process.stdin.close()
    assert await asyncio.wait_for(process.wait(), 30) == 0  # stdin closed → exit


def test_a_bad_tcp_address_is_a_usage_error(tmp_path: Path) -> None:
    result = run_cli("serve", "--tcp", "nowhere", cwd=tmp_path)
    assert result.returncode == 2
    assert "HOST:PORT" in result.stderr
