"""A small MCP server for the tests, on the official ``mcp`` package's server API (2.x).

Its tools: ``echo`` (returns its text; the only one marked ``readOnlyHint``), ``env`` (the
environment the server process was started with, one ``NAME=value`` per line), ``fail`` (an
``isError`` result), ``sleep`` (a call that hangs), ``headers`` (the HTTP headers of the call)
and ``grow`` (adds the tool ``late``), so a test sees what the agent passes to a server and
what comes back. It writes ``STDERR_MARKER`` to its stderr at start and on every
call: that must reach the log, never the model.

Run it as a script, by file path, so it needs nothing from the agent's environment but the
interpreter::

    python tests/support/mcp_servers.py stdio [--pid-file FILE]
    python tests/support/mcp_servers.py http --port N [--pid-file FILE]
    python tests/support/mcp_servers.py sse --port N [--pid-file FILE]

``--pid-file`` gets the process id once the server is up (a restarted server overwrites it).
``http`` serves streamable HTTP on ``http://127.0.0.1:N/mcp``, ``sse`` the legacy SSE transport
on ``http://127.0.0.1:N/sse``; ``start_http_server`` starts one as a subprocess for a test and
waits until it accepts connections.
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any, Literal

import anyio
from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.types import ToolAnnotations

SCRIPT = Path(__file__).resolve()
TOOL_NAMES = ("echo", "env", "fail", "sleep", "headers", "grow")
LATE_TOOL = "late"
"""The tool ``grow`` adds (then it tells the client, ``notifications/tools/list_changed``)."""
STDERR_MARKER = "probe-server-stderr-7d21"
FAILURE = "the probe failed on purpose"
MISSING_COMMAND = "no-such-mcp-server-7f3a"
"""A command no machine has: a server that cannot start."""


def build_server() -> MCPServer[Any]:
    """The server with ``echo`` and ``env``."""
    server: MCPServer[Any] = MCPServer("lsp-agent-test-probe", log_level="WARNING")

    @server.tool(
        description="Return the given text unchanged.",
        annotations=ToolAnnotations(read_only_hint=True),
        structured_output=False,
    )
    def echo(text: str) -> str:
        _say_on_stderr()
        return text

    @server.tool(
        description="The server process's environment, one NAME=value per line.",
        structured_output=False,
    )
    def env() -> str:
        _say_on_stderr()
        return "\n".join(f"{name}={value}" for name, value in sorted(os.environ.items()))

    @server.tool(description="Always fails.", structured_output=False)
    def fail() -> str:
        _say_on_stderr()
        raise ToolError(FAILURE)  # deliberate: the client gets the text, isError set

    @server.tool(description="Sleep for the given seconds, then answer.", structured_output=False)
    async def sleep(seconds: float) -> str:
        _say_on_stderr()
        await anyio.sleep(seconds)
        return f"slept {seconds} s"

    @server.tool(
        description="The HTTP headers of this call, one 'name: value' per line (none on stdio).",
        structured_output=False,
    )
    def headers(ctx: Context) -> str:
        _say_on_stderr()
        got = ctx.headers or {}
        return "\n".join(f"{name.lower()}: {value}" for name, value in sorted(got.items()))

    @server.tool(description=f"Add the tool '{LATE_TOOL}'.", structured_output=False)
    async def grow(ctx: Context) -> str:
        _say_on_stderr()

        def late() -> str:
            return "the late tool answered"

        if LATE_TOOL not in {tool.name for tool in await server.list_tools()}:
            server.add_tool(late, name=LATE_TOOL, description="Added at run time.")
        await ctx.session.send_tool_list_changed()
        return f"added {LATE_TOOL}"

    return server


def _say_on_stderr() -> None:
    print(STDERR_MARKER, file=sys.stderr, flush=True)


def stdio_command(pid_file: Path | None = None) -> list[str]:
    """The ``command`` of a local (stdio) server entry in the agent's config."""
    command = [sys.executable, str(SCRIPT), "stdio"]
    return [*command, "--pid-file", str(pid_file)] if pid_file else command


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def start_http_server(
    pid_file: Path | None = None,
    *,
    transport: Literal["http", "sse"] = "http",
    timeout: float = 30.0,
) -> Iterator[str]:
    """A streamable-HTTP (or legacy SSE) server in a subprocess on a free loopback port; yields
    its URL (``http://127.0.0.1:PORT/mcp``, ``…/sse``) and stops the process on exit."""
    port = free_port()
    command = [sys.executable, str(SCRIPT), transport, "--port", str(port)]
    if pid_file:
        command += ["--pid-file", str(pid_file)]
    process = subprocess.Popen(command, stdin=subprocess.DEVNULL)
    try:
        _wait_until_listening(port, process, timeout)
        yield f"http://127.0.0.1:{port}/{'mcp' if transport == 'http' else 'sse'}"
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(10)


def _wait_until_listening(port: int, process: subprocess.Popen[bytes], timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the MCP HTTP server exited with {process.returncode}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.1)
    raise TimeoutError(f"the MCP HTTP server did not listen on port {port} in {timeout} s")


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("transport", choices=["stdio", "http", "sse"])
    parser.add_argument("--port", type=int, default=0)
    parser.add_argument("--pid-file", type=Path)
    args = parser.parse_args(argv)
    server = build_server()
    _say_on_stderr()
    if args.pid_file:
        args.pid_file.write_text(str(os.getpid()))
    if args.transport == "stdio":
        server.run("stdio")
    elif args.transport == "http":
        server.run("streamable-http", host="127.0.0.1", port=args.port)
    else:
        server.run("sse", host="127.0.0.1", port=args.port)


if __name__ == "__main__":
    main()
