"""An ACP client for the tests, on the ``agent-client-protocol`` package's client side: it
spawns the real ``lsp-agent acp`` (stdio) and plays the editor.

:class:`RecordingClient` keeps every ``session/update`` (by session, in order), answers
``session/request_permission`` from a list of option kinds (``allow_once`` by default), and
serves ``fs/read_text_file`` / ``fs/write_text_file`` from an in-memory map of unsaved
buffers (a file without a buffer is read from the disk; a write only changes the buffer, never
the disk), as an editor with open, modified documents would. :func:`spawn_agent` starts the
agent against the given environment (the fake LLM's, tests/acp/conftest.py) and initializes
it with those capabilities; its stderr goes to a file the test can show when it fails.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import attrs
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.exceptions import RequestError
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    Implementation,
    InitializeResponse,
    PermissionOption,
    ReadTextFileResponse,
    RequestPermissionResponse,
    ToolCallUpdate,
    WriteTextFileResponse,
)
from acp.stdio import spawn_agent_process

TIMEOUT = 60.0
"""How long any wait of these tests lasts at most."""
LINE_LIMIT = 64 * 1024 * 1024


@attrs.define
class PermissionRecord:
    session_id: str
    tool_call: dict[str, Any]
    options: list[dict[str, Any]]
    answer: str | None
    """The option kind chosen, None for a cancelled request."""


HOLD = "hold"
"""A permission answer that never comes."""


class RecordingClient:
    """The editor's side of ACP (the SDK's ``Client`` protocol, by method name)."""

    def __init__(self, *, answers: list[str | tuple[str, str] | None] | None = None) -> None:
        """``answers``: the option kind for each permission request in turn, or ``(kind,
        reason)`` (the reason in ``_meta.lspAgent.reason``), or None to cancel it, or
        :data:`HOLD` never to answer; once they run out, ``allow_once``."""
        self.buffers: dict[str, str] = {}
        """Unsaved text by absolute path: what ``fs/read_text_file`` answers first."""
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.permissions: list[PermissionRecord] = []
        self.updates: dict[str, list[dict[str, Any]]] = {}
        self.wire: list[tuple[str, dict[str, Any]]] = []
        """Every JSON-RPC message, ``("in" | "out", message)``, in the order of the wire."""
        self._answers = list(answers or [])
        self._changed = asyncio.Condition()

    # -- what the agent calls --------------------------------------------------------------

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        body = update.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.updates.setdefault(session_id, []).append(body)
        async with self._changed:
            self._changed.notify_all()

    async def request_permission(
        self,
        session_id: str,
        tool_call: ToolCallUpdate,
        options: list[PermissionOption],
        **kwargs: Any,
    ) -> RequestPermissionResponse:
        answer = self._answers.pop(0) if self._answers else "allow_once"
        kind, reason = answer if isinstance(answer, tuple) else (answer, None)
        offered = [o.model_dump(mode="json", by_alias=True, exclude_none=True) for o in options]
        call = tool_call.model_dump(mode="json", by_alias=True, exclude_none=True)
        self.permissions.append(PermissionRecord(session_id, call, offered, kind))
        if kind == HOLD:  # a dialog nobody answers
            await asyncio.sleep(3600)
        if kind is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        chosen = next(o for o in options if o.kind == kind)
        meta = {"lspAgent": {"reason": reason}} if reason else None
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id, field_meta=meta)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            try:
                text = Path(path).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise RequestError.resource_not_found(path) from error
        if line is not None or limit is not None:
            lines = text.splitlines(keepends=True)
            start = max((line or 1) - 1, 0)
            text = "".join(lines[start : start + limit if limit is not None else None])
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    # -- for the test ----------------------------------------------------------------------

    def kinds(self, session_id: str) -> list[str]:
        return [u["sessionUpdate"] for u in self.updates.get(session_id, [])]

    def of_kind(self, session_id: str, kind: str) -> list[dict[str, Any]]:
        return [u for u in self.updates.get(session_id, []) if u["sessionUpdate"] == kind]

    def observe(self, event: StreamEvent) -> None:
        direction = "in" if event.direction == StreamDirection.INCOMING else "out"
        self.wire.append((direction, event.message))

    def sent_id(self, method: str) -> Any:
        """The id of the last request of ``method`` this client sent."""
        return [m["id"] for d, m in self.wire if d == "out" and m.get("method") == method][-1]

    def received_before(self, request_id: Any) -> list[dict[str, Any]]:
        """The messages that arrived before the answer to request ``request_id``."""
        before = []
        for direction, message in self.wire:
            if direction == "in" and "method" not in message and message.get("id") == request_id:
                return before
            if direction == "in":
                before.append(message)
        raise AssertionError(f"no answer to request {request_id}")

    async def wait_for(self, predicate: Callable[[], bool], timeout: float = TIMEOUT) -> None:
        """Until ``predicate`` holds after some update (fails after ``timeout``)."""
        async with asyncio.timeout(timeout):
            async with self._changed:
                await self._changed.wait_for(predicate)


def capabilities(*, fs: bool = True, terminal: bool = False) -> ClientCapabilities:
    return ClientCapabilities(
        fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs), terminal=terminal
    )


@attrs.define
class Agent:
    """A running ``lsp-agent acp`` and the connection to it."""

    conn: ClientSideConnection
    process: asyncio.subprocess.Process
    client: RecordingClient
    init: InitializeResponse
    stderr: Path

    def log(self) -> str:
        return self.stderr.read_text(errors="replace") if self.stderr.exists() else ""

    def assert_clean_exit(self) -> None:
        """Once the context is left: the process ended by itself, status 0, nothing failed."""
        log = self.log()
        assert self.process.returncode == 0, log
        assert "Traceback" not in log, log
        assert " ERROR " not in log, log


def agent_command() -> list[str]:
    return [sys.executable, "-m", "lsp_agent", "acp"]


@asynccontextmanager
async def spawn_agent(
    env: Mapping[str, str],
    *,
    cwd: Path,
    stderr: Path,
    client: RecordingClient | None = None,
    offers: ClientCapabilities | None = None,
    shutdown_timeout: float = 30.0,
) -> AsyncIterator[Agent]:
    """``lsp-agent acp`` started in ``cwd`` with exactly ``env``, initialized with the
    client capabilities ``offers`` (default: both fs methods, no terminal); on exit stdin is
    closed and the process waited for (killed after ``shutdown_timeout``)."""
    client = client or RecordingClient()
    command, *args = agent_command()
    with stderr.open("ab") as log:
        async with spawn_agent_process(
            client,
            command,
            *args,
            env=dict(env),
            cwd=cwd,
            transport_kwargs={
                "stderr": log.fileno(),
                "limit": LINE_LIMIT,
                "shutdown_timeout": shutdown_timeout,
            },
            observers=[client.observe],
        ) as (conn, process):
            async with asyncio.timeout(TIMEOUT):
                init = await conn.initialize(
                    protocol_version=1,
                    client_capabilities=offers or capabilities(),
                    client_info=Implementation(name="acp-test-client", version="0"),
                )
            yield Agent(conn=conn, process=process, client=client, init=init, stderr=stderr)
