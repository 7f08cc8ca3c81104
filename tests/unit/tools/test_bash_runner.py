"""The bash tool's runner seam: a host-provided runner gets the sandboxed launch (never the
raw command) after the same permission asks, and its result becomes the same outcome.

The fake runner here records what it was handed and answers a scripted result; the supervisor
launch it receives is also started for real, to show it runs without a status pipe.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
from pathlib import Path
from typing import Any

import attrs
import pytest

from lsp_agent.core.messages import ToolCallPart
from lsp_agent.core.permission.rules import ALLOWED
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.sandbox import Availability, CommandSandbox
from lsp_agent.shell.runner import CommandFailed, CommandRun, CommandSpec
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny
from lsp_agent.testing.tools import call_context, tool_context
from lsp_agent.tools.base import ToolRunContext
from lsp_agent.tools.bash import BashParams, BashTool
from lsp_agent.tools.registry import default_registry
from lsp_agent.workspace.truncation import OutputLimits

KEY = "sk-test-0123456789abcdefghijklmnop"


class FakeRunner:
    """A host runner: records each spec, answers ``result``; ``local`` says whether the
    command would be this process's child."""

    def __init__(
        self, result: CommandRun | CommandFailed | None = None, *, local: bool = False
    ) -> None:
        self.specs: list[CommandSpec] = []
        self.result = result or CommandRun(
            returncode=0, timed_out=False, leftovers=False, output="hosted\n"
        )
        self.inherits_descriptors = local

    async def run(self, spec: CommandSpec, ctx: ToolRunContext) -> CommandRun | CommandFailed:
        self.specs.append(spec)
        spec.launch.spawned()
        return self.result


def tool(runner: FakeRunner, **options: Any) -> BashTool:
    env = {"PATH": os.environ.get("PATH", os.defpath), "ANTHROPIC_API_KEY": KEY, "KEEP": "1"}
    return BashTool(hidden_env=("ANTHROPIC_API_KEY",), env=env, runner=runner, **options)


async def run(ws: Path, bash: BashTool, command: str, **params: Any) -> ToolOutcome:
    args = BashParams.model_validate({"command": command, **params})
    return await bash.run(args, tool_context(ws, ask=allow_all))


async def test_the_runner_gets_the_supervised_launch_not_the_raw_command(ws: Path) -> None:
    runner = FakeRunner()
    outcome = await run(ws, tool(runner), "echo hi", timeout=1500)
    [spec] = runner.specs
    argv = spec.launch.argv
    assert argv[-3:][1:] == ["-c", "echo hi"]  # bash -c COMMAND, at the end of the launch
    assert "echo hi" not in argv[:-1]
    assert argv[1:3] == ["-I", "-S"]
    assert argv[3].endswith("supervisor.py")
    assert argv[4] == "-"  # a host cannot inherit the status pipe: none is made
    assert spec.launch.pass_fds == ()
    assert spec.workdir == str(ws)
    assert spec.timeout == 1.5
    assert "ANTHROPIC_API_KEY" not in spec.env
    assert spec.env["KEEP"] == "1"
    assert spec.hidden_env == frozenset({"ANTHROPIC_API_KEY"})
    assert outcome.output.startswith("hosted\n\nExit code: 0")
    assert not outcome.is_error


async def test_a_local_runner_still_gets_the_status_pipe(ws: Path) -> None:
    runner = FakeRunner(local=True)
    await run(ws, tool(runner), "true")
    [spec] = runner.specs
    assert spec.launch.argv[4].isdigit()
    assert spec.launch.pass_fds == (int(spec.launch.argv[4]),)


async def test_the_sandboxed_launch_is_what_the_runner_gets_when_bubblewrap_works(
    ws: Path,
) -> None:
    runner = FakeRunner()
    sandbox = CommandSandbox("auto", check=lambda env, avoid: _works("/opt/fake/bwrap"))
    await run(ws, tool(runner, sandbox=sandbox), "make test")
    [spec] = runner.specs
    argv = spec.launch.argv
    assert argv[0] == "/opt/fake/bwrap"
    assert argv[argv.index("--") + 1 :][1:] == ["-c", "make test"]
    assert "--unshare-net" in argv
    assert spec.launch.sandboxed


async def test_the_supervisor_runs_a_hosted_launch_without_a_status_pipe(ws: Path) -> None:
    runner = FakeRunner()
    await run(ws, tool(runner), "echo from-the-host; exit 3")
    [spec] = runner.specs
    done = await asyncio.to_thread(
        subprocess.run,
        spec.launch.argv,
        cwd=spec.workdir,
        env=dict(spec.env),
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.stdout == "from-the-host\n"
    assert done.returncode == 3
    assert done.stderr == ""


async def test_a_refused_command_never_reaches_the_runner(ws: Path) -> None:
    runner = FakeRunner()
    bash = tool(runner)
    args = BashParams.model_validate({"command": "rm -rf build"})
    ask = RecordingAsk(lambda r: deny("no") if r.permission == "bash" else ALLOWED)
    outcome = await bash.run(args, tool_context(ws, ask=ask))
    assert outcome.is_error
    assert runner.specs == []


async def test_the_permission_asks_are_the_same_as_without_a_runner(ws: Path) -> None:
    asked = {}
    for name, bash in (("hosted", tool(FakeRunner())), ("local", BashTool(hidden_env=()))):
        ask = RecordingAsk()
        args = BashParams.model_validate({"command": "git status && ls src"})
        await bash.run(args, tool_context(ws, ask=ask))
        asked[name] = [(r.permission, r.patterns, r.always) for r in ask.requests]
    assert asked["hosted"] == asked["local"]
    assert asked["hosted"] == [("bash", ("git status", "ls src"), ("git status *", "ls *"))]


@pytest.mark.parametrize(
    ("result", "expected", "exit_code", "timed_out"),
    [
        (
            CommandRun(returncode=2, timed_out=False, leftovers=False, output="no\n"),
            "no\n\nExit code: 2",
            2,
            False,
        ),
        (
            CommandRun(returncode=-signal.SIGTERM, timed_out=False, leftovers=False, output=""),
            "(no output)\n\nExit code: 143 (killed by signal SIGTERM)",
            143,
            False,
        ),
        (
            CommandRun(returncode=None, timed_out=True, leftovers=False, output="slow"),
            "slow\n\nCommand timed out after 500 ms and was stopped",
            None,
            True,
        ),
    ],
)
async def test_the_runners_result_becomes_the_usual_outcome(
    ws: Path, result: CommandRun, expected: str, exit_code: int | None, timed_out: bool
) -> None:
    hosted = attrs.evolve(result, terminal_id="term_7")
    outcome = await run(ws, tool(FakeRunner(hosted)), "x", timeout=500)
    assert outcome.output.startswith(expected)
    assert outcome.is_error == result.timed_out
    assert outcome.details.terminal_id == "term_7"
    assert outcome.details.workdir == str(ws)
    assert outcome.details.pgid is None
    assert outcome.exit_code == exit_code
    assert outcome.details.timed_out is timed_out


async def test_a_runner_failure_is_an_error_outcome(ws: Path) -> None:
    runner = FakeRunner(CommandFailed("The editor's terminal could not start the command: no"))
    outcome = await run(ws, tool(runner), "ls")
    assert outcome.is_error
    assert outcome.output == "The editor's terminal could not start the command: no"


async def test_the_registry_filters_and_limits_a_hosted_output(ws: Path, spill_root: Path) -> None:
    lines = "".join(f"line {n}\n" for n in range(5000))
    runner = FakeRunner(
        CommandRun(returncode=0, timed_out=False, leftovers=False, output=f"{KEY}\n{lines}")
    )
    registry = default_registry(
        RecordingEditor(),
        limits=OutputLimits(max_lines=100),
        spill_root=spill_root,
        secrets=SecretFilter({"ANTHROPIC_API_KEY": KEY}),
        hidden_env=("ANTHROPIC_API_KEY",),
        command_runner=runner,
    )
    call = ToolCallPart(tool_call_id="call_1", name="bash", input={"command": "cat log"})
    outcome = await registry.execute(call, call_context(ws, ask=allow_all))
    assert len(runner.specs) == 1
    assert KEY not in outcome.output
    assert outcome.spill is not None
    assert "[redacted:ANTHROPIC_API_KEY]" in outcome.output
    assert len(outcome.output.splitlines()) < 200


def _works(bwrap: str) -> Availability:
    return Availability(works=True, reason="fake", bwrap=bwrap)
