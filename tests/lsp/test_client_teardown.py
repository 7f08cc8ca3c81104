"""The test client always reaps its server, even after a fatal protocol error (which makes
pytest-lsp skip the shutdown): an unreaped server outlives its test and fails a later one
with ``ResourceWarning: subprocess … is still running``."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path

from tests.support.lsp_client import agent_client

# Answers `initialize`, then sends a body that is not JSON-RPC (a fatal client error), ignores
# SIGTERM and stays until its input ends, as a stuck server would.
BROKEN_SERVER = r"""
import json, signal, sys
signal.signal(signal.SIGTERM, signal.SIG_IGN)
def send(data):
    sys.stdout.buffer.write(b"Content-Length: %d\r\n\r\n%s" % (len(data), data))
    sys.stdout.buffer.flush()
length = 0
while (line := sys.stdin.buffer.readline().strip()):
    if line.lower().startswith(b"content-length:"):
        length = int(line.split(b":")[1])
request = json.loads(sys.stdin.buffer.read(length))
send(json.dumps({"jsonrpc": "2.0", "id": request["id"], "result": {"capabilities": {}}}).encode())
send(b'{"jsonrpc": "2.0", "method": 42}')
while sys.stdin.buffer.read(65536):
    pass
"""


async def test_a_server_left_broken_is_still_reaped(tmp_path: Path) -> None:
    async with agent_client(
        env={}, folders=[tmp_path], server_command=[sys.executable, "-c", BROKEN_SERVER]
    ) as client:
        deadline = time.monotonic() + 60
        while client.client.error is None:
            assert time.monotonic() < deadline, "the malformed message was never reported"
            await asyncio.sleep(0.02)
        process = client.client._server
        assert process is not None
    assert process.returncode is not None
