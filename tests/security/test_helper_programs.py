"""Issue 31 §2 and the acceptance of §1–2: helper programs are found where the project cannot
plant them, and a full turn runs nothing the project planted.

The resolver (``lsp_agent/system/programs.py``) skips relative, empty, ``.`` and in-workspace
``PATH`` entries and files whose real path lies in a workspace folder; every call site goes
through it (bwrap's probe, bash, rg, env over ACP, git, doctor). Then the acceptance: a
repository whose ``.git/config`` asks git to run programs in every way, and a ``PATH`` whose
first entry is the workspace's ``.venv/bin`` holding a fake ``git``, ``bwrap``, ``rg``,
``env``, ``bash``…: a turn with edits, a command, a search, ``#diff``, review and revert runs
none of them, in ``lsp-agent run``, ``serve`` and ``acp``.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from lsp_agent.acp.terminal import hosted_argv
from lsp_agent.sandbox.availability import check_availability
from lsp_agent.shell.process import shell_argv
from lsp_agent.shell.runner import CommandFailed
from lsp_agent.system.programs import find_program, find_rg, trusted_search_path
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.acp_client import TIMEOUT, RecordingClient, capabilities, spawn_agent
from tests.support.acp_terminal_client import SpawningTerminals
from tests.support.hostile_repo import (
    MECHANISMS,
    hostile_repository,
    markers_left,
    plant_programs,
)
from tests.support.lsp_client import agent_client, allow_once
from tests.support.provider_env import agent_env

KEY = "sk-ant-api03-" + "p" * 40
MODEL = "anthropic/claude-test"


@pytest.fixture
def ws(workspace: Path) -> Path:
    return Path(os.path.realpath(workspace))


@pytest.fixture
def markers(tmp_path: Path) -> Path:
    folder = tmp_path / "markers"
    folder.mkdir()
    return folder


@pytest.fixture
def planted_path(ws: Path, markers: Path) -> str:
    """``PATH`` with ``<ws>/.venv/bin`` (fakes of every helper) first, then ``.``, an empty
    entry and a relative one, then the real entries."""
    plant_programs(ws / ".venv" / "bin", markers)
    plant_programs(ws / "rel" / "bin", markers)
    return os.pathsep.join([str(ws / ".venv" / "bin"), ".", "", "rel/bin", os.environ["PATH"]])


# -- the resolver -------------------------------------------------------------------------------


def test_programs_are_never_taken_from_the_workspace_or_a_relative_entry(
    ws: Path, planted_path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(ws / "rel")
    for name in ("git", "bwrap", "rg", "env", "bash"):
        found = find_program(name, path=planted_path, avoid=[str(ws)])
        assert found is not None, name
        assert os.path.isabs(found)
        assert not found.startswith(str(ws)), found
        assert found == shutil.which(name, path=os.environ["PATH"])
    kept = trusted_search_path(planted_path, [str(ws)])
    assert str(ws / ".venv" / "bin") not in kept
    assert all(os.path.isabs(entry) for entry in kept)


def test_a_link_outside_that_points_into_the_workspace_is_refused(
    ws: Path, tmp_path: Path, markers: Path
) -> None:
    plant_programs(ws / "tools", markers, ("git",))
    linked = tmp_path / "linked-bin"
    linked.mkdir()
    (linked / "git").symlink_to(ws / "tools" / "git")
    entry_link = tmp_path / "entry-link"
    entry_link.symlink_to(ws / "tools")
    path = os.pathsep.join([str(linked), str(entry_link), "/usr/bin", "/bin"])
    found = find_program("git", path=path, avoid=[str(ws)])
    assert found in ("/usr/bin/git", "/bin/git")
    assert find_program(str(ws / "tools" / "git"), path=path, avoid=[str(ws)]) is None


def test_rg_beside_the_interpreter_or_on_path_is_never_a_workspace_one(
    ws: Path, planted_path: str
) -> None:
    found = find_rg(path=planted_path, avoid=[str(ws)])
    assert found is not None
    assert not found.startswith(str(ws))


def test_the_shell_of_a_command_is_never_a_planted_bash(ws: Path, planted_path: str) -> None:
    argv = shell_argv("echo hi", {"PATH": planted_path}, avoid=[str(ws)])
    assert argv[0] in ("/usr/bin/bash", "/bin/bash")
    assert argv[1:] == ["-c", "echo hi"]


def test_the_sandbox_probe_runs_no_planted_bwrap_and_gets_no_key(
    ws: Path, planted_path: str, markers: Path, tmp_path: Path
) -> None:
    found = check_availability({"PATH": planted_path, "ANTHROPIC_API_KEY": KEY}, [str(ws)])
    assert markers_left(markers) == {}
    if found.bwrap is not None:
        assert not found.bwrap.startswith(str(ws))
    named = check_availability(
        {"PATH": planted_path, "LSP_AGENT_BWRAP": str(ws / ".venv" / "bin" / "bwrap")}, [str(ws)]
    )
    assert not named.works
    assert markers_left(markers) == {}
    # the probe's environment: a stand-in bwrap outside the workspace shows it
    spy_bin = tmp_path / "spy"
    spy_bin.mkdir()
    (spy_bin / "bwrap").write_text(f'#!/bin/sh\nenv > "{tmp_path}/probe-env"\n')
    (spy_bin / "bwrap").chmod(0o755)
    check_availability({"PATH": f"{spy_bin}:/usr/bin:/bin", "ANTHROPIC_API_KEY": KEY}, [str(ws)])
    probe_env = (tmp_path / "probe-env").read_text()
    assert KEY not in probe_env
    assert "ANTHROPIC_API_KEY" not in probe_env


def test_an_acp_client_terminal_is_asked_only_for_absolute_outside_programs(
    ws: Path, planted_path: str
) -> None:
    env = {"PATH": planted_path}
    hosted = hosted_argv(["/usr/bin/bwrap", "--", "bash"], ["ANTHROPIC_API_KEY"], env, [str(ws)])
    assert isinstance(hosted, list)
    assert hosted[0] in ("/usr/bin/env", "/bin/env")
    assert hosted[1:4] == ["-u", "ANTHROPIC_API_KEY", "--"]
    for argv in (["bwrap", "--"], [str(ws / ".venv" / "bin" / "bwrap")], ["./bwrap"]):
        assert isinstance(hosted_argv(argv, [], env, [str(ws)]), CommandFailed), argv


# -- the acceptance: a full turn in each front door ---------------------------------------------

PATCH = (
    "*** Begin Patch\n*** Update File: b.txt\n@@\n-bee\n+bee, patched\n"
    "*** Add File: patched.txt\n+created by a patch\n*** End Patch"
)


def turn_script(ws: Path) -> list[dict[str, Any]]:
    """Edits (write, edit, apply_patch), a command, searches, then an answer."""
    return [
        {"tool_calls": [
            {"name": "write", "input": {"file_path": str(ws / "new.txt"), "content": "new\n"}},
            {"name": "edit", "input": {
                "file_path": str(ws / "a.txt"), "old_string": "one", "new_string": "ONE"}},
        ]},
        {"tool_calls": [
            {"name": "apply_patch", "input": {"patch": PATCH}},
            {"name": "bash", "input": {"command": "echo ran; git status --short | head -3"}},
            {"name": "grep", "input": {"pattern": "bee"}},
            {"name": "glob", "input": {"pattern": "*.txt"}},
        ]},
        {"text": "done"},
    ]  # fmt: skip


@pytest.fixture
def door_env(fake_llm: FakeLLMServer, isolated_home: Path) -> dict[str, str]:
    """The environment of ``serve`` and ``acp``: isolated folders, the fake LLM, a key."""
    keep = ("LANG", "LC_ALL", "PYTHONPATH", "TMPDIR")  # PATH: the test's own
    return agent_env(
        fake_llm, KEY, keep=keep, PYTHON_KEYRING_BACKEND="keyring.backends.fail.Keyring"
    )


@pytest.fixture
def hostile(ws: Path, markers: Path, planted_path: str) -> str:
    """The hostile repository in ``ws``; answers the planted ``PATH``."""
    hostile_repository(ws, markers, sorted(MECHANISMS))
    return planted_path


def assert_nothing_planted_ran(markers: Path) -> None:
    left = markers_left(markers)
    assert left == {}, sorted(left)


def test_run_a_full_turn_and_its_revert_run_nothing_planted(
    ws: Path, markers: Path, hostile: str
) -> None:
    before = (ws / "a.txt").read_text()
    env = {"PATH": hostile, "ANTHROPIC_API_KEY": KEY, "LSP_AGENT_MODEL": MODEL}
    with running_fake_llm(turn_script(ws)) as server:
        env["ANTHROPIC_BASE_URL"] = server.anthropic_base_url
        done = run_cli("run", "--yes", "change things", cwd=ws, env=env)
        assert done.returncode == 0, done.stderr
        models = [r.body for r in server.requests if r.turn != "side"]
    assert (ws / "a.txt").read_text() == before.replace("one", "ONE")
    results = json.dumps(models[-1]["messages"])
    assert "ran" in results
    assert "b.txt" in results  # grep found it
    listing = json.loads(run_cli("sessions", "list", "--json", cwd=ws, env=env).stdout)
    sid = listing["sessions"][0]["sessionId"]
    shown = json.loads(run_cli("sessions", "show", sid, "--json", cwd=ws, env=env).stdout)
    first = shown["messages"][0]["messageId"]
    reverted = run_cli("sessions", "revert", sid, "--message", first, cwd=ws, env=env)
    assert reverted.returncode == 0, reverted.stderr
    assert (ws / "a.txt").read_text() == before
    assert not (ws / "new.txt").exists()
    doctor = run_cli("doctor", cwd=ws, env=env)
    helpers = [line for line in doctor.stdout.splitlines() if line[6:].startswith(("git:", "rg:"))]
    assert len(helpers) == 2, doctor.stdout
    for line in helpers:  # each names the program it ran: never one in the workspace
        assert line.startswith("ok"), line
        assert str(ws) not in line, line
    assert_nothing_planted_ran(markers)


async def test_serve_a_full_turn_with_diff_review_and_revert_runs_nothing_planted(
    ws: Path, markers: Path, hostile: str, fake_llm: FakeLLMServer, door_env: dict[str, str]
) -> None:
    fake_llm.set_script({"turns": [*turn_script(ws), {"text": "second"}]})
    env = {**door_env, "PATH": hostile}
    prompt = [{"type": "text", "text": "look at #diff"}, {"type": "mention", "name": "diff"}]
    async with agent_client(env=env, folders=[ws]) as client:
        client.permission_answers += [allow_once()] * 8
        session = await client.new_session()
        await client.request("agent/session/prompt", {"sessionId": session, "prompt": prompt})
        assert (await client.wait_idle(session, timeout=120))["stopReason"] == "end_turn"
        first_request = json.dumps(fake_llm.model_bodies()[0]["messages"])
        assert "+two, changed" in first_request  # #diff attached the working tree's change
        files = (await client.request("agent/review/list", {"sessionId": session}))["files"]
        hunks = [h["hunkId"] for f in files for h in f["hunks"]]
        assert hunks
        await client.request(
            "agent/review/resolve", {"sessionId": session, "action": "undo", "hunkIds": hunks}
        )
        checkpoints = await client.request("agent/checkpoint/list", {"sessionId": session})
        message = checkpoints["checkpoints"][0]["messageId"]
        await client.request("agent/revert/stage", {"sessionId": session, "messageId": message})
        await client.request("agent/revert/commit", {"sessionId": session})
        await client.prompt(session, "again #diff")
        await client.wait_idle(session, timeout=120)
    assert_nothing_planted_ran(markers)


class TerminalClient(SpawningTerminals, RecordingClient):
    """The recording client that also hosts terminals."""


@pytest.mark.parametrize("terminal", [False, True], ids=["agent-runs-bash", "client-terminal"])
async def test_acp_a_full_turn_runs_nothing_planted(
    ws: Path,
    markers: Path,
    hostile: str,
    tmp_path: Path,
    door_env: dict[str, str],
    fake_llm: FakeLLMServer,
    terminal: bool,
) -> None:
    fake_llm.set_script({"turns": turn_script(ws)})
    env = {**door_env, "PATH": hostile}
    client = TerminalClient(base_env={**env, "ANTHROPIC_API_KEY": KEY}, kill_grace=3)
    offers = capabilities(fs=False, terminal=terminal)
    async with spawn_agent(
        env, cwd=ws, stderr=tmp_path / "acp.log", client=client, offers=offers
    ) as agent:
        async with asyncio.timeout(TIMEOUT * 2):
            sid = (await agent.conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
            answer = await agent.conn.prompt(session_id=sid, prompt=[text_block("go")])
        assert answer.stop_reason == "end_turn", agent.log()
        if terminal:
            for hosted in client.terminals.values():
                assert os.path.isabs(hosted.command)
                assert not hosted.command.startswith(str(ws))
    assert (ws / "new.txt").read_text() == "new\n"
    assert_nothing_planted_ran(markers)


async def test_a_local_mcp_server_named_without_a_folder_is_never_a_planted_one(
    ws: Path, markers: Path, tmp_path: Path
) -> None:
    from lsp_agent.config.settings import McpLocalServer
    from lsp_agent.mcp.manager import McpManager
    from tests.support.mcp_servers import stdio_command

    real_bin = tmp_path / "real-bin"
    real_bin.mkdir()
    real = " ".join(f'"{word}"' for word in stdio_command())
    (real_bin / "probe-mcp").write_text(f'#!/bin/sh\nexec {real} "$@"\n')
    (real_bin / "probe-mcp").chmod(0o755)
    planted = ws / ".venv" / "bin"
    plant_programs(planted, markers, ())
    (planted / "probe-mcp").write_text(f'#!/bin/sh\n/usr/bin/env > "{markers}/planted-mcp"\n')
    (planted / "probe-mcp").chmod(0o755)
    path = os.pathsep.join([str(planted), str(real_bin), os.environ["PATH"]])
    server = McpLocalServer(type="local", command=["probe-mcp"], timeout_ms=20_000)
    manager = McpManager(
        {"probe": server}, env={"PATH": path, "ANTHROPIC_API_KEY": KEY}, avoid=[str(ws)]
    )
    manager.start()
    try:
        await manager.settled()
        [status] = manager.statuses()
        assert status.status == "connected", status
    finally:
        await manager.aclose()
    assert markers_left(markers) == {}
