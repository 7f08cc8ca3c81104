"""The ``bash`` tool: run a command line in the workspace, in its own process group.

Before anything runs, permission is derived from the command itself
(:mod:`lsp_agent.shell.plan`): each simple command's resolved words (wrappers, paths,
quoting and assignments seen through) are its patterns; every argument that could be a path,
the working directory and redirection targets are judged, and what leaves the workspace or
cannot be judged needs ``external_directory`` first, in one ask.

The command is started by :class:`~lsp_agent.sandbox.CommandSandbox`: inside bubblewrap
(workspace read-write, the rest read-only, ``$HOME`` and the data folder hidden, no network
unless ``network`` is set and ``bash_network`` allows it, its own PID namespace), or, where
the sandbox is off, under a supervisor that ends whatever it leaves behind. That launch is
hosted by a :class:`~lsp_agent.shell.runner.CommandRunner`: by default
:class:`~lsp_agent.shell.runner.LocalRunner` (its own process group here, recorded for
recovery, output streamed, the whole group stopped on timeout or cancellation), or an ACP
client's terminal (``lsp_agent.acp.terminal``). Either way the permission asks before and the
outcome after are the same. The environment is the agent's, less the variables that hold its
own provider keys.
"""

from __future__ import annotations

import os
import signal
from collections.abc import Collection, Mapping, Sequence

import attrs
from pydantic import BaseModel, ConfigDict, Field

from lsp_agent.core.messages import ToolKind
from lsp_agent.core.permission.rules import PermissionRequest, PermissionVerdict, literal
from lsp_agent.core.permission.subjects import CommandSubject
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.core.tool_details import CommandDetails
from lsp_agent.core.tooling import ToolCallContext, ToolOutcome
from lsp_agent.sandbox import CommandSandbox, Launch, SandboxUnavailable
from lsp_agent.shell.plan import PermissionPlan, plan_permissions
from lsp_agent.shell.process import shell_argv
from lsp_agent.shell.runner import (
    MAX_KEPT_CHARS,
    CommandFailed,
    CommandRun,
    CommandRunner,
    CommandSpec,
    LocalRunner,
    OutputTail,
)
from lsp_agent.tools.base import ToolRunContext, load_description, refusal
from lsp_agent.workspace.boundary import WorkspaceBoundary

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
_TITLE_CHARS = 80
_ASK_TITLE_CHARS = 200


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


# --- the tool ---------------------------------------------------------------------------


class BashTool:
    """Implements ``Tool[BashParams]``.

    ``hidden_env``: names of environment variables the command must not see (the agent's
    provider keys). ``env``: the environment to start from (default ``os.environ`` at run
    time). ``kill_grace``: seconds between ``SIGTERM`` and ``SIGKILL`` when stopping.
    ``sandbox``: how commands are confined (default: off, supervised only). ``runner``:
    where the confined command runs (default: :class:`LocalRunner`, here).
    """

    name = "bash"
    kind: ToolKind = "execute"
    permission = PermissionKind.BASH
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
        runner: CommandRunner | None = None,
    ) -> None:
        self.description = load_description(self.name)
        self._hidden = frozenset(hidden_env)
        self._env = env
        self._kill_grace = kill_grace
        self._max_kept = max_kept_chars
        self._sandbox = sandbox or CommandSandbox("off")
        self._runner: CommandRunner = runner or LocalRunner()
        self._noticed: set[str] = set()  # sessions told that the sandbox is off

    def child_env(self) -> dict[str, str]:
        """The command's environment."""
        source = os.environ if self._env is None else self._env
        return {k: v for k, v in source.items() if k not in self._hidden}

    def describe(self, params: BashParams, roots: Sequence[str]) -> str:
        return f"Run {_command_line(params.command)}"

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
            shell_argv(command, env, avoid=(*ctx.boundary.roots, *plan.outside, workdir)),
            workdir=workdir,
            writable=(*ctx.boundary.roots, *plan.outside),
            env=env,
            network=params.network,
            grace=self._kill_grace,
            report=self._runner.inherits_descriptors,
        )
        if isinstance(launch, SandboxUnavailable):
            return _error(launch.message(), title)
        spec = CommandSpec(
            launch=launch,
            workdir=workdir,
            env=env,
            hidden_env=self._hidden,
            timeout=timeout_ms / 1000,
            kill_grace=self._kill_grace,
            max_kept_chars=self._max_kept,
        )
        try:
            run = await self._runner.run(spec, ctx)
        finally:
            launch.close()
        if isinstance(run, CommandFailed):
            return _error(run.message, title)
        outcome = _outcome(run, timeout_ms=timeout_ms, title=title, workdir=workdir)
        return self._with_sandbox_note(outcome, launch, ctx.call.session_id)

    async def run_typed(
        self, command: str, *, session_id: str, roots: Sequence[str], timeout: float
    ) -> CommandRun | CommandFailed:
        """A command the person typed (``run --until``), in the first root: their typing
        approved it, so nothing is asked; the same sandbox holds it as the model's commands,
        here (the local runner), and ``timeout`` seconds stop it."""
        env = self.child_env()
        workdir = roots[0]
        launch = await self._sandbox.prepare(
            shell_argv(command, env, avoid=tuple(roots)),
            workdir=workdir,
            writable=tuple(roots),
            env=env,
            network=False,
            grace=self._kill_grace,
            report=True,
        )
        if isinstance(launch, SandboxUnavailable):
            return CommandFailed(launch.message())
        spec = CommandSpec(
            launch=launch,
            workdir=workdir,
            env=env,
            hidden_env=self._hidden,
            timeout=timeout,
            kill_grace=self._kill_grace,
            max_kept_chars=self._max_kept,
        )
        try:
            return await LocalRunner().run(spec, _TypedRun(session_id, tuple(roots)))
        finally:
            launch.close()

    def _with_sandbox_note(self, outcome: ToolOutcome, launch: Launch, session: str) -> ToolOutcome:
        """Record whether it was sandboxed; tell each session once that it was not."""
        details = outcome.details
        if isinstance(details, CommandDetails):
            details = attrs.evolve(details, sandboxed=launch.sandboxed)
        output = outcome.output
        if launch.notice is not None and session not in self._noticed:
            self._noticed.add(session)
            output = f"{output}\n{launch.notice}"
        return attrs.evolve(outcome, output=output, details=details)


class _TypedRun:
    """The run context of a typed command: no tool call, nothing to ask, nothing shown."""

    def __init__(self, session_id: str, roots: tuple[str, ...]) -> None:
        self.call = ToolCallContext(
            session_id=session_id,
            message_id="",
            tool_call_id="",
            workspace_roots=roots,
            ask=_never_asked,
        )
        self.boundary = WorkspaceBoundary(list(roots))


async def _never_asked(request: PermissionRequest) -> PermissionVerdict:
    raise AssertionError("a typed command asks nothing")


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
    """Ask for what the command needs: the folders outside the workspace it touches first
    (``external_directory``), then the command itself (``bash``). What cannot be judged
    before it runs (interpreter code, a path only the shell knows) is part of the command's
    one ask, in words: only a person may allow it, once. The plan when it may run, else the
    refusal the model reads."""
    plan = plan_permissions(command, workdir=workdir, boundary=ctx.boundary, home=home, env=env)
    subject = CommandSubject(command=command, cwd=workdir)
    if plan.hidden:
        return ToolOutcome(
            output=f"The command touches {', '.join(plan.hidden)}, in the agent's own data "
            "folder or a credential store, which no tool may access. The command was not run.",
            is_error=True,
            title=title,
            details=CommandDetails(workdir=workdir),
        )
    if plan.outside:
        folders = tuple(f"{folder.rstrip('/')}/*" for folder in plan.outside)
        what = f"touches {', '.join(plan.outside)}, outside the workspace"
        verdict = await ctx.ask(
            PermissionRequest(
                permission=PermissionKind.EXTERNAL_DIRECTORY,
                patterns=folders,
                always=tuple(literal(folder) for folder in folders),  # never a subfolder
                title=f"Run a command that {what}",
                description=description,
                subject=subject,
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
                details=CommandDetails(workdir=workdir),
                stop_turn=verdict.stop_turn,
            )
    if plan.patterns or plan.unknown:
        why = unjudged_reason(plan)
        verdict = await ctx.ask(
            PermissionRequest(
                permission=PermissionKind.BASH,
                patterns=plan.patterns,
                # what cannot be judged is asked every time: nothing to remember
                always=() if plan.unknown else plan.always,
                title=f"Run: {_command_line(command)}",
                description="\n".join(part for part in (description, why) if part) or None,
                subject=subject,
                unjudged=(*plan.unjudged, *plan.unknown),
            )
        )
        if not verdict.allowed:
            outcome = refusal(verdict, title=title)
            return attrs.evolve(outcome, details=CommandDetails(workdir=workdir))
    return plan


def unjudged_reason(plan: PermissionPlan) -> str | None:
    """Why a command is asked of a person every time, in words a user reads in the ask:
    the code it runs, or the paths only the running shell knows; None when nothing of it
    is beyond judging."""
    paths = [word for word in plan.unknown if word not in plan.code]
    reasons = []
    if plan.code:
        reasons.append(
            f"it runs code that cannot be checked before it runs ({'; '.join(plan.code)})"
        )
    if paths:
        reasons.append(f"which files it uses is only known once it runs ({'; '.join(paths)})")
    if not reasons:
        return None
    return (
        f"Asked every time because {' and '.join(reasons)}: no rule or saved approval can "
        "allow it, only you, once."
    )


async def _authorize_network(
    params: BashParams, ctx: ToolRunContext, plan: PermissionPlan, *, workdir: str
) -> ToolOutcome | None:
    """``network: true``: one ``bash_network`` ask for the command's patterns (the same as
    ``bash``'s). None when granted, else the refusal."""
    title = _title(params)
    verdict = await ctx.ask(
        PermissionRequest(
            permission=PermissionKind.BASH_NETWORK,
            patterns=plan.patterns or (params.command,),
            always=plan.always,
            title=f"Let this command use the network: {_command_line(params.command)}",
            description=params.description,
            subject=CommandSubject(command=params.command, cwd=workdir),
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


def _outcome(run: CommandRun, *, timeout_ms: int, title: str, workdir: str) -> ToolOutcome:
    body = run.output.rstrip("\n") or "(no output)"
    exit_code: int | None = None
    if run.limit is not None:
        status = (
            f"Command stopped: {run.limit}. Its processes were ended. If the work needs more, "
            "do it in smaller steps, or ask the user to raise the limit."
        )
    elif run.timed_out:
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
        is_error=run.timed_out or run.limit is not None,
        title=title,
        exit_code=exit_code,
        details=CommandDetails(
            workdir=workdir,
            timed_out=run.timed_out,
            limit=run.limit,
            pgid=run.pgid,
            terminal_id=run.terminal_id,
        ),
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


def _command_line(command: str) -> str:
    """The command itself on one line, for a permission ask's title: the person decides on
    what runs, not on the model's description of it (which the ask carries separately)."""
    line = " ".join(command.split())
    return line if len(line) <= _ASK_TITLE_CHARS else line[: _ASK_TITLE_CHARS - 1] + "…"


def _error(message: str, title: str) -> ToolOutcome:
    return ToolOutcome(output=message, is_error=True, title=title)
