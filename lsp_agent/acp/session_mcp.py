"""The MCP servers an ACP client passes to ``session/new`` / ``load`` / ``resume``: started
for that session only, through the MCP client (``lsp_agent/mcp``), and offered only to its
turns.

They are one more ``ToolSource`` of the registry; the registry lists tools without naming a
session, so this source answers for the session whose prompt is running (``PROMPTING``) —
a subagent's turn runs inside its parent's and gets the parent's servers. The servers get a
clean environment (PATH, HOME, LANG and what the client names; the ``{env:VAR}`` references
of a config file expand to nothing here, so a client cannot pull the agent's keys into a
server), and their calls pass the permission gate like any MCP tool (key ``mcp``).
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any

from acp.schema import HttpMcpServer, McpServerStdio, SseMcpServer
from pydantic import ValidationError

from lsp_agent.acp.editor import PROMPTING
from lsp_agent.config.settings import McpLocalServer, McpRemoteServer
from lsp_agent.core.messages import ToolSpec
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome

if TYPE_CHECKING:
    from lsp_agent.mcp.manager import McpManager

_log = logging.getLogger(__name__)

ClientServer = Any
"""One entry of ``mcpServers`` as the SDK parsed it (stdio, http, sse or acp)."""
_INHERITED = ("PATH", "HOME", "LANG")


class InvalidServers(Exception):
    """An ``mcpServers`` entry lsp-agent cannot start (the message says which)."""


def server_configs(servers: Sequence[ClientServer]) -> dict[str, McpLocalServer | McpRemoteServer]:
    """The client's servers as our MCP configuration (``mcp.<name>``). Raises
    :class:`InvalidServers` for a repeated name or a transport we do not speak."""
    configs: dict[str, McpLocalServer | McpRemoteServer] = {}
    for server in servers:
        name = server.name
        if name in configs:
            raise InvalidServers(f"mcpServers: the name {name!r} is given twice")
        try:
            if isinstance(server, McpServerStdio):
                configs[name] = McpLocalServer(
                    type="local",
                    command=[server.command, *server.args],
                    environment={v.name: v.value for v in server.env},
                )
            elif isinstance(server, (HttpMcpServer, SseMcpServer)):
                configs[name] = McpRemoteServer(
                    type="remote", url=server.url, headers={h.name: h.value for h in server.headers}
                )
            else:
                raise InvalidServers(f"mcpServers: {name!r} uses a transport lsp-agent lacks")
        except ValidationError as error:
            raise InvalidServers(f"mcpServers: {name!r}: {error.errors()[0]['msg']}") from error
    return configs


class SessionServers:
    """Every open ACP session's own MCP servers, as one tool source."""

    def __init__(self, *, env: Mapping[str, str]) -> None:
        self._env = {name: env[name] for name in _INHERITED if name in env}
        self._managers: dict[str, McpManager] = {}

    async def start(
        self,
        session_id: str,
        servers: Sequence[ClientServer],
        *,
        reserved: Collection[str],
        avoid: Sequence[str] = (),
    ) -> None:
        """Start the session's servers in the background (replacing any it had); a program
        named without a folder is never taken from ``avoid`` (the session's folders)."""
        await self.stop(session_id)
        configs = server_configs(servers)
        if not configs:
            return
        from lsp_agent.mcp.manager import McpManager  # the SDK costs ~0.5 s to import

        manager = McpManager(configs, env=self._env, reserved_names=reserved, avoid=avoid)
        manager.start()
        self._managers[session_id] = manager

    async def settled(self, session_id: str) -> None:
        """Until the session's servers are up or have failed (their tools are offered)."""
        manager = self._managers.get(session_id)
        if manager is not None:
            await manager.settled()

    async def stop(self, session_id: str) -> None:
        manager = self._managers.pop(session_id, None)
        if manager is not None:
            await manager.aclose()

    async def aclose(self) -> None:
        for session_id in list(self._managers):
            await self.stop(session_id)

    def notices(self, session_id: str) -> tuple[str, ...]:
        manager = self._managers.get(session_id)
        return manager.notices() if manager is not None else ()

    # -- ToolSource ------------------------------------------------------------------------

    def specs(self) -> tuple[ToolSpec, ...]:
        manager = self._managers.get(PROMPTING.get())
        return manager.specs() if manager is not None else ()

    async def call(
        self, name: str, arguments: Mapping[str, Any], ctx: ToolCallContext
    ) -> ToolOutcome | None:
        manager = self._managers.get(PROMPTING.get())
        if manager is None:
            return None
        return await manager.call(name, arguments, ctx)
