"""The client side of ACP's ``terminal/*`` for tests: each terminal spawns the command it is
given, as an editor would, and records every call.

Like a real client it merges the given environment into its own (``base_env``), so a test can
show the agent keeps its keys from the command even then. ``terminal/kill`` ends the process
group (``SIGTERM``, ``SIGKILL`` after ``kill_grace``), ``terminal/release`` kills what still
runs. The method names and signatures are the SDK's ``Client`` protocol, so this mixes into an
``acp`` client class (``class C(SpawningTerminals, AcpTestClient)``) or serves an in-process
channel (:class:`TerminalChannel`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs
from acp.exceptions import RequestError
from acp.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalRequest,
    KillTerminalResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)


@attrs.define
class HostedTerminal:
    terminal_id: str
    session_id: str
    command: str
    args: list[str]
    env: dict[str, str]
    cwd: str | None
    limit: int | None
    process: asyncio.subprocess.Process
    output: bytearray = attrs.field(factory=bytearray)
    truncated: bool = False
    reader: asyncio.Task[None] | None = None
    killed: bool = False
    released: bool = False

    @property
    def argv(self) -> list[str]:
        return [self.command, *self.args]

    def keep(self, chunk: bytes) -> None:
        self.output += chunk
        if self.limit is not None and len(self.output) > self.limit:
            del self.output[: len(self.output) - self.limit]
            while self.output and (self.output[0] & 0xC0) == 0x80:  # a character boundary
                del self.output[0]
            self.truncated = True


class SpawningTerminals:
    """``terminal/*`` by spawning the command here; ``terminals`` by id, in creation order;
    ``calls``: ``(method, terminal_id)`` in order."""

    def __init__(
        self,
        *args: Any,
        base_env: Mapping[str, str] | None = None,
        kill_grace: float = 5.0,
        **kwargs: Any,
    ) -> None:
        super().__init__(*args, **kwargs)
        self.terminals: dict[str, HostedTerminal] = {}
        self.calls: list[tuple[str, str]] = []
        self.created = asyncio.Event()
        self._base_env = dict(os.environ if base_env is None else base_env)
        self._kill_grace = kill_grace

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        given = {variable.name: variable.value for variable in env or []}
        try:
            process = await asyncio.create_subprocess_exec(
                command,
                *(args or []),
                cwd=cwd,
                env={**self._base_env, **given},
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )
        except OSError as error:
            raise RequestError.internal_error({"details": str(error)}) from error
        terminal = HostedTerminal(
            terminal_id=f"term_{len(self.terminals) + 1}",
            session_id=session_id,
            command=command,
            args=list(args or []),
            env=given,
            cwd=cwd,
            limit=output_byte_limit,
            process=process,
        )
        terminal.reader = asyncio.create_task(self._read(terminal))
        self.terminals[terminal.terminal_id] = terminal
        self.calls.append(("terminal/create", terminal.terminal_id))
        self.created.set()
        return CreateTerminalResponse(terminal_id=terminal.terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self._terminal(terminal_id)
        self.calls.append(("terminal/output", terminal_id))
        if terminal.process.returncode is not None and terminal.reader is not None:
            await asyncio.wait({terminal.reader}, timeout=5)
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"),
            truncated=terminal.truncated,
            exit_status=_status(terminal.process.returncode, TerminalExitStatus),
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self._terminal(terminal_id)
        self.calls.append(("terminal/wait_for_exit", terminal_id))
        code = await terminal.process.wait()
        status = _status(code, WaitForTerminalExitResponse)
        assert status is not None
        return status

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        terminal = self._terminal(terminal_id)
        self.calls.append(("terminal/kill", terminal_id))
        terminal.killed = True
        await self._end(terminal)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        terminal = self._terminal(terminal_id)
        self.calls.append(("terminal/release", terminal_id))
        await self._end(terminal)
        terminal.released = True
        return ReleaseTerminalResponse()

    def _terminal(self, terminal_id: str) -> HostedTerminal:
        terminal = self.terminals.get(terminal_id)
        if terminal is None or terminal.released:
            raise RequestError.invalid_params({"terminalId": f"unknown terminal {terminal_id}"})
        return terminal

    async def _read(self, terminal: HostedTerminal) -> None:
        stream = terminal.process.stdout
        assert stream is not None
        while chunk := await stream.read(65536):
            terminal.keep(chunk)

    async def _end(self, terminal: HostedTerminal) -> None:
        """The whole process group: SIGTERM, SIGKILL after the grace."""
        process = terminal.process
        if process.returncode is not None:
            return
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(process.wait(), self._kill_grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            await process.wait()


def _status(code: int | None, model: Any) -> Any:
    if code is None:
        return None
    if code < 0:
        return model(signal=signal.Signals(-code).name)
    return model(exit_code=code)


_METHODS = {
    "terminal/create": (CreateTerminalRequest, "create_terminal"),
    "terminal/output": (TerminalOutputRequest, "terminal_output"),
    "terminal/wait_for_exit": (WaitForTerminalExitRequest, "wait_for_terminal_exit"),
    "terminal/kill": (KillTerminalRequest, "kill_terminal"),
    "terminal/release": (ReleaseTerminalRequest, "release_terminal"),
}


class TerminalChannel(SpawningTerminals):
    """An in-process JSON-RPC channel to a client that hosts terminals: requests are the
    wire dicts the agent sends; ``notifications`` keeps the others."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.notifications: list[tuple[str, Any]] = []

    async def send_request(self, method: str, params: Any = None) -> Any:
        if method not in _METHODS:
            raise RequestError.method_not_found(method)
        model, name = _METHODS[method]
        request = model.model_validate(params)
        fields = {key: getattr(request, key) for key in model.model_fields if key != "field_meta"}
        answer = await getattr(self, name)(**fields)
        return answer.model_dump(mode="json", by_alias=True, exclude_none=True)

    async def send_notification(self, method: str, params: Any = None) -> None:
        self.notifications.append((method, params))


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet counts as gone)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :][:1] not in (b"Z", b"X")
