"""Every configured server, their tools as the registry's ``ToolSource``, their status.

The tool list is rebuilt only when a server's tools change, and an unchanged rebuild keeps
the very same tuple: the tool block of the requests stays byte-identical (prompt caching).
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import Any

import attrs

from lsp_agent.config.settings import McpServerConfig
from lsp_agent.core.messages import ToolSpec
from lsp_agent.core.permission.rules import PermissionRequest, literal
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.mcp.connection import ServerConnection, Status
from lsp_agent.mcp.naming import tool_name
from lsp_agent.mcp.results import outcome_from_result
from lsp_agent.mcp.schema import SchemaRefused, repair_schema

__all__ = ["McpManager", "ServerStatus"]

_log = logging.getLogger(__name__)
_ASK_ARGUMENTS_CHARS = 2000


@attrs.frozen(kw_only=True)
class ServerStatus:
    name: str
    status: Status
    tools: tuple[str, ...]
    """The names offered to the model."""
    error: str | None = None

    @property
    def line(self) -> str | None:
        """The one line a front door shows for a server in trouble (else None)."""
        if self.status == "failed":
            return f'MCP server "{self.name}" could not start: {self.error}'
        if self.status == "crashed":
            return f'MCP server "{self.name}" {self.error}'
        return None


@attrs.frozen(kw_only=True)
class _Offered:
    connection: ServerConnection
    tool: str
    read_only: bool


class McpManager:
    """Starts every enabled server (:meth:`start`, in the background) and closes them all."""

    def __init__(
        self,
        servers: Mapping[str, McpServerConfig],
        *,
        env: Mapping[str, str],
        hidden_env: Collection[str] = (),
        reserved_names: Collection[str] = (),
        avoid: Sequence[str] = (),
    ) -> None:
        """``avoid``: the workspace folders, where a local server's program is never taken
        from."""
        self._reserved = frozenset(reserved_names)
        self._connections = tuple(
            ServerConnection(
                name,
                config,
                env=env,
                hidden_env=hidden_env,
                on_tools_changed=self._rebuild,
                on_trouble=self._trouble,
                avoid=avoid,
            )
            for name, config in servers.items()
        )
        self._specs: tuple[ToolSpec, ...] = ()
        self._offered: dict[str, _Offered] = {}
        self._skipped: set[tuple[str, str]] = set()
        self._watchers: list[Callable[[str], None]] = []

    def start(self) -> None:
        for connection in self._connections:
            connection.start()

    async def settled(self) -> None:
        """Until every enabled server is up or has failed, each bounded by its timeout."""
        await asyncio.gather(*(c.wait_ready() for c in self._connections))

    def specs(self) -> tuple[ToolSpec, ...]:
        return self._specs

    def statuses(self) -> tuple[ServerStatus, ...]:
        by_server: dict[str, list[str]] = {}
        for name, offered in self._offered.items():
            by_server.setdefault(offered.connection.name, []).append(name)
        return tuple(
            ServerStatus(
                name=c.name,
                status=c.status,
                tools=tuple(by_server.get(c.name, ())),
                error=c.error,
            )
            for c in self._connections
        )

    def notices(self) -> tuple[str, ...]:
        """One line per server in trouble now (the sessions are told each once)."""
        return tuple(line for s in self.statuses() if (line := s.line) is not None)

    def watch(self, show: Callable[[str], None]) -> None:
        """``show`` gets the status line of every server in trouble now, then one line each
        time a server fails to start or stops (``run`` prints them, ``serve`` logs them to
        the client)."""
        for line in self.notices():
            show(line)
        self._watchers.append(show)

    async def call(
        self, name: str, arguments: Mapping[str, Any], ctx: ToolCallContext
    ) -> ToolOutcome | None:
        """The outcome of the MCP tool ``name``, or None when no server offers it."""
        offered = self._offered.get(name)
        if offered is None:
            return None
        server, tool = offered.connection.name, offered.tool
        title = f"{server}:{tool}"
        # Every call asks the gate: the user's read_only_tools are rules there, and a
        # server's own readOnlyHint lets nothing run unasked (nor in plan mode).
        verdict = await ctx.ask(
            PermissionRequest(
                permission=PermissionKind.MCP,
                patterns=(title,),
                always=(literal(title),),  # a tool named get* covers no other tool
                title=_describe(server, tool, arguments, ()),
                description=_shown_arguments(arguments),
            )
        )
        if not verdict.allowed:
            return ToolOutcome(
                output=verdict.message, is_error=True, title=title, stop_turn=verdict.stop_turn
            )
        result = await offered.connection.call(tool, arguments)
        if isinstance(result, str):
            return ToolOutcome(output=result, is_error=True, title=title)
        return outcome_from_result(result, title=title)

    async def aclose(self) -> None:
        await asyncio.gather(*(c.aclose() for c in self._connections))

    def _trouble(self, connection: ServerConnection) -> None:
        line = ServerStatus(
            name=connection.name, status=connection.status, tools=(), error=connection.error
        ).line
        if line is None:
            return
        for show in self._watchers:
            try:
                show(line)
            except Exception:  # a front door's printing never takes a server down
                _log.exception("showing the status of the MCP server %r", connection.name)

    def _rebuild(self) -> None:
        taken = set(self._reserved)
        specs: list[ToolSpec] = []
        offered: dict[str, _Offered] = {}
        for connection in self._connections:
            for tool in connection.tools:
                try:
                    schema = repair_schema(tool.input_schema)
                except SchemaRefused as exc:
                    if (connection.name, tool.name) not in self._skipped:
                        self._skipped.add((connection.name, tool.name))
                        _log.warning(
                            "MCP server %r: tool %r is not offered: %s",
                            connection.name,
                            tool.name,
                            exc,
                        )
                    continue
                name = tool_name(connection.name, tool.name, taken)
                taken.add(name)
                annotations = tool.annotations
                read_only = annotations is not None and annotations.read_only_hint is True
                specs.append(
                    ToolSpec(
                        name=name,
                        description=tool.description
                        or f"{tool.name} (MCP server {connection.name})",
                        input_schema=schema,
                        kind="read" if read_only else "other",
                        mutates=not read_only,
                        permission=PermissionKind.MCP,
                        describe=functools.partial(_describe, connection.name, tool.name),
                    )
                )
                offered[name] = _Offered(connection=connection, tool=tool.name, read_only=read_only)
        self._offered = offered
        if tuple(specs) != self._specs:
            self._specs = tuple(specs)


def _describe(server: str, tool: str, arguments: Mapping[str, Any], roots: Sequence[str]) -> str:
    """An MCP call's title: which tool of which server (the arguments are the server's)."""
    return f"Run {tool} of the MCP server {server}"


def _shown_arguments(arguments: Mapping[str, Any]) -> str:
    text = json.dumps(dict(arguments), ensure_ascii=False, indent=2, default=str)
    if len(text) > _ASK_ARGUMENTS_CHARS:
        text = text[:_ASK_ARGUMENTS_CHARS] + "\n…"
    return text
