"""The bash tool: permissions derived from the command, and real commands in process groups.

Every test that runs a command is bounded: sleeps are killed by a timeout, a cancellation or
the tool itself, and waits for outside events poll with a deadline.
"""

from __future__ import annotations

import asyncio
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs
import pytest

from lsp_agent.core.permission.rules import ALLOWED, PermissionRequest, PermissionVerdict
from lsp_agent.core.permission.subjects import CommandSubject
from lsp_agent.core.tooling import SilentToolEvents, ToolOutcome
from lsp_agent.shell.process import group_alive
from lsp_agent.testing.permissions import RecordingAsk, allow_all, deny
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.base import ToolRunContext
from lsp_agent.tools.bash import (
    MAX_TIMEOUT_MS,
    BashParams,
    BashTool,
    OutputTail,
    PermissionPlan,
    plan_permissions,
)
from lsp_agent.workspace.boundary import WorkspaceBoundary

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX process groups")

TIMED_OUT = "Command timed out after 500 ms and was stopped (process group killed)."


class RecordingEvents(SilentToolEvents):
    """Records what the tool reports, in order; ``on_started`` runs inside process_started."""

    def __init__(self, on_started: Callable[[int, int], Awaitable[None]] | None = None) -> None:
        self.log: list[tuple[str, object]] = []
        self.started: list[tuple[int, int]] = []
        self.changed = asyncio.Event()
        self._on_started = on_started

    async def output(self, text: str) -> None:
        self.log.append(("output", text))
        self.changed.set()

    async def process_started(self, pgid: int, start_ticks: int) -> None:
        self.log.append(("started", (pgid, start_ticks)))
        self.started.append((pgid, start_ticks))
        if self._on_started is not None:
            await self._on_started(pgid, start_ticks)

    async def process_ended(self, pgid: int) -> None:
        self.log.append(("ended", pgid))

    @property
    def outputs(self) -> list[str]:
        return [str(value) for kind, value in self.log if kind == "output"]

    async def wait_for_output(self, predicate: Callable[[str], bool]) -> str:
        async with asyncio.timeout(5):
            while not predicate(text := "".join(self.outputs)):
                self.changed.clear()
                await self.changed.wait()
        return text


def context(
    ws: Path,
    *,
    ask: Callable[[PermissionRequest], Awaitable[PermissionVerdict]] = allow_all,
    events: RecordingEvents | None = None,
) -> ToolRunContext:
    ctx = tool_context(ws, ask=ask)
    return attrs.evolve(ctx, call=attrs.evolve(ctx.call, events=events or RecordingEvents()))


async def bash(
    ws: Path,
    command: str,
    *,
    ask: Callable[[PermissionRequest], Awaitable[PermissionVerdict]] = allow_all,
    events: RecordingEvents | None = None,
    tool: BashTool | None = None,
    **params: object,
) -> ToolOutcome:
    tool = tool or BashTool(hidden_env=())
    args = BashParams.model_validate({"command": command, **params})
    return await tool.run(args, context(ws, ask=ask, events=events))


def plan(
    ws: Path, command: str, *, workdir: Path | None = None, home: str = "/nonexistent-home"
) -> PermissionPlan:
    return plan_permissions(
        command,
        workdir=str(workdir or ws),
        boundary=WorkspaceBoundary([ws]),
        home=home,
    )


def alive(pid: int) -> bool:
    """Running (a zombie nobody reaped yet counts as gone)."""
    try:
        data = Path(f"/proc/{pid}/stat").read_bytes()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :][:1] not in (b"Z", b"X")


def pids_in(text: str) -> list[int]:
    return [int(line) for line in text.splitlines() if line.isdigit()]


def refuse_bash(request: PermissionRequest) -> PermissionVerdict:
    return deny("no commands") if request.permission == "bash" else ALLOWED


def refuse_outside(request: PermissionRequest) -> PermissionVerdict:
    if request.permission == "external_directory":
        return deny("not approved: outside the workspace")
    return ALLOWED


# --- permissions derived from the command -----------------------------------------------


def test_each_command_of_a_compound_line_is_a_pattern_with_its_arity_prefix(ws: Path) -> None:
    result = plan(ws, "git log --oneline | head -5 && ls -la")
    assert result.patterns == ("git log --oneline", "head -5", "ls -la")
    assert result.always == ("git log *", "head *", "ls *")
    assert result.outside == ()
    assert result.parsed


def test_redirections_stay_in_the_pattern(ws: Path) -> None:
    result = plan(ws, "echo test > output.txt")
    assert result.patterns == ("echo test > output.txt",)
    assert result.always == ("echo *",)


def test_assignments_give_the_resolved_and_the_written_pattern(ws: Path) -> None:
    result = plan(ws, "FOO=1 npm run dev")
    assert result.patterns == ("npm run dev", "FOO=1 npm run dev")
    assert result.always == ("npm run dev *", "FOO=1 npm run dev *")


def test_a_command_named_by_a_variable_is_unjudged_and_never_remembered(ws: Path) -> None:
    result = plan(ws, "$TOOL --all")
    assert result.unjudged == ("$TOOL --all",)
    assert result.always == ()


def test_nested_substitutions_give_their_own_patterns(ws: Path, outside: Path) -> None:
    result = plan(ws, f"echo $(cat {outside}/secret.txt)")
    assert result.patterns == (f"cat {outside}/secret.txt", f"echo $(cat {outside}/secret.txt)")
    assert result.outside == (str(outside),)


def test_cd_alone_needs_no_pattern(ws: Path) -> None:
    assert plan(ws, "cd .").patterns == ()
    assert plan(ws, "cd . && ls").patterns == ("ls",)


def test_a_parse_failure_makes_the_whole_command_the_pattern(ws: Path) -> None:
    result = plan(ws, 'echo "unterminated')
    assert not result.parsed
    assert result.patterns == ('echo "unterminated',)
    assert result.always == ()  # what cannot be judged is never saved


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf build",
        "cat src/a.py | head -5",
        "ls 2>/dev/null > /dev/null",
        "cd sub && cat ../x",
        "chmod +x run.sh",
        "mkdir -p a/b && touch a/b/c",
    ],
)
def test_paths_inside_the_workspace_or_unknowable_need_no_outside_access(
    ws: Path, command: str
) -> None:
    assert plan(ws, command).outside == ()


def test_paths_outside_the_workspace_name_their_folders(ws: Path, outside: Path) -> None:
    parent = str(ws.parent)
    assert plan(ws, "cat /etc/hostname").outside == ("/etc",)
    assert plan(ws, "cat ../x").outside == (parent,)
    assert plan(ws, "echo hi > ../x").outside == (parent,)
    assert plan(ws, "sort < ../outside/secret.txt").outside == (str(outside),)
    assert plan(ws, "rm ../outside/*.txt").outside == (str(outside),)
    assert plan(ws, "cd ../outside").outside == (str(outside),)
    assert plan(ws, "cp a.txt ../outside/").outside == (str(outside),)
    assert plan(ws, "cat ~/secret.txt", home=str(outside)).outside == (str(outside),)
    assert plan(ws, "cat '~/secret.txt'", home=str(outside)).outside == ()  # quoted: a name
    assert plan(ws, "cat $HOME/secret.txt", home=str(outside)).outside == (str(outside),)


def test_paths_after_cd_count_from_the_new_directory(ws: Path, outside: Path) -> None:
    result = plan(ws, "cd ../outside/sub && cat ../secret.txt")
    assert result.outside == (str(outside / "sub"), str(outside))
    # After `;` the cd may have failed: both directories count.
    assert set(plan(ws, "cd sub; cat ../../x").outside) == {str(ws.parent), str(ws.parent.parent)}


def test_an_approved_outside_workdir_counts_as_inside(ws: Path, outside: Path) -> None:
    assert plan(ws, "cat secret.txt", workdir=outside).outside == ()


# --- asking ---------------------------------------------------------------------------


async def test_one_bash_ask_holds_every_pattern_and_shows_the_command(ws: Path) -> None:
    ask = RecordingAsk(refuse_bash)
    command = "git log --oneline | head -5 && ls -la"

    outcome = await bash(ws, command, ask=ask, description="Show history")

    assert outcome.is_error
    assert "no commands" in outcome.output
    (request,) = ask.requests
    assert request.permission == "bash"
    assert request.patterns == ("git log --oneline", "head -5", "ls -la")
    assert request.always == ("git log *", "head *", "ls *")
    assert request.subject == CommandSubject(command=command, cwd=str(ws))
    assert request.subject.to_json() == {"type": "command", "command": command, "cwd": str(ws)}


async def test_a_refused_command_does_not_run(ws: Path) -> None:
    outcome = await bash(ws, "touch marker", ask=RecordingAsk(refuse_bash))

    assert outcome.is_error
    assert not (ws / "marker").exists()


async def test_cd_alone_asks_nothing_and_runs(ws: Path) -> None:
    (ws / "sub").mkdir()
    ask = RecordingAsk()

    outcome = await bash(ws, "cd sub", ask=ask)

    assert ask.requests == []
    assert not outcome.is_error
    assert outcome.exit_code == 0


async def test_an_outside_workdir_is_asked_and_refused_nothing_runs(ws: Path) -> None:
    ask = RecordingAsk(refuse_outside)

    outcome = await bash(ws, f"touch {ws}/marker", ask=ask, workdir="/")

    assert outcome.is_error
    assert ask.permissions() == ["external_directory"]
    assert ask.requests[0].always == ("/",)  # that folder itself, nothing below it
    assert not (ws / "marker").exists()


@pytest.mark.parametrize(
    ("command", "folder"),
    [
        ("cat /etc/hostname; touch marker", "/etc"),
        ("cat ../x; touch marker", "PARENT"),
        ("cd .. && cat x; touch marker", "PARENT"),
    ],
)
async def test_outside_paths_are_asked_once_and_refused_nothing_runs(
    ws: Path, command: str, folder: str
) -> None:
    folder = str(ws.parent) if folder == "PARENT" else folder
    ask = RecordingAsk(refuse_outside)

    outcome = await bash(ws, command, ask=ask)

    assert outcome.is_error
    assert "not approved: outside the workspace" in outcome.output
    assert "was not run" in outcome.output
    (request,) = ask.requests
    assert request.permission == "external_directory"
    assert request.patterns == (f"{folder}/*",)
    assert request.always == (f"{folder}/[*]",)  # that folder only, literal
    assert not (ws / "marker").exists()
    assert not (ws.parent / "marker").exists()


async def test_approved_outside_access_then_asks_for_the_command(ws: Path, outside: Path) -> None:
    ask = RecordingAsk()

    outcome = await bash(ws, "cat ../outside/secret.txt", ask=ask)

    assert ask.permissions() == ["external_directory", "bash"]
    assert ask.requests[0].patterns == (f"{outside}/*",)
    assert "TOP-SECRET-CONTENT" in outcome.output


async def test_an_approved_outside_workdir_is_asked_once(ws: Path, outside: Path) -> None:
    ask = RecordingAsk()

    outcome = await bash(ws, "cat secret.txt && pwd", ask=ask, workdir=str(outside))

    assert ask.permissions() == ["external_directory", "bash"]
    assert outcome.output.startswith(f"TOP-SECRET-CONTENT\n{outside}\n")
    assert outcome.details.workdir == str(outside)


async def test_the_stop_turn_of_a_refusal_is_kept(ws: Path) -> None:
    outcome = await bash(ws, "ls", ask=RecordingAsk(lambda r: deny("no", stop_turn=True)))

    assert outcome.is_error
    assert outcome.stop_turn


# --- running ----------------------------------------------------------------------------


async def test_output_and_a_non_zero_exit_code_are_reported(ws: Path) -> None:
    outcome = await bash(ws, "echo out; echo err >&2; exit 3", description="Fail on purpose")

    assert not outcome.is_error
    assert outcome.output == "out\nerr\n\nExit code: 3"
    assert outcome.title == "Fail on purpose"
    assert outcome.exit_code == 3
    assert outcome.details.timed_out is False
    assert outcome.details.workdir == str(ws)
    assert isinstance(outcome.details.pgid, int)


async def test_empty_output_says_so(ws: Path) -> None:
    outcome = await bash(ws, "true")

    assert outcome.output == "(no output)\n\nExit code: 0"
    assert outcome.title == "true"


async def test_the_title_is_the_command_cut_to_80_characters(ws: Path) -> None:
    command = "echo " + "x" * 100
    assert (await bash(ws, command)).title == command[:80]


async def test_the_ask_shows_the_command_not_only_the_models_description(ws: Path) -> None:
    # the model describes "rm notes.txt" as "Run hello.py": the person decides on the command
    (ws / "notes.txt").write_text("keep\n")
    ask = RecordingAsk(lambda _request: deny("no"))
    await bash(ws, "rm   notes.txt", ask=ask, description="Run hello.py")

    [request] = ask.requests
    assert request.title == "Run: rm notes.txt"
    assert request.description == "Run hello.py"
    assert (ws / "notes.txt").exists()


async def test_the_network_ask_shows_the_command(ws: Path) -> None:
    ask = RecordingAsk(
        lambda request: deny("no") if request.permission == "bash_network" else ALLOWED
    )
    await bash(ws, "curl example.test", ask=ask, network=True, description="Fetch it")

    assert ask.requests[-1].permission == "bash_network"
    assert ask.requests[-1].title == "Let this command use the network: curl example.test"


async def test_it_runs_in_the_workdir_with_stdin_empty(ws: Path) -> None:
    (ws / "sub").mkdir()

    outcome = await bash(ws, 'pwd; read line; echo "read=$?"', workdir="sub")

    assert outcome.output.startswith(f"{ws / 'sub'}\nread=1\n")


async def test_a_missing_workdir_is_an_error(ws: Path) -> None:
    outcome = await bash(ws, "ls", workdir="nope")

    assert outcome.is_error
    assert "nope" in outcome.output


@pytest.mark.parametrize("timeout", [0, -5, MAX_TIMEOUT_MS + 1])
async def test_timeouts_out_of_bounds_are_errors_and_nothing_runs(ws: Path, timeout: int) -> None:
    outcome = await bash(ws, "touch marker", timeout=timeout)

    assert outcome.is_error
    assert ("600000" in outcome.output) == (timeout > 0)
    assert not (ws / "marker").exists()


async def test_an_empty_command_is_an_error(ws: Path) -> None:
    assert (await bash(ws, "   ")).is_error


async def test_the_process_group_is_recorded_before_the_command_runs(ws: Path) -> None:
    seen: dict[str, object] = {}

    async def check(pgid: int, start_ticks: int) -> None:
        await asyncio.sleep(0.2)  # the command would have run by now if it were not held
        seen["marker before release"] = (ws / "marker").exists()
        seen["own group"] = os.getpgid(pgid) == pgid
        stat = Path(f"/proc/{pgid}/stat").read_bytes()
        seen["ticks"] = int(stat[stat.rfind(b")") + 2 :].split()[19]) == start_ticks

    events = RecordingEvents(on_started=check)
    outcome = await bash(ws, "touch marker; echo done", events=events)

    assert seen == {"marker before release": False, "own group": True, "ticks": True}
    assert (ws / "marker").exists()
    kinds = [kind for kind, _ in events.log]
    assert kinds == ["started", "output", "ended"]
    pgid = outcome.details.pgid
    assert [started_pgid for started_pgid, _ in events.started] == [pgid]
    assert events.log[-1] == ("ended", pgid)


async def test_output_is_streamed_as_it_comes(ws: Path) -> None:
    events = RecordingEvents()

    outcome = await bash(ws, "echo one; sleep 0.3; echo two", events=events)

    assert events.outputs[0] == "one\n"
    assert len(events.outputs) >= 2
    assert "".join(events.outputs) == "one\ntwo\n"
    assert outcome.output == "one\ntwo\n\nExit code: 0"


async def test_utf8_split_across_reads_is_decoded_whole(ws: Path) -> None:
    events = RecordingEvents()

    outcome = await bash(ws, r"printf '\303'; sleep 0.2; printf '\251\n'", events=events)

    assert outcome.output.startswith("é\n")
    assert "\ufffd" not in "".join(events.outputs)


async def test_hidden_variables_are_left_out_of_the_environment(ws: Path) -> None:
    env = {**os.environ, "LSP_TEST_SECRET_KEY": "s3cret", "LSP_TEST_VISIBLE": "shown"}
    tool = BashTool(hidden_env={"LSP_TEST_SECRET_KEY"}, env=env)

    outcome = await bash(
        ws, 'printenv LSP_TEST_SECRET_KEY; echo "rc=$? [$LSP_TEST_VISIBLE]"', tool=tool
    )

    assert outcome.output == "rc=1 [shown]\n\nExit code: 0"
    assert "LSP_TEST_SECRET_KEY" not in tool.child_env()


async def test_a_timeout_kills_the_whole_group_and_keeps_the_output(ws: Path) -> None:
    events = RecordingEvents()
    command = "sleep 1000 & echo $!; sleep 1000 & echo $!; sleep 1000"

    outcome = await bash(ws, command, timeout=500, events=events)

    assert outcome.is_error
    pids = pids_in(outcome.output)
    assert len(pids) == 2
    assert TIMED_OUT in outcome.output
    assert "retry with a larger timeout" in outcome.output
    assert outcome.details.timed_out is True
    assert outcome.exit_code is None
    assert not any(alive(pid) for pid in pids)
    assert not group_alive(outcome.details.pgid)
    assert events.log[-1] == ("ended", outcome.details.pgid)


async def test_cancelling_kills_the_whole_group(ws: Path) -> None:
    events = RecordingEvents()
    command = "sleep 1000 & echo $!; sleep 1000 & echo $!; sleep 1000"
    task = asyncio.create_task(bash(ws, command, events=events))
    text = await events.wait_for_output(lambda t: len(pids_in(t)) == 2)
    ((pgid, _),) = events.started

    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task

    assert not any(alive(pid) for pid in pids_in(text))
    assert not group_alive(pgid)
    assert events.log[-1] == ("ended", pgid)


async def test_processes_ignoring_sigterm_get_sigkill_after_the_grace(ws: Path) -> None:
    tool = BashTool(hidden_env=(), kill_grace=0.3)
    command = "trap '' TERM; sleep 1000 & echo $!; sleep 1000"
    started = time.monotonic()

    outcome = await bash(ws, command, timeout=300, tool=tool)

    assert time.monotonic() - started >= 0.6
    assert outcome.details.timed_out is True
    (pid,) = pids_in(outcome.output)
    assert not alive(pid)


async def test_background_processes_left_behind_are_stopped(ws: Path) -> None:
    outcome = await bash(ws, "sleep 1000 & echo $!")

    assert outcome.details.timed_out is False  # it never waited for the sleep
    (pid,) = pids_in(outcome.output)
    assert not alive(pid)
    assert not outcome.is_error
    assert "Exit code: 0\nProcesses it left running in the background were stopped." in (
        outcome.output
    )


async def test_a_command_killed_by_a_signal_reports_it(ws: Path) -> None:
    outcome = await bash(ws, "kill -KILL $$")

    assert outcome.exit_code == 128 + signal.SIGKILL
    assert "killed by signal SIGKILL" in outcome.output


async def test_if_recording_the_group_fails_nothing_runs(ws: Path) -> None:
    pgids: list[int] = []

    async def fail(pgid: int, start_ticks: int) -> None:
        pgids.append(pgid)
        raise RuntimeError("database is gone")

    with pytest.raises(RuntimeError, match="database is gone"):
        await bash(ws, "touch marker", events=RecordingEvents(on_started=fail))

    assert not (ws / "marker").exists()
    assert not group_alive(pgids[0])


class BrokenStream(RecordingEvents):
    async def output(self, text: str) -> None:
        raise ConnectionError("editor went away")


async def test_a_failing_output_stream_does_not_lose_the_output(ws: Path) -> None:
    outcome = await bash(ws, "echo one; echo two", events=BrokenStream())

    assert outcome.output == "one\ntwo\n\nExit code: 0"


_HELPER = """
import asyncio, sys
import attrs
from lsp_agent.core.tooling import SilentToolEvents
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool

class Print(SilentToolEvents):
    async def output(self, text):
        sys.stdout.write(text)
        sys.stdout.flush()

async def main():
    ctx = tool_context(sys.argv[1], ask=allow_all)
    ctx = attrs.evolve(ctx, call=attrs.evolve(ctx.call, events=Print()))
    await BashTool(hidden_env=()).run(BashParams(command="echo $$; exec sleep 1000"), ctx)

asyncio.run(main())
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="PR_SET_PDEATHSIG is Linux's")
async def test_the_command_dies_with_the_agent(ws: Path, tmp_path: Path) -> None:
    script = tmp_path / "agent.py"
    script.write_text(_HELPER)
    agent = await asyncio.create_subprocess_exec(
        sys.executable, str(script), str(ws), stdout=asyncio.subprocess.PIPE
    )
    assert agent.stdout is not None
    try:
        async with asyncio.timeout(5):
            pid = int(await agent.stdout.readline())
        assert alive(pid)
    finally:
        agent.kill()  # SIGKILL: no cleanup code of the agent runs
        await agent.wait()

    for _ in range(150):  # up to 3 s
        if not alive(pid):
            break
        await asyncio.sleep(0.02)
    assert not alive(pid)


def test_the_output_tail_keeps_only_the_last_characters() -> None:
    tail = OutputTail(limit=10)
    for chunk in ("abcd", "efgh", "ijkl", "mn"):
        tail.append(chunk)

    assert tail.dropped == 4
    assert tail.text() == "…earlier output dropped (4 characters)…\nefghijklmn"
    small = OutputTail(limit=10)
    small.append("ok")
    assert small.text() == "ok"
