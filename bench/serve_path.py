"""A long-lived ``lsp-agent serve`` driven over LSP by a scripted editor, doing the task.

The editor is the tests' scripted client (``tests/support/lsp_client.py``, pytest-lsp): it
keeps the open buffers, answers the permission ask with "allow once" and applies
``workspace/applyEdit`` to its buffer, as VS Code does. One server serves every counted turn
(each in a new session), so the per-step figures are the warm ones.
"""

from __future__ import annotations

import asyncio
import os
import sys
import time
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager
from pathlib import Path

import attrs

from bench.turns import TurnTimes, turn_times
from bench.workload import HELLO, PROMPT, isolated_env, task_script
from lsp_agent.testing.fake_llm import FakeLLMServer

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.lsp_client import AgentClient, agent_client, allow_once

MODEL = "openai/gpt-bench"
_PAGE_KIB = os.sysconf("SC_PAGE_SIZE") / 1024


@attrs.frozen(kw_only=True)
class ProcessFigures:
    peak_rss_mib: float
    cpu_s: float


def process_figures(pid: int) -> ProcessFigures:
    """Peak RSS (VmHWM) and CPU so far of a live process, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    hwm = next(int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM"))
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    ticks = os.sysconf("SC_CLK_TCK")
    return ProcessFigures(
        peak_rss_mib=hwm / 1024, cpu_s=(int(fields[11]) + int(fields[12])) / ticks
    )


def server_env(home: Path, server: FakeLLMServer) -> dict[str, str]:
    return isolated_env(
        home,
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        ANTHROPIC_API_KEY="bench-key",
        LSP_AGENT_MODEL=MODEL,
        LSP_AGENT_LOG="WARNING",
    )


def server_pid(client: AgentClient) -> int:
    process = getattr(client.client, "_server", None)
    if process is None:
        raise RuntimeError("the client has no server process")
    return int(process.pid)


@asynccontextmanager
async def started(
    env: dict[str, str], folder: Path, command: Sequence[str] | None = None, *, plain: bool = False
) -> AsyncIterator[tuple[AgentClient, float]]:
    """A server spawned and initialized; with the milliseconds spawn → ``initialize`` answered."""
    begun = time.monotonic()
    async with agent_client(
        env=env, folders=[folder], server_command=command, plain=plain
    ) as client:
        yield client, (time.monotonic() - begun) * 1000


async def open_buffers(client: AgentClient, workspace: Path, extra: Sequence[Path]) -> None:
    """hello.py and ``extra`` open in the editor, as buffers the agent reads and edits."""
    client.open(workspace / "hello.py", HELLO)
    for path in extra:
        client.open(path, path.read_text())
    await asyncio.sleep(0)


@attrs.frozen(kw_only=True)
class ServeTurn:
    turn: TurnTimes
    prompt_to_first_ms: float


async def one_turn(
    client: AgentClient, server: FakeLLMServer, workspace: Path, timeout: float = 60
) -> ServeTurn:
    """The task in a new session of the running server; the buffer is put back after."""
    hello = workspace / "hello.py"
    server.set_script(task_script(hello))
    server.clear_log()
    session = await client.new_session()
    client.permission_answers.append(allow_once())
    sent = time.monotonic()
    await client.prompt(session, PROMPT)
    idle = await client.wait_idle(session, timeout)
    if idle.get("stopReason") != "end_turn":
        raise RuntimeError(f"the serve turn ended with {idle}")
    text = client.documents[hello.as_uri()].text
    if "Goodbye" not in text or "Hello" in text:
        raise RuntimeError(f"the serve turn did not edit the buffer: {text!r}")
    client.change(hello, HELLO)
    times = turn_times(server.requests, sent)
    return ServeTurn(turn=times, prompt_to_first_ms=times.first_request_ms)
