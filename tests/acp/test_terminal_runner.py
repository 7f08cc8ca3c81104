"""``ClientTerminalRunner``: the bash tool through an ACP client's ``terminal/*``, in process.

The client is :class:`~tests.support.acp_terminal_client.TerminalChannel`, which spawns what
it is given, merging its own environment in like an editor does; the peer and the bash tool
are the real ones. Every command is bounded by the tool's timeout or a cancellation.
"""

from __future__ import annotations

import asyncio
import os
import sys
from pathlib import Path
from typing import Any

import attrs
import pytest
from acp.exceptions import RequestError

from lsp_agent.acp.editor import PROMPTING
from lsp_agent.acp.peer import AcpPeer
from lsp_agent.acp.terminal import ClientTerminalRunner
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.shell.process import group_alive
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool
from tests.support.acp_terminal_client import TerminalChannel, running
from tests.support.waiting import wait_until

KEY = "sk-ant-test-0123456789abcdefghijkl"
HIDDEN = "ANTHROPIC_API_KEY"


@pytest.fixture
def ws(workspace: Path) -> Path:
    return Path(os.path.realpath(workspace))


@attrs.define
class Setup:
    channel: TerminalChannel
    tool: BashTool
    attached: list[tuple[str, str, str]]


def setup(*, max_kept_chars: int = 1 << 20, channel: TerminalChannel | None = None) -> Setup:
    # The client's own environment holds the key, as an editor started from a shell may.
    channel = channel or TerminalChannel(base_env={**os.environ, HIDDEN: KEY}, kill_grace=3)
    attached: list[tuple[str, str, str]] = []
    runner = ClientTerminalRunner(AcpPeer(channel), attached=lambda *ids: attached.append(ids))
    tool = BashTool(
        hidden_env=(HIDDEN,),
        env={**os.environ, HIDDEN: KEY},
        runner=runner,
        kill_grace=1,
        max_kept_chars=max_kept_chars,
    )
    return Setup(channel=channel, tool=tool, attached=attached)


async def bash(ws: Path, s: Setup, command: str, **params: Any) -> ToolOutcome:
    args = BashParams.model_validate({"command": command, **params})
    token = PROMPTING.set("ses_1")
    try:
        return await s.tool.run(args, tool_context(ws, ask=allow_all))
    finally:
        PROMPTING.reset(token)


async def test_the_client_starts_the_supervised_launch_and_the_output_comes_back(
    ws: Path,
) -> None:
    s = setup()
    outcome = await bash(ws, s, 'echo "key=${ANTHROPIC_API_KEY:-none}"; echo out; exit 4')
    [terminal] = s.channel.terminals.values()
    argv = terminal.argv
    assert argv[:4] == [argv[0], "-u", HIDDEN, "--"]
    assert os.path.basename(argv[0]) == "env"
    launch = argv[4:]
    assert launch[:3] == [sys.executable, "-I", "-S"]
    assert launch[3].endswith("supervisor.py")
    assert launch[4] == "-"
    assert launch[-2:] == ["-c", 'echo "key=${ANTHROPIC_API_KEY:-none}"; echo out; exit 4']
    assert terminal.cwd == str(ws)
    assert HIDDEN not in terminal.env
    assert terminal.limit == 1 << 20
    # merged into the client's environment, the key still never reached the command
    assert outcome.output.startswith("key=none\nout\n\nExit code: 4")
    assert outcome.details.terminal_id == terminal.terminal_id
    assert outcome.exit_code == 4
    assert s.channel.calls == [
        ("terminal/create", "term_1"),
        ("terminal/wait_for_exit", "term_1"),
        ("terminal/output", "term_1"),
        ("terminal/release", "term_1"),
    ]
    assert s.attached == [("ses_1", "call_1", "term_1")]
    [(method, note)] = s.channel.notifications
    assert method == "session/update"
    assert note["update"] == {
        "sessionUpdate": "tool_call_update",
        "toolCallId": "call_1",
        "status": "in_progress",
        "content": [{"type": "terminal", "terminalId": "term_1"}],
    }


async def test_a_signal_that_ended_the_command_is_reported(ws: Path) -> None:
    s = setup()
    outcome = await bash(ws, s, "kill -TERM $$")
    assert "Exit code: 143 (killed by signal SIGTERM)" in outcome.output
    assert outcome.exit_code == 143


async def test_a_timeout_kills_the_terminal_keeps_the_output_and_releases(ws: Path) -> None:
    s = setup()
    outcome = await bash(ws, s, "echo started; sleep 60", timeout=1000)
    assert outcome.is_error
    assert outcome.output.startswith("started\n\nCommand timed out after 1000 ms")
    [terminal] = s.channel.terminals.values()
    assert [m for m, _ in s.channel.calls] == [
        "terminal/create",
        "terminal/wait_for_exit",
        "terminal/kill",
        "terminal/wait_for_exit",
        "terminal/output",
        "terminal/release",
    ]
    assert terminal.process.returncode is not None
    assert not group_alive(terminal.process.pid)


async def test_cancelling_kills_and_releases_the_terminal_and_nothing_is_left(
    ws: Path,
) -> None:
    s = setup()
    pids = ws / "pids"
    command = f"sleep 60 & echo $! > {pids}; setsid sleep 61 & echo $! >> {pids}; wait"
    task = asyncio.create_task(bash(ws, s, command))
    await wait_until(lambda: pids.exists() and len(pids.read_text().split()) == 2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    [terminal] = s.channel.terminals.values()
    methods = [m for m, _ in s.channel.calls]
    assert methods[-2:] == ["terminal/kill", "terminal/release"]
    assert terminal.killed
    assert terminal.released
    assert not group_alive(terminal.process.pid)
    for pid in map(int, pids.read_text().split()):  # the escaped one included
        await wait_until(lambda pid=pid: not running(pid))


async def test_output_the_client_cut_says_so(ws: Path) -> None:
    s = setup(max_kept_chars=1000)
    outcome = await bash(ws, s, "seq 1 2000")
    assert outcome.output.startswith("…earlier output dropped (the terminal kept its end)…\n")
    assert "\n2000\n" in outcome.output
    assert "\n1\n" not in outcome.output


class RefusingChannel(TerminalChannel):
    async def send_request(self, method: str, params: Any = None) -> Any:
        if method == "terminal/create":
            raise RequestError.internal_error({"details": "no terminals today"})
        return await super().send_request(method, params)


async def test_a_client_that_cannot_start_it_is_an_error_outcome(ws: Path) -> None:
    s = setup(channel=RefusingChannel(kill_grace=3))
    outcome = await bash(ws, s, "echo hi")
    assert outcome.is_error
    assert outcome.output.startswith("The editor's terminal could not start the command:")
    assert s.channel.calls == []
