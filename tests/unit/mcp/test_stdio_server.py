"""A real stdio MCP server (tests/support/mcp_servers.py, on the ``mcp`` package's server
API) behind the manager and the registry: discovery, calls through the gate, the clean
environment, a crash and its restart, a server that cannot start, and nothing left running."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
import time
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from lsp_agent.config.settings import McpLocalServer
from lsp_agent.core.messages import ToolCallPart
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.mcp.manager import McpManager
from lsp_agent.testing.editor import RecordingEditor
from lsp_agent.testing.permissions import RecordingAsk, deny
from lsp_agent.testing.tools import call_context
from lsp_agent.tools.registry import ToolRegistry, default_registry
from lsp_agent.workspace.truncation import OutputLimits
from tests.support.mcp_servers import FAILURE, STDERR_MARKER, TOOL_NAMES, stdio_command

OFFERED = tuple(f"probe_{name}" for name in TOOL_NAMES)

KEY = "sk-ant-test-0123456789abcdef0123456789abcdef"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def _dies(pid: int, within: float = 10.0) -> bool:
    deadline = time.monotonic() + within
    while _alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    return not _alive(pid)


def _pid(pid_file: Path) -> int:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        if pid_file.exists() and pid_file.read_text().strip():
            return int(pid_file.read_text())
        time.sleep(0.05)
    raise AssertionError("the server wrote no pid file")


@pytest.fixture
async def setup(tmp_path: Path) -> AsyncIterator[tuple[McpManager, ToolRegistry, Path]]:
    pid_file = tmp_path / "probe.pid"
    env = {**os.environ, "ANTHROPIC_API_KEY": KEY, "PROBE_VALUE": "from-the-agent"}
    registry = default_registry(
        RecordingEditor(),
        limits=OutputLimits(max_lines=2000, max_bytes=51_200),
        spill_root=tmp_path / "spill",
        secrets=SecretFilter({"ANTHROPIC_API_KEY": KEY}),
    )
    manager = McpManager(
        {
            "probe": McpLocalServer(
                type="local",
                command=stdio_command(pid_file),
                environment={"PROBE": "{env:PROBE_VALUE}", "LEAK": "{env:ANTHROPIC_API_KEY}"},
                timeout_ms=20_000,
            ),
            "missing": McpLocalServer(type="local", command=["/nonexistent/mcp-server"]),
            "off": McpLocalServer(type="local", command=["unused"], enabled=False),
        },
        env=env,
        hidden_env=("ANTHROPIC_API_KEY",),
        reserved_names=registry.names,
    )
    registry.add_source(manager)
    manager.start()
    await manager.settled()
    try:
        yield manager, registry, pid_file
    finally:
        await manager.aclose()


def _call(name: str, **arguments: object) -> ToolCallPart:
    return ToolCallPart(tool_call_id="call_1", name=name, input=dict(arguments))


async def test_tools_are_offered_after_the_built_ins_and_called_through_the_gate(
    setup: tuple[McpManager, ToolRegistry, Path], tmp_path: Path
) -> None:
    _, registry, _ = setup
    names = [spec.name for spec in registry.specs()]
    assert tuple(names[-len(OFFERED) :]) == OFFERED
    assert set(names[: -len(OFFERED)]) == set(registry.names)
    echo = next(spec for spec in registry.specs() if spec.name == "probe_echo")
    assert echo.input_schema["type"] == "object"
    assert "text" in echo.input_schema["properties"]
    assert echo.mutates == (echo.kind != "read")  # kinds: test_changes_and_remote.py
    assert registry.specs() is registry.specs()  # unchanged tools: the very same tuple

    ask = RecordingAsk()
    outcome = await registry.execute(
        _call("probe_echo", text="hello"), call_context(tmp_path, ask=ask)
    )
    assert (outcome.output, outcome.is_error) == ("hello", False)
    assert [(r.permission, r.patterns) for r in ask.requests] == [("mcp", ("probe:echo",))]

    refused = await registry.execute(
        _call("probe_echo", text="x"),
        call_context(tmp_path, ask=RecordingAsk(lambda r: deny("no"))),
    )
    assert refused.is_error
    assert refused.output == "no"


async def test_the_server_gets_a_clean_environment_and_secrets_never_reach_the_model(
    setup: tuple[McpManager, ToolRegistry, Path], tmp_path: Path
) -> None:
    _, registry, _ = setup
    outcome = await registry.execute(_call("probe_env"), call_context(tmp_path, ask=RecordingAsk()))
    lines = dict(line.split("=", 1) for line in outcome.output.splitlines() if "=" in line)
    assert lines["PROBE"] == "from-the-agent"
    assert "ANTHROPIC_API_KEY" not in lines
    assert KEY not in outcome.output  # LEAK names the key on purpose: the filter masks it
    assert "PATH" in lines
    assert "HOME" in lines


async def test_a_crashed_server_is_an_error_then_restarted_on_the_next_call(
    setup: tuple[McpManager, ToolRegistry, Path], tmp_path: Path
) -> None:
    manager, registry, pid_file = setup
    ctx = call_context(tmp_path, ask=RecordingAsk())
    first = _pid(pid_file)
    pid_file.unlink()
    os.kill(first, signal.SIGKILL)
    await asyncio.sleep(0.2)
    broken = await registry.execute(_call("probe_echo", text="a"), ctx)
    assert broken.is_error
    assert "probe" in broken.output
    assert any("probe" in line for line in manager.notices())
    again = await registry.execute(_call("probe_echo", text="back"), ctx)
    assert (again.output, again.is_error) == ("back", False)
    assert _pid(pid_file) != first


async def test_a_server_that_cannot_start_is_one_status_line_and_a_tool_error(
    setup: tuple[McpManager, ToolRegistry, Path], tmp_path: Path
) -> None:
    manager, registry, _ = setup
    statuses = {s.name: s for s in manager.statuses()}
    assert statuses["probe"].status == "connected"
    assert statuses["probe"].tools == OFFERED
    assert statuses["missing"].status == "failed"
    assert statuses["missing"].tools == ()
    assert statuses["off"].status == "disabled"
    lines = manager.notices()
    assert len(lines) == 1
    assert lines[0].startswith('MCP server "missing" could not start: ')
    unknown = await registry.execute(_call("missing_tool"), call_context(tmp_path))
    assert unknown.is_error
    assert "Unknown tool" in unknown.output


async def test_close_leaves_no_server_running(tmp_path: Path) -> None:
    pid_file = tmp_path / "probe.pid"
    manager = McpManager(
        {"probe": McpLocalServer(type="local", command=stdio_command(pid_file))},
        env=dict(os.environ),
    )
    manager.start()
    await manager.settled()
    pid = _pid(pid_file)
    assert _alive(pid)
    await manager.aclose()
    assert await asyncio.to_thread(_dies, pid)
    assert manager.specs() == ()


async def test_is_error_a_hang_and_stderr(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    manager = McpManager(
        {"probe": McpLocalServer(type="local", command=stdio_command(), timeout_ms=3000)},
        env=dict(os.environ),
    )
    manager.start()
    await manager.settled()
    ctx = call_context(tmp_path, ask=RecordingAsk())
    caplog.set_level(logging.INFO, logger="lsp_agent.mcp")
    try:
        failed = await manager.call("probe_fail", {}, ctx)
        assert failed is not None
        assert failed.is_error
        assert FAILURE in failed.output
        hung = await manager.call("probe_sleep", {"seconds": 30}, ctx)
        assert hung is not None
        assert hung.is_error
        assert "did not answer within 3 s" in hung.output
        after = await manager.call("probe_echo", {"text": "still here"}, ctx)
        assert after is not None
        assert after.output == "still here"
    finally:
        await manager.aclose()
    assert STDERR_MARKER in caplog.text  # the server's stderr went to the log
    assert STDERR_MARKER not in (failed.output + hung.output)
