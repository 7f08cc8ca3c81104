"""``bash`` in the ACP client's terminal (issue 23 §7): a :class:`CommandRunner` over
``terminal/*``.

The client only hosts the process. What it is asked to start is the launch the bash tool
prepared — ``bwrap … -- bash -c COMMAND``, or the supervisor where the sandbox is off — never
the raw command, after the same permission asks. The environment sent is the command's
scrubbed one; since a client may merge its own environment in, the launch is wrapped in
``env -u NAME…`` for every provider-key variable, so those never reach the command whatever
the client adds. The supervisor cannot inherit a status pipe from another process, so on
this path it reports nothing (it still ends what the command leaves behind). The client is
asked to start only an absolute program outside every workspace folder (``env`` is found
outside them too, :mod:`lsp_agent.system.programs`); anything else is refused here.

One call: ``terminal/create`` (command, args, env, cwd, ``outputByteLimit``), the terminal
embedded in the tool call (``tool_call_update`` with ``{type: "terminal", terminalId}``),
``terminal/wait_for_exit`` within the tool's timeout, ``terminal/kill`` on timeout or
cancellation, ``terminal/output`` for what the model reads, ``terminal/release`` always.
Client failures are values (:class:`CommandFailed`), never exceptions out of the tool.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Callable, Collection, Mapping, Sequence

from acp.schema import (
    CreateTerminalRequest,
    CreateTerminalResponse,
    EnvVariable,
    KillTerminalRequest,
    KillTerminalResponse,
    ReleaseTerminalRequest,
    ReleaseTerminalResponse,
    SessionNotification,
    TerminalExitStatus,
    TerminalOutputRequest,
    TerminalOutputResponse,
    TerminalToolCallContent,
    ToolCallProgress,
    WaitForTerminalExitRequest,
    WaitForTerminalExitResponse,
)
from pydantic import BaseModel

from lsp_agent.acp.editor import PROMPTING
from lsp_agent.acp.peer import AcpPeer, ClientError
from lsp_agent.shell.runner import (
    CommandFailed,
    CommandRun,
    CommandSpec,
    RunContext,
    uninterrupted,
)
from lsp_agent.system.programs import find_program, inside_any

__all__ = ["EXIT_SLACK_SECONDS", "Attached", "ClientTerminalRunner", "hosted_argv"]

EXIT_SLACK_SECONDS = 5.0
"""How long after ``terminal/kill`` (beyond the grace) the exit status is waited for."""

Attached = Callable[[str, str, str], None]
"""``(acp_session_id, tool_call_id, terminal_id)``: a terminal now shows that tool call."""

_log = logging.getLogger(__name__)


def hosted_argv(
    launch_argv: Sequence[str],
    hidden_env: Collection[str],
    env: Mapping[str, str],
    avoid: Sequence[str] = (),
) -> list[str] | CommandFailed:
    """The argv the client starts: the launch, behind ``env -u`` for each hidden name; a
    failure when a program of it is not absolute or lies in ``avoid`` (the workspace
    folders), since the client would run it outside the sandbox."""
    argv = list(launch_argv)
    if not argv or not os.path.isabs(argv[0]) or inside_any(argv[0], avoid):
        shown = argv[0] if argv else "nothing"
        return CommandFailed(
            f"Refused to ask the editor's terminal to run {shown}: only an absolute program "
            "outside the workspace folders is started there."
        )
    if not hidden_env:
        return argv
    program = find_program("env", path=env.get("PATH", os.defpath), avoid=avoid)
    if program is None:
        return CommandFailed("The command needs env, and none was found outside the workspace.")
    unset = [arg for name in sorted(hidden_env) for arg in ("-u", name)]
    return [program, *unset, "--", *argv]


class ClientTerminalRunner:
    """Implements ``CommandRunner`` over the client's ``terminal/*`` methods.

    ``attached``: told which terminal shows which tool call (the update mapper keeps it for
    the call's final update, which replaces the content).
    """

    inherits_descriptors = False

    def __init__(self, peer: AcpPeer, *, attached: Attached | None = None) -> None:
        self._peer = peer
        self._attached = attached

    async def run(self, spec: CommandSpec, ctx: RunContext) -> CommandRun | CommandFailed:
        session = PROMPTING.get() or ctx.call.session_id
        argv = hosted_argv(
            spec.launch.argv, spec.hidden_env, spec.env, (*ctx.boundary.roots, spec.workdir)
        )
        if isinstance(argv, CommandFailed):
            spec.launch.spawned()
            return argv
        request = CreateTerminalRequest(
            session_id=session,
            command=argv[0],
            args=argv[1:],
            env=[EnvVariable(name=name, value=value) for name, value in spec.env.items()],
            cwd=spec.workdir,
            output_byte_limit=spec.max_kept_chars,
        )
        try:
            created = await self._peer.request("terminal/create", request, CreateTerminalResponse)
        except ClientError as error:
            return CommandFailed(f"The editor's terminal could not start the command: {error}")
        finally:
            spec.launch.spawned()
        terminal = created.terminal_id
        ids = {"session_id": session, "terminal_id": terminal}
        kill = KillTerminalRequest(**ids)
        try:
            if session == ctx.call.session_id:  # a subagent's calls are not the client's
                await self._embed(session, ctx.call.tool_call_id, terminal)
            result = await self._follow(spec, ids)
            if isinstance(result, CommandFailed):
                await self._quietly("terminal/kill", kill, KillTerminalResponse)
            return result
        except BaseException:
            await uninterrupted(self._quietly("terminal/kill", kill, KillTerminalResponse))
            raise
        finally:
            release = ReleaseTerminalRequest(**ids)
            await uninterrupted(self._quietly("terminal/release", release, ReleaseTerminalResponse))

    async def _follow(self, spec: CommandSpec, ids: dict[str, str]) -> CommandRun | CommandFailed:
        """Wait (kill on timeout), then read the output the client kept."""
        timed_out = False
        status: WaitForTerminalExitResponse | None = None
        try:
            try:
                async with asyncio.timeout(spec.timeout):
                    status = await self._peer.request(
                        "terminal/wait_for_exit",
                        WaitForTerminalExitRequest(**ids),
                        WaitForTerminalExitResponse,
                    )
            except TimeoutError:
                timed_out = True
                await self._peer.request(
                    "terminal/kill", KillTerminalRequest(**ids), KillTerminalResponse
                )
                status = await self._exit_after_kill(spec, ids)
            output = await self._peer.request(
                "terminal/output", TerminalOutputRequest(**ids), TerminalOutputResponse
            )
        except ClientError as error:
            return CommandFailed(f"The editor's terminal failed while the command ran: {error}")
        returncode = _returncode(status)
        if returncode is None and output.exit_status is not None:
            returncode = _returncode(output.exit_status)
        return CommandRun(
            returncode=returncode,
            timed_out=timed_out,
            leftovers=False,  # bubblewrap's PID namespace or the supervisor ended them
            output=_kept(output),
            terminal_id=ids["terminal_id"],
        )

    async def _exit_after_kill(
        self, spec: CommandSpec, ids: dict[str, str]
    ) -> WaitForTerminalExitResponse | None:
        bound = spec.kill_grace + spec.launch.stop_margin + EXIT_SLACK_SECONDS
        try:
            async with asyncio.timeout(bound):
                return await self._peer.request(
                    "terminal/wait_for_exit",
                    WaitForTerminalExitRequest(**ids),
                    WaitForTerminalExitResponse,
                )
        except TimeoutError:
            _log.warning("terminal %s did not exit after terminal/kill", ids["terminal_id"])
            return None

    async def _embed(self, session: str, tool_call_id: str, terminal: str) -> None:
        """Show the live terminal in the tool call; a failure here only costs the view."""
        if self._attached is not None:
            try:
                self._attached(session, tool_call_id, terminal)
            except Exception:
                _log.exception("recording the terminal of %s failed", tool_call_id)
        update = ToolCallProgress(
            session_update="tool_call_update",
            tool_call_id=tool_call_id,
            status="in_progress",
            content=[TerminalToolCallContent(type="terminal", terminal_id=terminal)],
        )
        await self._peer.notify(
            "session/update", SessionNotification(session_id=session, update=update)
        )

    async def _quietly(self, method: str, params: BaseModel, answer: type[BaseModel]) -> None:
        try:
            await self._peer.request(method, params, answer)
        except ClientError as error:
            _log.warning("%s failed: %s", method, error)


def _returncode(status: WaitForTerminalExitResponse | TerminalExitStatus | None) -> int | None:
    """Exit code, or minus the signal number (the ``ProcessGroup`` convention)."""
    if status is None:
        return None
    if status.exit_code is not None:
        return status.exit_code
    name = status.signal
    if not name:
        return None
    number = _signal_number(name)
    return -number if number is not None else None


def _signal_number(name: str) -> int | None:
    text = name.strip().upper()
    if text.isdigit():
        return int(text)
    if not text.startswith("SIG"):
        text = f"SIG{text}"
    try:
        return int(signal.Signals[text])
    except KeyError:
        return None


def _kept(output: TerminalOutputResponse) -> str:
    if output.truncated:
        return f"…earlier output dropped (the terminal kept its end)…\n{output.output}"
    return output.output
