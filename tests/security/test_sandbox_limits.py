"""Sandbox limits (issue 31, point 10): processes, memory, in-memory files and output are bounded;
a command that reaches a limit ends with a clear error and the agent goes on.

Every probe is bounded by itself (at most a few hundred processes, a few dozen MB), so it is
safe on a small machine even where a limit did not hold: what is asserted is that the limit
stopped it, not that the machine survived.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

import pytest

from lsp_agent.config.load import load_settings
from lsp_agent.config.settings import InvalidConfig
from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.sandbox import CommandLimits, CommandSandbox
from lsp_agent.sandbox.availability import check_availability
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux limits")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")

SMALL = CommandLimits(processes=48, memory_mb=256, tmp_mb=16, output_mb=4)


async def run(
    workspace: Path,
    command: str,
    *,
    mode: str = "required",
    timeout_ms: int = 60_000,
    cgroups: bool = True,
) -> ToolOutcome:
    sandbox = CommandSandbox(mode, limits=SMALL)  # type: ignore[arg-type]
    if not cgroups:  # as where none can be made: RLIMIT_NPROC, or as root only the watch
        sandbox = CommandSandbox(mode, limits=SMALL, cgroups=lambda: None)  # type: ignore[arg-type]
    tool = BashTool(hidden_env=(), sandbox=sandbox)
    params = BashParams(command=command, timeout=timeout_ms)
    return await tool.run(params, tool_context(workspace, ask=allow_all))


async def still_answers(workspace: Path, mode: str) -> None:
    """The agent runs the next command as usual."""
    outcome = await run(workspace, "echo still-here", mode=mode)
    assert "still-here" in outcome.output
    assert "Exit code: 0" in outcome.output


# A fork bomb's shape, bounded: 2^8 = 256 processes at most, each waiting 30 s.
BOMBS = {
    "recursive": "f() { [ $1 -gt 0 ] && { f $(($1 - 1)) & f $(($1 - 1)); }; sleep 30; }; f 8",
    "loop": "for i in $(seq 200); do sleep 30 & done; wait",
    "setsid": "for i in $(seq 200); do setsid sleep 30 & done; wait",
}


@pytest.mark.parametrize("cgroups", [True, False], ids=["cgroup-if-any", "no-cgroup"])
@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
@pytest.mark.parametrize("bomb", sorted(BOMBS))
async def test_a_fork_bomb_ends_with_a_clear_error(
    workspace: Path, mode: str, bomb: str, cgroups: bool
) -> None:
    started = time.monotonic()

    outcome = await run(workspace, BOMBS[bomb], mode=mode, cgroups=cgroups)

    assert outcome.is_error, outcome.output
    assert "Command stopped: it reached the limit of 48 processes" in outcome.output
    assert "sandbox.limits.processes" in outcome.output
    assert outcome.details.limit.startswith("it reached the limit")
    assert time.monotonic() - started < 45  # stopped, not left to the 60 s timeout
    await still_answers(workspace, mode)


@needs_bwrap
@pytest.mark.parametrize("folder", ["/tmp", "$HOME", "/run"])
async def test_a_big_write_to_an_in_memory_folder_fails_with_no_space(
    workspace: Path, folder: str
) -> None:
    if not check_availability({"PATH": "/usr/bin:/bin"}, ()).sizes:
        pytest.fail("this bubblewrap takes no --size (0.6 or later is needed)")
    # 64 MB against a 16 MB limit: without the limit it would simply succeed. In a script,
    # so no argument check asks for the folder (an approval would mount the real one).
    script = f'dd if=/dev/zero of="{folder}/big" bs=1M count=64\n'
    (workspace / "fill.sh").write_text(script)

    outcome = await run(workspace, "sh fill.sh")

    assert "No space left on device" in outcome.output
    assert "64+0 records out" not in outcome.output
    await still_answers(workspace, "required")


@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
async def test_memory_beyond_the_limit_is_refused(workspace: Path, mode: str) -> None:
    python = shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin") or sys.executable
    code = "b = bytearray(512 * 1024 * 1024); print('ALLOCATED', len(b))"
    (workspace / "alloc.py").write_text(code)

    outcome = await run(workspace, f"{python} alloc.py", mode=mode)

    assert "ALLOCATED 536870912" not in outcome.output
    assert "MemoryError" in outcome.output
    await still_answers(workspace, mode)


@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
@pytest.mark.parametrize(
    "command", ["yes | head -c 64000000", "head -c 64000000 /dev/zero | tr '\\0' x"]
)
async def test_output_beyond_the_limit_stops_the_command(
    workspace: Path, mode: str, command: str
) -> None:
    outcome = await run(workspace, command, mode=mode)

    assert outcome.is_error
    assert "Command stopped: it wrote more than 4 MB of output" in outcome.output
    assert "sandbox.limits.output_mb" in outcome.output
    assert len(outcome.output) < 8_000_000  # nothing past the limit was kept
    await still_answers(workspace, mode)


async def test_work_within_the_limits_is_untouched(workspace: Path) -> None:
    outcome = await run(
        workspace, "for i in 1 2 3 4 5; do sleep 0.1 & done; wait; echo done", mode="off"
    )
    assert "done" in outcome.output
    assert "Exit code: 0" in outcome.output
    assert "Command stopped" not in outcome.output


# --- configuration ----------------------------------------------------------------------


def test_the_limits_are_configured_and_zero_means_unbounded(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"sandbox": {"limits": {"processes": 64, "output_mb": 0}}}))

    limits = load_settings(workspace=tmp_path, env={}, user_file=user).sandbox.limits
    runtime = CommandLimits.configured(**limits.model_dump())

    assert (limits.processes, limits.memory_mb, limits.tmp_mb) == (64, 8192, 1024)
    assert runtime.output_bytes is None
    assert runtime.processes == 64


@pytest.mark.parametrize(
    "project", [{"processes": 100000}, {"tmp_mb": 0}, {"output_mb": 2048}, {"memory_mb": 9000}]
)
def test_an_untrusted_project_may_only_lower_the_limits(
    tmp_path: Path, project: dict[str, int]
) -> None:
    (tmp_path / ".lsp-agent.json").write_text(json.dumps({"sandbox": {"limits": project}}))
    with pytest.raises(InvalidConfig) as raised:
        load_settings(workspace=tmp_path, env={}, user_file=tmp_path / "none.json")
    assert "sandbox.limits" in str(raised.value)


def test_an_untrusted_project_may_lower_a_limit(tmp_path: Path) -> None:
    (tmp_path / ".lsp-agent.json").write_text(
        json.dumps({"sandbox": {"limits": {"processes": 10}}})
    )
    settings = load_settings(workspace=tmp_path, env={}, user_file=tmp_path / "none.json")
    assert settings.sandbox.limits.processes == 10


def test_doctor_says_how_the_limits_hold_here(tmp_path: Path, isolated_home: Path) -> None:
    from lsp_agent.sandbox.cgroup import find_pids_hierarchy
    from lsp_agent.testing.cli import run_cli

    path = isolated_home / ".config" / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"sandbox": {"limits": {"processes": 77, "output_mb": 0}}}))

    result = run_cli("doctor", cwd=tmp_path)

    (line,) = [line for line in result.stdout.splitlines() if " limits: " in line]
    assert "processes ≤ 77" in line
    assert "output not bounded" in line
    if find_pids_hierarchy() is not None:
        assert "a pids cgroup per command" in line


@needs_bwrap
def test_a_run_applies_the_configured_limits(workspace: Path, isolated_home: Path) -> None:
    """Through ``lsp-agent run``: the user's ``sandbox.limits`` reach the bash tool."""
    from lsp_agent.testing.cli import run_cli
    from lsp_agent.testing.fake_llm import running_fake_llm

    path = isolated_home / ".config" / "lsp-agent" / "config.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    config = {"sandbox": {"mode": "required", "limits": {"processes": 40, "tmp_mb": 8}}}
    path.write_text(json.dumps(config))
    (workspace / "fill.sh").write_text("dd if=/dev/zero of=/tmp/big bs=1M count=32\n")
    calls = [
        {"name": "bash", "input": {"command": BOMBS["loop"], "timeout": 60000}},
        {"name": "bash", "input": {"command": "sh fill.sh"}},
    ]
    script = [{"tool_calls": [call]} for call in calls] + [{"text": "done"}]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", "--yes", "--model", "anthropic/claude-test", "go",
            cwd=workspace,
            env={"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "k"},
        )  # fmt: skip
        sent = json.dumps([request.body for request in server.requests])

    assert result.returncode == 0, result.stderr
    assert "it reached the limit of 40 processes" in sent
    assert "No space left on device" in sent


NOBODY_PROBE = """
import asyncio, sys
from pathlib import Path
from lsp_agent.sandbox import CommandLimits, CommandSandbox
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool

async def main():
    sandbox = CommandSandbox(sys.argv[2], limits=CommandLimits(processes=30), cgroups=lambda: None)
    tool = BashTool(hidden_env=(), sandbox=sandbox)
    params = BashParams(command=sys.argv[3], timeout=60000)
    print((await tool.run(params, tool_context(Path(sys.argv[1]), ask=allow_all))).output)

asyncio.run(main())
"""


def _nobody_python(folder: Path) -> list[str] | None:
    """An interpreter the unprivileged user may run, with this checkout importable."""
    import subprocess
    import sysconfig

    import lsp_agent

    root = str(Path(lsp_agent.__file__).parent.parent)
    path = f"{root}:{sysconfig.get_paths()['purelib']}"
    candidates = [sys.executable, shutil.which("python3", path="/usr/local/bin:/usr/bin:/bin")]
    for python in filter(None, candidates):
        argv = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "env",
                f"HOME={folder}", f"LSP_AGENT_DATA_DIR={folder}/data", f"PYTHONPATH={path}",
                "PATH=/usr/local/bin:/usr/bin:/bin", python]  # fmt: skip
        done = subprocess.run([*argv, "-c", "import lsp_agent.tools.bash"], capture_output=True)
        if done.returncode == 0:
            return argv
    return None


@pytest.mark.skipif(os.geteuid() != 0 or shutil.which("setpriv") is None, reason="needs root")
@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
def test_an_ordinary_user_without_a_cgroup_is_bounded_by_rlimit_nproc(mode: str) -> None:
    """Not root: ``RLIMIT_NPROC`` (above the user's current count) holds the bomb."""
    import subprocess
    import tempfile

    folder = Path(tempfile.mkdtemp(prefix="lsp-agent-nobody-", dir="/var/tmp"))
    try:
        os.chown(folder, 65534, 65534)
        folder.chmod(0o755)
        (folder / "probe.py").write_text(NOBODY_PROBE)
        python = _nobody_python(folder)
        if python is None:
            pytest.skip("no interpreter the unprivileged user can run with this checkout")
        done = subprocess.run(
            [*python, str(folder / "probe.py"), str(folder), mode, BOMBS["loop"]],
            capture_output=True, text=True, timeout=120, cwd=folder,
        )  # fmt: skip
    finally:
        shutil.rmtree(folder)

    assert "it reached the limit of 30 processes" in done.stdout, done.stdout + done.stderr
