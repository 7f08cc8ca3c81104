"""The ``bash`` tool: run a command line in the workspace, in its own process group.

Before anything runs, permission is derived from the command itself
(:mod:`lsp_agent.shell.plan`): each simple command's resolved words (wrappers, paths,
quoting and assignments seen through) are its patterns; every argument that could be a path,
the working directory and redirection targets are judged, and what leaves the workspace or
cannot be judged needs ``external_directory`` first, in one ask.

The command is started by :class:`~lsp_agent.sandbox.CommandSandbox`: inside bubblewrap
(workspace read-write, the rest read-only, ``$HOME`` and the data folder hidden, no network
unless ``network`` is set and ``bash_network`` allows it, its own PID namespace), or, where
the sandbox is off, under a supervisor that ends whatever it leaves behind. It runs through
:class:`~lsp_agent.shell.process.ProcessGroup`: its process group is
reported to the loop (``process_started``) before the command starts and ``process_ended``
after, output is streamed to the editor as it comes, and on timeout or cancellation the whole
group is stopped (``SIGTERM``, ``SIGKILL`` after a grace period). Background processes still
running when the command ends are stopped too. The environment is the agent's, less the
variables that hold its own provider keys.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Mapping
from typing import TypeVar

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.sandbox import CommandSandbox, Launch, SandboxUnavailable
from lsp_agent.shell.plan import PermissionPlan, plan_permissions
from lsp_agent.shell.process import ProcessGroup, shell_argv
from lsp_agent.tools.base import ToolRunContext, load_description, refusal

__all__ = [
    "DEFAULT_TIMEOUT_MS",
    "KILL_GRACE_SECONDS",
    "MAX_KEPT_CHARS",
    "MAX_TIMEOUT_MS",
    "BashParams",
    "BashTool",
    "OutputTail",
    "PermissionPlan",
    "plan_permissions",
]

DEFAULT_TIMEOUT_MS = 120_000
MAX_TIMEOUT_MS = 600_000
KILL_GRACE_SECONDS = 3.0
MAX_KEPT_CHARS = 10 * 1024 * 1024
"""Output kept in memory per call (the tail); the registry cuts what the model sees."""

_READ_BYTES = 64 * 1024
_DRAIN_SECONDS = 1.0
_TITLE_CHARS = 80

T = TypeVar("T")

_log = logging.getLogger(__name__)


class BashParams(BaseModel):
    model_config = ConfigDict(extra="forbid")

    command: str = Field(description="The command line to run with bash.")
    timeout: int | None = Field(
        default=None,
        description=f"Milliseconds before the command is stopped (default {DEFAULT_TIMEOUT_MS}, "
        f"at most {MAX_TIMEOUT_MS}).",
    )
    workdir: str | None = Field(
        default=None,
        description="The directory to run the command in: absolute, or relative to the first "
        "workspace folder (default: the first workspace folder). Use this instead of `cd`.",
    )
    description: str | None = Field(
        default=None,
        description="What the command does in 5-10 words, shown to the user "
        "(e.g. 'Run the unit tests').",
    )
    network: bool = Field(
        default=False,
        description="Set to true only if the command needs the network (installing "
        "packages, fetching, pushing); it then needs the user's bash_network permission. "
        "Without it a sandboxed command has no network.",
    )


# --- permissions: lsp_agent.shell.plan --------------------------------------------


# --- output -----------------------------------------------------------------------------


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


async def _pump(
    stream: asyncio.StreamReader, tail: OutputTail, emit: Callable[[str], Awaitable[None]]
) -> None:
    """Read until end of file; each decoded chunk is kept and streamed. Streaming that fails
    stops (logged); the command and its kept output go on."""
    decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")
    streaming = True
    final = False
    while not final:
        chunk = await stream.read(_READ_BYTES)
        final = not chunk
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


# --- the tool ---------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class _Run:
    returncode: int | None
    timed_out: bool
    leftovers: bool
    output: str


class BashTool:
    """Implements ``Tool[BashParams]``.

    ``hidden_env``: names of environment variables the command must not see (the agent's
    provider keys). ``env``: the environment to start from (default ``os.environ`` at run
    time). ``kill_grace``: seconds between ``SIGTERM`` and ``SIGKILL`` when stopping.
    ``sandbox``: how commands are confined (default: off, supervised only).
    """

    name = "bash"
    kind: ToolKind = "execute"
    mutates = True
    Params = BashParams

    def __init__(
        self,
        *,
        hidden_env: Collection[str],
        env: Mapping[str, str] | None = None,
        kill_grace: float = KILL_GRACE_SECONDS,
        max_kept_chars: int = MAX_KEPT_CHARS,
        sandbox: CommandSandbox | None = None,
    ) -> None:
        self.description = load_description(self.name)
        self._hidden = frozenset(hidden_env)
        self._env = env
        self._kill_grace = kill_grace
        self._max_kept = max_kept_chars
        self._sandbox = sandbox or CommandSandbox("off")
        self._noticed: set[str] = set()  # sessions told that the sandbox is off

    def child_env(self) -> dict[str, str]:
        """The command's environment."""
        source = os.environ if self._env is None else self._env
        return {k: v for k, v in source.items() if k not in self._hidden}

    async def run(self, params: BashParams, ctx: ToolRunContext) -> ToolOutcome:
        command = params.command
        title = _title(params)
        timeout_ms = DEFAULT_TIMEOUT_MS if params.timeout is None else params.timeout
        if timeout_ms <= 0:
            return _error(
                f"timeout must be a positive number of milliseconds, not {timeout_ms}.", title
            )
        if timeout_ms > MAX_TIMEOUT_MS:
            return _error(
                f"timeout {timeout_ms} ms is more than the maximum of {MAX_TIMEOUT_MS} ms "
                "(10 minutes).",
                title,
            )
        if not command.strip():
            return _error("The command is empty.", title)

        where = await ctx.resolve(params.workdir or ctx.boundary.roots[0], kind="directory")
        if isinstance(where, ToolOutcome):
            return where
        workdir = where.path
        if not os.path.isdir(workdir):
            return _error(f"Working directory not found: {workdir}", title)

        env = self.child_env()
        plan = await _authorize(
            params.command,
            ctx,
            workdir=workdir,
            home=env.get("HOME"),
            env=env,
            title=_title(params),
            description=params.description,
        )
        if isinstance(plan, ToolOutcome):
            return plan
        if params.network:
            refused = await _authorize_network(params, ctx, plan, workdir=workdir)
            if refused is not None:
                return refused

        launch = await self._sandbox.prepare(
            shell_argv(command, env),
            workdir=workdir,
            writable=(*ctx.boundary.roots, *plan.outside),
            env=env,
            network=params.network,
            grace=self._kill_grace,
        )
        if isinstance(launch, SandboxUnavailable):
            return _error(launch.message(), title)
        try:
            try:
                group = await ProcessGroup.spawn(
                    launch.argv, cwd=workdir, env=env, pass_fds=launch.pass_fds
                )
            except OSError as exc:
                return _error(f"Could not start the command: {exc.strerror or exc}", title)
            finally:
                launch.spawned()
            run = await self._supervise(group, ctx, timeout_ms / 1000, launch)
        finally:
            launch.close()
        outcome = _outcome(
            run, timeout_ms=timeout_ms, title=title, pgid=group.pgid, workdir=workdir
        )
        return self._with_sandbox_note(outcome, launch, ctx.call.session_id)

    def _with_sandbox_note(self, outcome: ToolOutcome, launch: Launch, session: str) -> ToolOutcome:
        """Record whether it was sandboxed; tell each session once that it was not."""
        metadata = {**outcome.metadata, "sandboxed": launch.sandboxed}
        output = outcome.output
        if launch.notice is not None and session not in self._noticed:
            self._noticed.add(session)
            output = f"{output}\n{launch.notice}"
        return attrs.evolve(outcome, output=output, metadata=metadata)

    async def _supervise(
        self, group: ProcessGroup, ctx: ToolRunContext, timeout: float, launch: Launch
    ) -> _Run:
        events = ctx.call.events
        try:
            await events.process_started(group.pgid, group.start_ticks())
        except BaseException:
            await _uninterrupted(group.stop(0))  # never released: nothing of it ran
            group.close()
            raise
        tail = OutputTail(self._max_kept)
        reader = asyncio.create_task(_pump(group.stdout, tail, events.output))
        try:
            await group.release()
            timed_out = False
            try:
                async with asyncio.timeout(timeout):
                    await group.wait()
            except TimeoutError:
                timed_out = True
            in_group = not timed_out and group.alive()
            leftovers = in_group or (not timed_out and launch.left_behind())
            if timed_out or in_group:
                await group.stop(self._kill_grace + launch.stop_margin)
            await _finish_reading(reader)
        except BaseException:
            await _uninterrupted(self._abandon(group, reader, launch.stop_margin))
            raise
        finally:
            group.close()
            await _uninterrupted(events.process_ended(group.pgid))
        return _Run(
            returncode=group.returncode,
            timed_out=timed_out,
            leftovers=leftovers,
            output=tail.text(),
        )

    async def _abandon(
        self, group: ProcessGroup, reader: asyncio.Task[None], margin: float
    ) -> None:
        await group.stop(self._kill_grace + margin)
        if not reader.done():
            await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            reader.cancel()
            await asyncio.wait({reader})


async def _authorize(
    command: str,
    ctx: ToolRunContext,
    *,
    workdir: str,
    home: str | None,
    env: Mapping[str, str] | None,
    title: str,
    description: str | None,
) -> PermissionPlan | ToolOutcome:
    """Ask for what the command needs: outside folders and unjudgeable words first, then
    the commands. The plan when it may run, else the refusal the model reads."""
    plan = plan_permissions(command, workdir=workdir, boundary=ctx.boundary, home=home, env=env)
    subject = {"type": "command", "command": command, "cwd": workdir}
    if plan.hidden:
        return ToolOutcome(
            output=f"The command touches {', '.join(plan.hidden)}, in the agent's own data "
            "folder, which no tool may access. The command was not run.",
            is_error=True,
            title=title,
            metadata={"hidden": list(plan.hidden), "workdir": workdir},
        )
    if plan.outside or plan.unknown:
        folders = tuple(f"{folder.rstrip('/')}/*" for folder in plan.outside)
        parts = []
        if plan.outside:
            parts.append(f"touches {', '.join(plan.outside)}, outside the workspace")
        if plan.unknown:
            parts.append(
                "has paths that cannot be judged before it runs: " + "; ".join(plan.unknown)
            )
        what = " and ".join(parts)
        verdict = await ctx.ask(
            PermissionRequest(
                permission="external_directory",
                patterns=(*folders, *plan.unknown),
                always=folders,
                title=f"Run a command that {what}",
                description=description,
                subject=subject,
                unjudged=plan.unknown,
            )
        )
        if not verdict.allowed:
            message = (
                f"The command {what} (workspace: {', '.join(ctx.boundary.roots)}); that needs "
                "the external_directory permission. The command was not run."
            )
            return ToolOutcome(
                output=f"{message}\n{verdict.message}".strip(),
                is_error=True,
                title=title,
                metadata={
                    "outside": list(plan.outside),
                    "unknown": list(plan.unknown),
                    "workdir": workdir,
                },
                stop_turn=verdict.stop_turn,
            )
    if plan.patterns:
        verdict = await ctx.ask(
            PermissionRequest(
                permission="bash",
                patterns=plan.patterns,
                always=plan.always,
                title=f"Run: {title}",
                description=description,
                subject=subject,
                unjudged=plan.unjudged,
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
    return plan


async def _authorize_network(
    params: BashParams, ctx: ToolRunContext, plan: PermissionPlan, *, workdir: str
) -> ToolOutcome | None:
    """``network: true``: one ``bash_network`` ask for the command's patterns (the same as
    ``bash``'s). None when granted, else the refusal."""
    title = _title(params)
    verdict = await ctx.ask(
        PermissionRequest(
            permission="bash_network",
            patterns=plan.patterns or (params.command,),
            always=plan.always or (params.command,),
            title=f"Let this command use the network: {title}",
            description=params.description,
            subject={"type": "command", "command": params.command, "cwd": workdir},
        )
    )
    if verdict.allowed:
        return None
    message = (
        "The command asked for the network, which needs the bash_network permission. "
        "The command was not run; without network: true it runs with no network."
    )
    return ToolOutcome(
        output=f"{message}\n{verdict.message}".strip(),
        is_error=True,
        title=title,
        stop_turn=verdict.stop_turn,
    )


async def _finish_reading(reader: asyncio.Task[None]) -> None:
    """The rest of the output; a process that left the group may hold the pipe open."""
    await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
    if not reader.done():
        reader.cancel()
        await asyncio.wait({reader})
        return
    reader.result()  # a failure to stream is the call's failure


async def _uninterrupted(awaitable: Awaitable[T]) -> T:
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


def _outcome(run: _Run, *, timeout_ms: int, title: str, pgid: int, workdir: str) -> ToolOutcome:
    body = run.output.rstrip("\n") or "(no output)"
    exit_code: int | None = None
    if run.timed_out:
        status = (
            f"Command timed out after {timeout_ms} ms and was stopped (process group "
            "killed). If it needs longer and is not waiting for input, retry with a larger "
            "timeout."
        )
    else:
        returncode = run.returncode if run.returncode is not None else -signal.SIGKILL
        if returncode >= 0:
            exit_code = returncode
            status = f"Exit code: {exit_code}"
        else:
            exit_code = 128 - returncode
            status = f"Exit code: {exit_code} (killed by signal {_signal_name(-returncode)})"
        if run.leftovers:
            status += "\nProcesses it left running in the background were stopped."
    return ToolOutcome(
        output=f"{body}\n\n{status}",
        is_error=run.timed_out,
        title=title,
        metadata={
            "exit_code": exit_code,
            "timed_out": run.timed_out,
            "pgid": pgid,
            "workdir": workdir,
        },
    )


def _signal_name(number: int) -> str:
    try:
        return signal.Signals(number).name
    except ValueError:
        return str(number)


def _title(params: BashParams) -> str:
    if params.description and params.description.strip():
        return params.description.strip()
    return params.command.strip()[:_TITLE_CHARS]


def _error(message: str, title: str) -> ToolOutcome:
    return ToolOutcome(output=message, is_error=True, title=title)
