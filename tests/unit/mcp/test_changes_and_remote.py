"""MCP calls always ask the gate, ``tools/list_changed``, and the remote transports
(streamable HTTP; legacy SSE as the fallback) against real servers on the ``mcp`` package."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager

from lsp_agent.config.settings import McpLocalServer, McpRemoteServer
from lsp_agent.mcp.manager import McpManager
from lsp_agent.testing.permissions import RecordingAsk
from lsp_agent.testing.tools import call_context
from tests.support.mcp_changing_server import command, sse_command
from tests.support.mcp_servers import free_port, start_http_server


async def _started(manager: McpManager) -> McpManager:
    manager.start()
    await manager.settled()
    return manager


async def test_every_call_asks_the_gate_whatever_the_server_says(
    tmp_path: os.PathLike[str],
) -> None:
    """A server's readOnlyHint only sets the tool's kind: the call still goes to the gate,
    with the literal ``<server>:<tool>`` as what "always" saves."""
    server = McpLocalServer(type="local", command=command(), read_only_tools=["look"])
    manager = await _started(McpManager({"ch": server}, env=dict(os.environ)))
    try:
        look = next(spec for spec in manager.specs() if spec.name == "ch_look")
        assert (look.kind, look.mutates) == ("read", False)
        for name, pattern in (("ch_look", "ch:look"), ("ch_grow", "ch:grow")):
            ask = RecordingAsk()
            outcome = await manager.call(name, {}, call_context(tmp_path, ask=ask))
            assert outcome is not None
            (request,) = ask.requests
            assert (request.permission, request.patterns, request.always) == (
                "mcp",
                (pattern,),
                (pattern,),
            )
    finally:
        await manager.aclose()


async def test_a_changed_tool_list_changes_the_offered_tools(tmp_path: os.PathLike[str]) -> None:
    server = McpLocalServer(type="local", command=command())
    manager = await _started(McpManager({"ch": server}, env=dict(os.environ)))
    try:
        before = manager.specs()
        assert [spec.name for spec in before] == ["ch_look", "ch_grow"]
        assert manager.specs() is before
        await manager.call("ch_grow", {}, call_context(tmp_path, ask=RecordingAsk()))
        for _ in range(100):
            if manager.specs() is not before:
                break
            await asyncio.sleep(0.05)
        assert [spec.name for spec in manager.specs()] == ["ch_look", "ch_grow", "ch_extra"]
        extra = await manager.call("ch_extra", {}, call_context(tmp_path, ask=RecordingAsk()))
        assert extra is not None
        assert extra.output == "extra here"
    finally:
        await manager.aclose()


async def test_streamable_http_with_headers(tmp_path: os.PathLike[str]) -> None:
    with start_http_server() as url:
        server = McpRemoteServer(
            type="remote", url=url, headers={"X-Probe": "{env:PROBE}"}, timeout_ms=20_000
        )
        manager = await _started(McpManager({"web": server}, env={"PROBE": "p"}))
        try:
            assert manager.notices() == ()
            outcome = await manager.call(
                "web_echo", {"text": "over http"}, call_context(tmp_path, ask=RecordingAsk())
            )
            assert outcome is not None
            assert (outcome.output, outcome.is_error) == ("over http", False)
        finally:
            await manager.aclose()


@contextmanager
def _sse_server() -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(sse_command(port), stdin=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    break
            except OSError:
                time.sleep(0.1)
        yield f"http://127.0.0.1:{port}/sse"
    finally:
        process.terminate()
        process.wait(10)


async def test_a_legacy_sse_server_is_reached_through_the_fallback(
    tmp_path: os.PathLike[str],
) -> None:
    with _sse_server() as url:
        server = McpRemoteServer(type="remote", url=url, timeout_ms=20_000)
        manager = await _started(McpManager({"old": server}, env={}))
        try:
            assert manager.notices() == ()
            outcome = await manager.call("old_look", {}, call_context(tmp_path, ask=RecordingAsk()))
            assert outcome is not None
            assert outcome.output == "looked"
        finally:
            await manager.aclose()


async def test_an_unreachable_remote_server_is_a_status_line() -> None:
    server = McpRemoteServer(
        type="remote", url=f"http://127.0.0.1:{free_port()}/mcp", timeout_ms=3000
    )
    manager = await _started(McpManager({"gone": server}, env={}))
    try:
        (line,) = manager.notices()
        assert line.startswith('MCP server "gone" could not start: ')
    finally:
        await manager.aclose()
