"""Where a ``bash`` command's process lives: the :class:`CommandRunner` port, and the default
that spawns it here.

The bash tool decides everything before a command runs (its permission, its workdir, the
sandboxed :class:`~lsp_agent.sandbox.Launch`: ``bwrap … --`` or the supervisor) and turns
what comes back into the outcome; the output limit and the secret filter stay the registry's.
A runner only hosts the launch: it starts exactly ``spec.launch.argv`` — never the raw
command — with ``spec.env``, waits up to ``spec.timeout``, stops it on timeout or
cancellation, and reports how it ended. :class:`LocalRunner` runs it in a process group of
its own here (:class:`~lsp_agent.shell.process.ProcessGroup`); an ACP client's terminal is
another runner (``lsp_agent.acp.terminal``).
"""

from __future__ import annotations

import asyncio
import codecs
import logging
from collections import deque
from collections.abc import Awaitable, Callable, Mapping
from typing import Protocol, TypeVar

import attrs

from lsp_agent.core.tooling import ToolCallContext
from lsp_agent.sandbox import Launch
from lsp_agent.shell.process import ProcessGroup
from lsp_agent.workspace.boundary import WorkspaceBoundary

__all__ = [
    "MAX_KEPT_CHARS",
    "CommandFailed",
    "CommandRun",
    "CommandRunner",
    "CommandSpec",
    "LocalRunner",
    "OutputTail",
    "RunContext",
    "uninterrupted",
]

MAX_KEPT_CHARS = 10 * 1024 * 1024
"""Output kept in memory per call (the tail); the registry cuts what the model sees."""

_READ_BYTES = 64 * 1024
_DRAIN_SECONDS = 1.0
_LIMIT_POLL_SECONDS = 0.25

T = TypeVar("T")

_log = logging.getLogger(__name__)


class RunContext(Protocol):
    """What a runner reads of the tool call it hosts (the tools' ``ToolRunContext`` is one)."""

    @property
    def call(self) -> ToolCallContext:
        """Which session and call; where the command's events go."""
        ...

    @property
    def boundary(self) -> WorkspaceBoundary:
        """The workspace folders the command may run in."""
        ...


@attrs.frozen(kw_only=True)
class CommandSpec:
    """One prepared command, as the bash tool hands it to a runner."""

    launch: Launch
    """What to start: the sandboxed launch (its ``argv`` wraps the user's command)."""
    workdir: str
    env: Mapping[str, str]
    """The command's environment: the agent's, less ``hidden_env``."""
    hidden_env: frozenset[str]
    """Variables the command must never see (the agent's provider keys), whatever a host
    adds to ``env``."""
    timeout: float
    """Seconds before the command is stopped."""
    kill_grace: float
    """Seconds between ``SIGTERM`` and ``SIGKILL`` when stopping."""
    max_kept_chars: int


@attrs.frozen(kw_only=True)
class CommandRun:
    """How a command ended."""

    returncode: int | None
    """Its exit status; negative: killed by that signal; None: unknown."""
    timed_out: bool
    leftovers: bool
    """It left processes running, which were stopped."""
    limit: str | None = None
    """It reached a limit and was stopped for it: which (``sandbox.limits``)."""
    output: str
    pgid: int | None = None
    """The process group it ran in, when it ran here."""
    terminal_id: str | None = None
    """The editor's terminal it ran in, when it ran there."""


@attrs.frozen
class CommandFailed:
    """The command could not be started or followed: the message the model reads."""

    message: str


class CommandRunner(Protocol):
    """Hosts one prepared command at a time per call (see the module docstring)."""

    @property
    def inherits_descriptors(self) -> bool:
        """Whether the command is this process's child, so it can inherit descriptors (the
        supervisor's status pipe); a command another process starts cannot."""
        ...

    async def run(self, spec: CommandSpec, ctx: RunContext) -> CommandRun | CommandFailed:
        """Start, wait, stop on timeout; on cancellation stop it, then re-raise."""
        ...


class OutputTail:
    """A command's output text, keeping only its last ``limit`` characters."""

    def __init__(self, limit: int = MAX_KEPT_CHARS) -> None:
        self._limit = limit
        self._chunks: deque[str] = deque()
        self._size = 0
        self.dropped = 0
        """Characters dropped from the front."""

    def append(self, text: str) -> None:
        self._chunks.append(text)
        self._size += len(text)
        while self._size > self._limit:
            excess = self._size - self._limit
            first = self._chunks[0]
            if len(first) <= excess:
                self._chunks.popleft()
                cut = len(first)
            else:
                self._chunks[0] = first[excess:]
                cut = excess
            self._size -= cut
            self.dropped += cut

    def text(self) -> str:
        body = "".join(self._chunks)
        if self.dropped:
            return f"…earlier output dropped ({self.dropped} characters)…\n{body}"
        return body


class LocalRunner:
    """The command in its own process group, this process's child.

    Its process group is reported to the loop (``process_started``) before the command
    starts and ``process_ended`` after, output is streamed to the editor as it comes, and on
    timeout or cancellation the whole group is stopped (``SIGTERM``, ``SIGKILL`` after the
    grace). Background processes still running when the command ends are stopped too.
    """

    inherits_descriptors = True

    async def run(self, spec: CommandSpec, ctx: RunContext) -> CommandRun | CommandFailed:
        launch = spec.launch
        try:
            group = await ProcessGroup.spawn(
                launch.argv,
                cwd=spec.workdir,
                env=spec.env,
                pass_fds=launch.pass_fds,
                preexec=launch.watch.preexec(),
            )
        except OSError as exc:
            return CommandFailed(f"Could not start the command: {exc.strerror or exc}")
        finally:
            launch.spawned()
        return await self._supervise(group, ctx, spec)

    async def _supervise(
        self, group: ProcessGroup, ctx: RunContext, spec: CommandSpec
    ) -> CommandRun:
        events = ctx.call.events
        launch = spec.launch
        grace = spec.kill_grace + launch.stop_margin
        try:
            await events.process_started(group.pgid, group.start_ticks())
        except BaseException:
            await uninterrupted(group.stop(0))  # never released: nothing of it ran
            group.close()
            raise
        launch.watch.started(group.pgid)
        tail = OutputTail(spec.max_kept_chars)
        over = asyncio.Event()
        reader = asyncio.create_task(_pump(group.stdout, tail, events.output, launch, over))
        try:
            await group.release()
            timed_out = False
            try:
                async with asyncio.timeout(spec.timeout):
                    await _wait_within_limits(group, launch, over)
            except TimeoutError:
                timed_out = True
            limited = launch.watch.reached is not None
            in_group = not timed_out and not limited and group.alive()
            ended = not timed_out and not limited
            if launch.reports:  # it counted what was left; the group may hold the sandbox's own
                leftovers = ended and launch.left_behind()
            else:
                leftovers = in_group or (ended and launch.left_behind())
            if timed_out or limited or group.alive():
                await group.stop(grace)
            await _finish_reading(reader)
        except BaseException:
            await uninterrupted(_abandon(group, reader, grace))
            raise
        finally:
            group.close()
            await uninterrupted(events.process_ended(group.pgid))
        return CommandRun(
            returncode=group.returncode,
            timed_out=timed_out,
            leftovers=leftovers,
            output=tail.text(),
            pgid=group.pgid,
            limit=launch.watch.reached if limited else None,
        )


async def _wait_within_limits(group: ProcessGroup, launch: Launch, over: asyncio.Event) -> None:
    """Until the leader exits, or a limit is reached (the output's, or the processes')."""
    exited = asyncio.ensure_future(group.wait())
    flagged = asyncio.ensure_future(over.wait())
    try:
        while not exited.done():
            await asyncio.wait(
                {exited, flagged}, timeout=_LIMIT_POLL_SECONDS, return_when=asyncio.FIRST_COMPLETED
            )
            if flagged.done():
                return
            if not exited.done() and await asyncio.to_thread(launch.watch.check):
                return
    finally:
        flagged.cancel()
        if not exited.done():
            exited.cancel()


async def _pump(
    stream: asyncio.StreamReader,
    tail: OutputTail,
    emit: Callable[[str], Awaitable[None]],
    launch: Launch,
    over: asyncio.Event,
) -> None:
    """Read until end of file; each decoded chunk is kept and streamed. Streaming that fails
    stops (logged); the command and its kept output go on. Past the output limit ``over`` is
    set (the command is stopped) and the rest is drained unkept."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    streaming = True
    final = False
    total = 0
    while not final:
        chunk = await stream.read(_READ_BYTES)
        final = not chunk
        total += len(chunk)
        if over.is_set():
            continue
        if launch.watch.output_exceeded(total):
            over.set()
            continue
        text = decoder.decode(chunk, final=final)
        if not text:
            continue
        tail.append(text)
        if streaming:
            try:
                await emit(text)
            except Exception:
                _log.exception("streaming command output failed; output is still kept")
                streaming = False


async def _abandon(group: ProcessGroup, reader: asyncio.Task[None], grace: float) -> None:
    await group.stop(grace)
    if not reader.done():
        await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
        reader.cancel()
        await asyncio.wait({reader})


async def _finish_reading(reader: asyncio.Task[None]) -> None:
    """The rest of the output; a process that left the group may hold the pipe open."""
    await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
    if not reader.done():
        reader.cancel()
        await asyncio.wait({reader})
        return
    reader.result()  # a failure to stream is the call's failure


async def uninterrupted(awaitable: Awaitable[T]) -> T:
    """Run ``awaitable`` to its end even if this task is cancelled meanwhile; a cancellation
    that arrived is raised afterwards."""
    task = asyncio.ensure_future(awaitable)
    cancelled = False
    while not task.done():
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise
            cancelled = True
    if cancelled:
        raise asyncio.CancelledError
    return task.result()
