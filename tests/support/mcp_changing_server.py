"""A stdio MCP server whose tool list changes, and whose one read-only tool says so.

``look`` carries ``readOnlyHint``; ``grow`` adds the tool ``extra`` and tells the client
(``notifications/tools/list_changed``). Run as a script, over stdio or, with ``sse PORT``,
over the legacy SSE transport only (``http://127.0.0.1:PORT/sse``)::

    python tests/support/mcp_changing_server.py [sse PORT]
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from mcp.server import MCPServer
from mcp.server.mcpserver import Context
from mcp.types import ToolAnnotations

SCRIPT = Path(__file__).resolve()


def build_server() -> MCPServer[Any]:
    server: MCPServer[Any] = MCPServer("lsp-agent-test-changing", log_level="WARNING")

    @server.tool(
        description="Look, change nothing.",
        annotations=ToolAnnotations(read_only_hint=True),
        structured_output=False,
    )
    def look() -> str:
        return "looked"

    def extra() -> str:
        return "extra here"

    @server.tool(description="Add the tool 'extra'.", structured_output=False)
    async def grow(ctx: Context[Any, Any]) -> str:
        server.add_tool(extra, description="Added later.", structured_output=False)
        await ctx.session.send_tool_list_changed()
        return "grown"

    return server


def command() -> list[str]:
    return [sys.executable, str(SCRIPT)]


def sse_command(port: int) -> list[str]:
    return [sys.executable, str(SCRIPT), "sse", str(port)]


if __name__ == "__main__":
    if sys.argv[1:2] == ["sse"]:
        build_server().run("sse", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        build_server().run("stdio")
