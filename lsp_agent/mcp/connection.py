"""One configured server: started in a task of its own (the SDK's transports are context
managers that must be left in the task that entered them), its tools listed at start and on
``notifications/tools/list_changed``, each call bounded by the server's timeout.

A failure is kept as a status and an error text, never raised into the turn. A local server
runs in its own process group (the SDK starts it in a new session and kills the group at
close); its stderr is logged line by line.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import threading
from collections.abc import AsyncIterator, Callable, Collection, Mapping, Sequence
from typing import IO, Any, Literal

import mcp.types as types
from mcp.client.session import ClientSession, IncomingMessage
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.exceptions import MCPError
from mcp.types import CONNECTION_CLOSED

from lsp_agent.config.settings import McpLocalServer, McpRemoteServer, McpServerConfig
from lsp_agent.mcp.environment import expanded_headers, server_environment
from lsp_agent.system.programs import find_program, trusted_search_path

__all__ = ["ServerConnection", "Status", "describe_error"]

_log = logging.getLogger(__name__)
_CLOSE_TIMEOUT = 10.0

Status = Literal["disabled", "starting", "connected", "failed", "crashed"]


class ServerConnection:
    """A server's lifetime: :meth:`start`, calls, :meth:`aclose`."""

    def __init__(
        self,
        name: str,
        config: McpServerConfig,
        *,
        env: Mapping[str, str],
        hidden_env: Collection[str],
        on_tools_changed: Callable[[], None],
        on_trouble: Callable[[ServerConnection], None] = lambda _connection: None,
        avoid: Sequence[str] = (),
    ) -> None:
        """``avoid``: the workspace folders, where a server's program is never taken from."""
        self.name = name
        self.config = config
        self._env = env
        self._avoid = tuple(avoid)
        self._hidden = hidden_env
        self._on_tools_changed = on_tools_changed
        self._on_trouble = on_trouble
        self.status: Status = "starting" if config.enabled else "disabled"
        self.error: str | None = None
        self.tools: tuple[types.Tool, ...] = ()
        self._session: ClientSession | None = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._refreshes: set[asyncio.Task[None]] = set()
        self._transport_closed = False
        self._restarting = asyncio.Lock()

    @property
    def timeout(self) -> float:
        return self.config.timeout_ms / 1000

    def start(self) -> None:
        """Connect in the background; :meth:`wait_ready` waits for the outcome."""
        if not self.config.enabled:
            return
        self.status, self.error = "starting", None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._task = asyncio.create_task(self._serve(), name=f"mcp server {self.name}")

    async def wait_ready(self) -> None:
        """Until the server is connected or has failed (bounded by its timeout)."""
        if self._task is None:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._ready.wait(), self.timeout + 1)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> types.CallToolResult | str:
        """The result, or the error text the model reads.

        A crashed server is restarted once here, on the call after the crash."""
        async with self._restarting:  # concurrent calls restart it once
            if self.status == "crashed":
                _log.info("restarting the MCP server %r after it stopped", self.name)
                await self._halt()
                self.start()
        if self.status == "starting":
            await self.wait_ready()
        session = self._session
        if session is None or self.status != "connected":
            return self.unavailable()
        try:
            return await asyncio.wait_for(
                session.call_tool(tool, dict(arguments), read_timeout_seconds=self.timeout),
                self.timeout,
            )
        except TimeoutError:
            return f'The MCP server "{self.name}" did not answer within {self.timeout:g} s.'
        except Exception as exc:  # a broken connection, an MCP error, a malformed answer
            text = describe_error(exc)
            if self._gone() or _connection_lost(exc):
                self.status, self.error = "crashed", f"stopped: {text}"
                _log.info("the MCP server %r stopped: %s", self.name, text)
                self._on_trouble(self)
                return (
                    f'The MCP server "{self.name}" stopped ({text}); it will be restarted on '
                    "the next call."
                )
            return f'The MCP server "{self.name}" failed to run {tool}: {text}'

    def unavailable(self) -> str:
        if self.status == "disabled":
            return f'The MCP server "{self.name}" is disabled.'
        if self.status == "starting":
            return f'The MCP server "{self.name}" is still starting.'
        return f'The MCP server "{self.name}" is not available: {self.error or self.status}.'

    async def aclose(self) -> None:
        await self._halt()

    async def _halt(self) -> None:
        task, self._task = self._task, None
        for refresh in list(self._refreshes):
            refresh.cancel()
        if task is None:
            return
        self._stop.set()
        try:
            await asyncio.wait_for(asyncio.shield(task), _CLOSE_TIMEOUT)
        except (TimeoutError, asyncio.CancelledError):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        except Exception:
            _log.debug("closing the MCP server %r", self.name, exc_info=True)

    def _gone(self) -> bool:
        """Whether the connection is over (the task ended, or a local server exited)."""
        task = self._task
        return task is None or task.done() or self._stop.is_set() or self._transport_closed

    # -- the task that owns the connection ------------------------------------------------

    async def _serve(self) -> None:
        self._transport_closed = False
        try:
            async with self._connected() as session:
                self._session = session
                self.status, self.error = "connected", None
                self._ready.set()
                self._on_tools_changed()
                await self._stop.wait()
        except Exception as exc:
            text = describe_error(exc)
            if self.status == "connected":
                self.status, self.error = "crashed", f"stopped: {text}"
            else:
                self.status, self.error = "failed", text
                _log.info("MCP server %r could not start: %s", self.name, text)
            self._on_trouble(self)
        finally:
            self._transport_closed = True
            self._session = None
            self._ready.set()
            # A crashed server keeps its tools offered: calling one is what restarts it.
            if self.tools and self.status != "crashed":
                self.tools = ()
                self._on_tools_changed()

    @contextlib.asynccontextmanager
    async def _connected(self) -> AsyncIterator[ClientSession]:
        config = self.config
        if isinstance(config, McpLocalServer):
            async with self._local(config) as session:
                yield session
            return
        try:
            entered = False
            async with self._remote(config, legacy=False) as session:
                entered = True
                yield session
            return
        except Exception as exc:
            if entered:
                raise
            first = exc
        _log.info("MCP server %r: no streamable HTTP (%s); trying SSE", self.name, first)
        try:
            async with self._remote(config, legacy=True) as session:
                yield session
        except Exception as exc:
            raise first from exc

    @contextlib.asynccontextmanager
    async def _local(self, config: McpLocalServer) -> AsyncIterator[ClientSession]:
        env = server_environment(config.environment, self._env, hidden=self._hidden)
        params = StdioServerParameters(
            command=_program(config.command[0], env, self._avoid),
            args=list(config.command[1:]),
            env=env,
        )
        with _stderr_to_log(self.name) as errlog:
            async with (
                stdio_client(params, errlog=errlog) as (read, write),
                self._session_on(read, write) as session,
            ):
                yield session

    @contextlib.asynccontextmanager
    async def _remote(
        self, config: McpRemoteServer, *, legacy: bool
    ) -> AsyncIterator[ClientSession]:
        headers = expanded_headers(config.headers, self._env)
        if legacy:
            transport: Any = sse_client(config.url, headers=headers, timeout=self.timeout)
            async with transport as (read, write), self._session_on(read, write) as session:
                yield session
            return
        async with (
            create_mcp_http_client(headers=headers) as http,
            streamable_http_client(config.url, http_client=http) as (read, write),
            self._session_on(read, write) as session,
        ):
            yield session

    @contextlib.asynccontextmanager
    async def _session_on(self, read: Any, write: Any) -> AsyncIterator[ClientSession]:
        async with ClientSession(read, write, message_handler=self._on_message) as session:
            await asyncio.wait_for(self._handshake(session), self.timeout)
            yield session

    async def _handshake(self, session: ClientSession) -> None:
        await session.initialize()
        self.tools = await _list_tools(session)

    async def _on_message(self, message: IncomingMessage) -> None:
        notification = getattr(message, "root", message)
        if isinstance(notification, types.ToolListChangedNotification):
            refresh = asyncio.create_task(self._refresh())
            self._refreshes.add(refresh)
            refresh.add_done_callback(self._refreshes.discard)
        elif isinstance(notification, Exception):
            _log.info("MCP server %r sent something unreadable: %s", self.name, notification)

    async def _refresh(self) -> None:
        session = self._session
        if session is None:
            return
        try:
            self.tools = await asyncio.wait_for(_list_tools(session), self.timeout)
        except Exception as exc:
            _log.warning("MCP server %r: listing its tools failed: %s", self.name, exc)
            return
        self._on_tools_changed()


def _connection_lost(exc: BaseException) -> bool:
    """Not an answer of the server's (an MCP error response) but the end of the connection."""
    if isinstance(exc, MCPError):
        return exc.error.code == CONNECTION_CLOSED
    return isinstance(exc, OSError | EOFError | ConnectionError) or "Closed" in type(exc).__name__


async def _list_tools(session: ClientSession) -> tuple[types.Tool, ...]:
    tools: list[types.Tool] = []
    cursor: str | None = None
    for _ in range(100):  # a server that pages forever is cut off
        params = types.PaginatedRequestParams(cursor=cursor) if cursor else None
        listing = await session.list_tools(params=params)
        tools.extend(listing.tools)
        cursor = listing.next_cursor
        if not cursor:
            break
    return tuple(tools)


@contextlib.contextmanager
def _stderr_to_log(name: str) -> Any:
    """A pipe whose lines go to the log; the write end is the server's stderr."""
    read_fd, write_fd = os.pipe()
    writer: IO[str] = os.fdopen(write_fd, "w")
    logger = logging.getLogger(f"{__name__}.stderr")

    def pump() -> None:
        with os.fdopen(read_fd, "r", errors="replace") as reader:
            for line in reader:
                logger.info("MCP server %r: %s", name, line.rstrip())

    threading.Thread(target=pump, name=f"mcp stderr {name}", daemon=True).start()
    try:
        yield writer
    finally:
        writer.close()


def describe_error(exc: BaseException) -> str:
    """One line: the innermost error of a task group's bundle, by its type and message."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    text = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _program(command: str, env: dict[str, str], avoid: Sequence[str]) -> str:
    """A command named without a folder, found on ``PATH`` outside the workspace folders
    (an activated ``.venv/bin`` in the project could hold a planted ``npx``); the server's
    inherited ``PATH`` keeps only such entries too. A path the user wrote is theirs."""
    if os.sep in command:
        return command
    path = env.get("PATH", os.defpath)
    found = find_program(command, path=path, avoid=avoid)
    if found is None:
        raise FileNotFoundError(f"{command} was not found on PATH outside the workspace folders")
    if "PATH" in env:
        env["PATH"] = os.pathsep.join(trusted_search_path(path, avoid))
    return found
