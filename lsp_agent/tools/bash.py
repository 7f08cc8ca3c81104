"""The ``bash`` tool: run a command line in the workspace, in its own process group.

Before anything runs, permission is derived from the command itself (:func:`plan_permissions`):
each simple command (pipelines, lists, subshells and ``$( … )`` included) is one pattern, and
its arity prefix (:mod:`lsp_agent.tools.arity`) plus `` *`` what an "always" answer saves. The
working directory, ``cd`` targets, the path arguments of file commands and redirection targets
are resolved (``cd`` moves later commands, ``~`` is the command's ``HOME``); any that leaves
the workspace needs ``external_directory`` for its folder first, in one ask.

The command runs through :class:`~lsp_agent.tools.process.ProcessGroup`: its process group is
reported to the loop (``process_started``) before the command starts and ``process_ended``
after, output is streamed to the editor as it comes, and on timeout or cancellation the whole
group is stopped (``SIGTERM``, ``SIGKILL`` after a grace period). Background processes still
running when the command ends are stopped too. The environment is the agent's, less the
variables that hold its own provider keys.

What the command reads once it runs is not confined here: that is the sandbox's job.
"""

from __future__ import annotations

import asyncio
import codecs
import logging
import os
import signal
from collections import deque
from collections.abc import Awaitable, Callable, Collection, Iterator, Mapping
from typing import TypeVar

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.permission import PermissionRequest
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.tools.arity import always_pattern
from lsp_agent.tools.base import ToolRunContext, load_description, refusal
from lsp_agent.tools.boundary import Outside, WorkspaceBoundary
from lsp_agent.tools.process import ProcessGroup, shell_argv
from lsp_agent.tools.shell_parse import SimpleCommand, Word, parse

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

_CD_FAMILY = frozenset({"cd", "pushd", "popd", "chdir"})
_FILE_COMMANDS = frozenset(
    {"rm", "rmdir", "cp", "mv", "mkdir", "touch", "chmod", "chown", "chgrp", "ln", "tee"}
    | {"cat", "head", "tail", "less", "more", "ls", "stat", "wc", "du", "diff", "file"}
)
_DEVICES = frozenset(
    {"/dev/null", "/dev/zero", "/dev/random", "/dev/urandom", "/dev/tty"}
    | {"/dev/stdin", "/dev/stdout", "/dev/stderr"}
)
_WILDCARDS = "*?[{"

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


# --- permissions ------------------------------------------------------------------------


@attrs.frozen(kw_only=True)
class PermissionPlan:
    """What a command line needs before it may run."""

    patterns: tuple[str, ...]
    """One per simple command (its source text, redirections included); ``cd`` has none."""
    always: tuple[str, ...]
    """What "always allow" saves: ``git log *`` for ``git log --oneline``."""
    outside: tuple[str, ...]
    """Folders outside the workspace the command touches (``external_directory``)."""
    parsed: bool
    """False: the parser failed; the whole command is the one pattern."""


def plan_permissions(
    command: str, *, workdir: str, boundary: WorkspaceBoundary, home: str | None
) -> PermissionPlan:
    """The patterns and outside folders of ``command`` run in ``workdir``.

    ``workdir`` is absolute and already approved (it counts as inside); ``home`` is what ``~``
    means to the command (None: ``~`` paths are not judged).
    """
    script = parse(command)
    planner = _Planner(workdir=workdir, boundary=boundary, home=home)
    try:
        script.walk(frozenset({workdir}), planner.step)
    except RecursionError:
        script = attrs.evolve(script, ok=False)  # too deep to follow: ask for it whole
    if script.ok:
        patterns, always = tuple(_unique(planner.patterns)), tuple(_unique(planner.always))
    else:
        patterns = always = (command,)
    return PermissionPlan(
        patterns=patterns, always=always, outside=tuple(planner.outside), parsed=script.ok
    )


class _Planner:
    """The step :meth:`ParsedScript.walk` calls: collects patterns and outside folders, and
    tells where ``cd`` moves the shell."""

    def __init__(self, *, workdir: str, boundary: WorkspaceBoundary, home: str | None) -> None:
        self._workdir = workdir
        self._boundary = boundary
        self._home = home
        self._visited: set[str] = {workdir}
        self.patterns: list[str] = []
        self.always: list[str] = []
        self.outside: dict[str, None] = {}  # insertion-ordered set

    def step(self, command: SimpleCommand, where: frozenset[str]) -> frozenset[str] | None:
        for redirect in command.redirects:
            if redirect.target is not None:
                self._check(redirect.target, where)
        if not command.is_command:
            return None
        name = command.name
        if name in _CD_FAMILY:
            return self._change_directory(command, where)
        self.patterns.append(command.text)
        self.always.append(_always(command))
        if name in _FILE_COMMANDS:
            for word in _path_arguments(command.words[1:]):
                self._check(word, where)
        return None

    def _change_directory(
        self, command: SimpleCommand, where: frozenset[str]
    ) -> frozenset[str] | None:
        arguments = list(_path_arguments(command.words[1:]))
        back = command.name == "popd" or (command.name == "pushd" and not arguments)
        if back or any(w.value == "-" or (w.value or "").startswith("+") for w in arguments):
            return frozenset(self._visited)  # back to somewhere it has been (the stack)
        target = self._literal_path(arguments[0]) if arguments else self._home
        if target is None:
            return None  # unknown until it runs ($DIR)
        moved = frozenset(os.path.realpath(os.path.join(d, target)) for d in where)
        for directory in sorted(moved):
            self._note_outside(directory, directory=True)
        self._visited |= moved
        return moved

    def _check(self, word: Word, where: frozenset[str]) -> None:
        path = self._literal_path(word)
        if path is None:
            return
        for directory in sorted(where):
            full = os.path.normpath(os.path.join(directory, path))
            if full in _DEVICES or full.startswith("/dev/fd/"):
                continue
            self._note_outside(full, directory=False)

    def _note_outside(self, path: str, *, directory: bool) -> None:
        where = self._boundary.resolve(path, extra_roots=(self._workdir,))
        if not isinstance(where, Outside):
            return
        folder = where.resolved
        if not directory and not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        self.outside.setdefault(folder, None)

    def _literal_path(self, word: Word) -> str | None:
        """The path a word names, cut at its first wildcard; None when only the running shell
        knows (``$x``, backticks, ``$( … )``)."""
        value = word.value
        if value is None or "$" in word.text or "`" in word.text or word.text.startswith("("):
            return None
        if word.text.startswith("~"):  # only an unquoted ~ is expanded
            head, sep, rest = value.partition("/")
            if head == "~":
                if self._home is None:
                    return None
                value = os.path.join(self._home, rest) if sep else self._home
            else:
                expanded = os.path.expanduser(head)
                if expanded == head:
                    return value  # ~nosuchuser stays a plain name
                value = os.path.join(expanded, rest) if sep else expanded
        cut = min((i for i in (value.find(c) for c in _WILDCARDS) if i >= 0), default=-1)
        if cut >= 0:
            value = value[:cut] or "."
        return value


def _path_arguments(words: tuple[Word, ...]) -> Iterator[Word]:
    """The arguments that are not options (everything after ``--``)."""
    options = True
    for word in words:
        value = word.value if word.value is not None else word.text
        if options and value == "--":
            options = False
            continue
        if options and value.startswith("-") and value != "-":
            continue
        yield word


def _always(command: SimpleCommand) -> str:
    if not command.words or command.words[0].value is None:
        return command.text  # $CMD …: only this exact text
    words = [w.value if w.value is not None else w.text for w in command.words]
    prefix = f"{command.assignments} " if command.assignments else ""
    return prefix + always_pattern(words)


def _unique(items: list[T]) -> list[T]:
    return list(dict.fromkeys(items))


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
    """

    name = "bash"
    Params = BashParams

    def __init__(
        self,
        *,
        hidden_env: Collection[str],
        env: Mapping[str, str] | None = None,
        kill_grace: float = KILL_GRACE_SECONDS,
        max_kept_chars: int = MAX_KEPT_CHARS,
    ) -> None:
        self.description = load_description(self.name)
        self._hidden = frozenset(hidden_env)
        self._env = env
        self._kill_grace = kill_grace
        self._max_kept = max_kept_chars

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
        refused = await _authorize(params, ctx, workdir=workdir, home=env.get("HOME"))
        if refused is not None:
            return refused

        try:
            group = await ProcessGroup.spawn(shell_argv(command, env), cwd=workdir, env=env)
        except OSError as exc:
            return _error(f"Could not start the command: {exc.strerror or exc}", title)
        run = await self._supervise(group, ctx, timeout_ms / 1000)
        return _outcome(run, timeout_ms=timeout_ms, title=title, pgid=group.pgid, workdir=workdir)

    async def _supervise(self, group: ProcessGroup, ctx: ToolRunContext, timeout: float) -> _Run:
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
            leftovers = not timed_out and group.alive()
            if timed_out or leftovers:
                await group.stop(self._kill_grace)
            await _finish_reading(reader)
        except BaseException:
            await _uninterrupted(self._abandon(group, reader))
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

    async def _abandon(self, group: ProcessGroup, reader: asyncio.Task[None]) -> None:
        await group.stop(self._kill_grace)
        if not reader.done():
            await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            reader.cancel()
            await asyncio.wait({reader})


async def _authorize(
    params: BashParams, ctx: ToolRunContext, *, workdir: str, home: str | None
) -> ToolOutcome | None:
    """Ask for what the command needs: outside folders first, then the commands. None when
    it may run, else the refusal the model reads."""
    title = _title(params)
    plan = plan_permissions(params.command, workdir=workdir, boundary=ctx.boundary, home=home)
    subject = {"type": "command", "command": params.command, "cwd": workdir}
    if plan.outside:
        folders = tuple(f"{folder.rstrip('/')}/*" for folder in plan.outside)
        verdict = await ctx.ask(
            PermissionRequest(
                permission="external_directory",
                patterns=folders,
                always=folders,
                title=f"Run a command that touches {', '.join(plan.outside)}, "
                "outside the workspace",
                description=params.description,
                subject=subject,
            )
        )
        if not verdict.allowed:
            message = (
                f"The command touches {', '.join(plan.outside)}, outside the workspace "
                f"({', '.join(ctx.boundary.roots)}); that needs the external_directory "
                "permission. The command was not run."
            )
            return ToolOutcome(
                output=f"{message}\n{verdict.message}".strip(),
                is_error=True,
                title=title,
                metadata={"outside": list(plan.outside), "workdir": workdir},
                stop_turn=verdict.stop_turn,
            )
    if plan.patterns:
        verdict = await ctx.ask(
            PermissionRequest(
                permission="bash",
                patterns=plan.patterns,
                always=plan.always,
                title=f"Run: {title}",
                description=params.description,
                subject=subject,
            )
        )
        if not verdict.allowed:
            return refusal(verdict, title=title)
    return None


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
