"""Honest reports and root in the sandbox (issue 31, point 11).

- "Processes it left running in the background were stopped" only when a command really left
  one: under bubblewrap the sandbox's own init process used to be counted (6 of 20 plain
  ``true``/``ls`` calls said it).
- As root, a sandboxed command used to read every root-only file (``/etc/shadow``, root's
  home, a 0600 file anywhere): every capability is dropped, but root still owns them. Those
  are masked now. These tests need root (CI runs as root); elsewhere the case does not arise.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from lsp_agent.core.tooling import ToolOutcome
from lsp_agent.sandbox import CommandSandbox
from lsp_agent.testing.permissions import allow_all
from lsp_agent.testing.tools import tool_context
from lsp_agent.tools.bash import BashParams, BashTool

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="Linux sandbox")
needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is missing")
as_root = pytest.mark.skipif(os.geteuid() != 0, reason="what only root can read (CI is root)")
LEFT = "Processes it left running in the background were stopped."


async def run(tool: BashTool, workspace: Path, command: str) -> ToolOutcome:
    return await tool.run(BashParams(command=command), tool_context(workspace, ask=allow_all))


@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
async def test_plain_commands_never_report_leftovers(workspace: Path, mode: str) -> None:
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox(mode))  # type: ignore[arg-type]
    (workspace / "a.txt").write_text("a\n")
    commands = ["true", "ls", "cat a.txt", "echo hi | wc -c", "(sleep 0.01)"] * 4

    said = [c for c in commands if LEFT in (await run(tool, workspace, c)).output]

    assert said == []


@pytest.mark.parametrize("mode", [pytest.param("required", marks=needs_bwrap), "off"])
@pytest.mark.parametrize(
    "command",
    ["sleep 30 & echo started", "setsid sleep 30 & echo started", "(sleep 30 &) ; echo started"],
)
async def test_a_real_leftover_is_reported(workspace: Path, mode: str, command: str) -> None:
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox(mode))  # type: ignore[arg-type]

    outcome = await run(tool, workspace, command)

    assert "started" in outcome.output
    assert LEFT in outcome.output


# --- root ---------------------------------------------------------------------------------


@pytest.fixture
def root_only_files() -> Iterator[dict[str, str]]:
    """Files only root may read, each with a marker: a 0600 file in a 0755 folder, a file in
    a 0700 folder (both under /var/tmp, which the sandbox shows), and one in root's home."""
    token = uuid.uuid4().hex[:8]
    open_folder = Path(tempfile.mkdtemp(prefix="lsp-agent-rootonly-", dir="/var/tmp"))
    open_folder.chmod(0o755)
    closed_folder = Path(tempfile.mkdtemp(prefix="lsp-agent-rootonly-", dir="/var/tmp"))
    closed_folder.chmod(0o700)
    in_root = Path("/root") / f".lsp-agent-test-{token}"
    files = {
        str(open_folder / "secret.conf"): f"ROOT-0600-{token}",
        str(closed_folder / "readable-by-mode.txt"): f"ROOT-0700DIR-{token}",
        str(in_root): f"ROOT-HOME-{token}",
    }
    for path, marker in files.items():
        Path(path).write_text(marker + "\n")
    (open_folder / "secret.conf").chmod(0o600)
    (closed_folder / "readable-by-mode.txt").chmod(0o644)
    in_root.chmod(0o600)
    yield files
    shutil.rmtree(open_folder)
    shutil.rmtree(closed_folder)
    in_root.unlink()


@needs_bwrap
@as_root
async def test_as_root_a_sandboxed_command_reads_no_root_only_file(
    workspace: Path, root_only_files: dict[str, str]
) -> None:
    # In a script: no argument check sees the paths (an approval would mount them).
    paths = ["/etc/shadow", "/etc/gshadow", *root_only_files]
    probe = "".join(f'cat "{p}" 2>&1\n' for p in paths)
    (workspace / "probe.sh").write_text(probe + "echo SHADOW-LINES $(grep -c : /etc/shadow)\n")
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox("required"))

    outcome = await run(tool, workspace, "sh probe.sh")

    assert outcome.details.sandboxed is True
    for marker in root_only_files.values():
        assert marker not in outcome.output
    assert "root:" not in outcome.output  # /etc/shadow's first line
    assert "SHADOW-LINES 0" in outcome.output or "SHADOW-LINES\n" in outcome.output  # unreadable


@needs_bwrap
@as_root
async def test_as_root_the_rest_of_the_system_and_the_workspace_stay_usable(
    workspace: Path,
) -> None:
    (workspace / "mine.txt").write_text("MINE\n")
    (workspace / "mine.txt").chmod(0o600)  # root-only, but in the workspace
    tool = BashTool(hidden_env=(), sandbox=CommandSandbox("required"))

    outcome = await run(
        tool, workspace, "cat /etc/passwd | head -1; cat mine.txt; echo x > new.txt"
    )

    assert "root:x:0:0" in outcome.output
    assert "MINE" in outcome.output
    assert (workspace / "new.txt").read_text() == "x\n"


@needs_bwrap
@as_root
async def test_as_root_a_root_only_workspace_in_a_scanned_folder_stays_writable() -> None:
    """A 0700 workspace under /var (which is scanned) with a 0600 file: both its own."""
    folder = Path(tempfile.mkdtemp(prefix="lsp-agent-ws-", dir="/var/tmp"))  # 0700
    try:
        (folder / "private.txt").write_text("OWN-FILE\n")
        (folder / "private.txt").chmod(0o600)
        tool = BashTool(hidden_env=(), sandbox=CommandSandbox("required"))

        outcome = await run(tool, folder, "cat private.txt; echo y > made.txt; echo status $?")

        assert "OWN-FILE" in outcome.output
        assert "status 0" in outcome.output
        assert (folder / "made.txt").read_text() == "y\n"
    finally:
        shutil.rmtree(folder)
