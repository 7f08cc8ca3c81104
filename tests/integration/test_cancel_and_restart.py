"""Ctrl-C on `lsp-agent run`, and what the next process to open the database does: recover a
dead owner's turn (never a live one's), keep admitted input, set a corrupt database aside."""

from __future__ import annotations

import json
import os
import select
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.events import NewEvent
from lsp_agent.storage.event_log import open_store
from lsp_agent.storage.recovery import TURN_ERROR
from lsp_agent.system.procfs import start_ticks
from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-cancel-test-key"
MODEL = "anthropic/claude-test"
T = "2025-03-01T12:00:00.000Z"


def start_run(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "run", "--model", MODEL, *args],
        cwd=cwd,
        env={**os.environ, **env},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for(condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


def pids_in(path: Path) -> list[int]:
    """The pids a command wrote (``echo $$ $! > FILE``), once the line is complete."""
    try:
        text = path.read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()] if text.endswith("\n") else []


def running(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie nobody reaped yet does not count)."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def only_session(cwd: Path, env: dict[str, str]) -> str:
    result = cli("sessions", "list", "--json", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    (session,) = json.loads(result.stdout)["sessions"]
    return str(session["sessionId"])


def show(cwd: Path, env: dict[str, str], session_id: str) -> dict[str, Any]:
    result = cli("sessions", "show", session_id, "--json", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


def history(cwd: Path, env: dict[str, str], session_id: str) -> list[dict[str, Any]]:
    result = cli("sessions", "history", session_id, "--json", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    return list(json.loads(result.stdout)["events"])


def tool_parts(data: dict[str, Any]) -> list[dict[str, Any]]:
    return [
        part
        for message in data["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    ]


@pytest.fixture
def workspace(workspace: Path) -> Path:
    # The pids a command writes must be this machine's, not a sandbox's own PID namespace's
    # (tests/security/test_escaped_processes.py covers sandboxed commands).
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text('{"sandbox": "off"}')
    return workspace


# -- Ctrl-C -----------------------------------------------------------------------------------

QUICK = {"name": "bash", "input": {"command": "echo quick-done"}}


def sleeper(command: str) -> dict[str, Any]:
    return {"name": "bash", "input": {"command": command}}


@pytest.fixture
def two_calls_then_sleep() -> Iterator[FakeLLMServer]:
    # The group ignores SIGTERM, so stopping it takes the whole grace period: the second
    # Ctrl-C arrives while the first is still being handled.
    # The sleep outlasts communicate()'s timeout: the run ending in time proves it was killed.
    slow_to_stop = "trap '' TERM; sleep 600 & echo $$ $! > pids.txt; wait"
    script = [{"tool_calls": [QUICK, sleeper(slow_to_stop)]}, {"text": "never sent"}]
    with running_fake_llm(script) as server:
        yield server


def test_ctrl_c_during_a_command_cancels_the_turn_and_kills_its_group(
    two_calls_then_sleep: FakeLLMServer, workspace: Path
) -> None:
    env = provider_env(two_calls_then_sleep, KEY)
    proc = start_run("--yes", "run the tests", cwd=workspace, env=env)
    try:
        wait_for(lambda: len(pids_in(workspace / "pids.txt")) == 2, "the command's pids")
        pids = pids_in(workspace / "pids.txt")
        assert all(running(pid) for pid in pids)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.5)
        proc.send_signal(signal.SIGINT)  # a second cancel while the first is handled
        _out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert not any(running(pid) for pid in pids)

    session_id = only_session(workspace, env)
    data = show(workspace, env, session_id)
    assert data["session"]["state"] == "idle"
    quick, slow = tool_parts(data)
    assert (quick["status"], slow["status"]) == ("completed", "interrupted")
    assert "quick-done" in quick["output"]  # finished before the cancel: kept
    events = history(workspace, env, session_id)
    assert events[-1]["type"] == "state_changed"
    assert events[-1]["data"] == {"state": "idle", "stopReason": "cancelled"}
    started_groups = [e["data"] for e in events if e["type"] == "process_started"]
    ended_groups = [e["data"] for e in events if e["type"] == "process_ended"]
    assert [g["pgid"] for g in started_groups] == [g["pgid"] for g in ended_groups]
    slow_updates = [
        e["data"]["status"]
        for e in events
        if e["type"] == "tool_call_updated" and e["data"]["toolCallId"] == slow["toolCallId"]
    ]
    assert "completed" not in slow_updates
    assert slow_updates[-1] == "interrupted"
    assert not any(e["data"].get("error", {}) == TURN_ERROR for e in events)
    # Nothing was left for recovery: reopening changed nothing.
    assert len(history(workspace, env, session_id)) == len(events)


def test_a_late_second_ctrl_c_still_exits_130(workspace: Path) -> None:
    script = [{"tool_calls": [sleeper("sleep 30 & echo $$ $! > pids.txt; wait")]}]
    with running_fake_llm(script) as server:
        proc = start_run("--yes", "go", cwd=workspace, env=provider_env(server, KEY))
        try:
            wait_for(lambda: len(pids_in(workspace / "pids.txt")) == 2, "the command's pids")
            proc.send_signal(signal.SIGINT)
            assert proc.stderr is not None
            while "interrupted" not in proc.stderr.readline():
                pass
            time.sleep(0.05)  # the process is exiting now (that takes a few hundred ms)
            proc.send_signal(signal.SIGINT)
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 130, err


# -- a dead owner's turn, and admitted input -----------------------------------------------------


def dead_owner() -> dict[str, Any]:
    proc = subprocess.Popen(["sleep", "30"])
    owner = {"pid": proc.pid, "startTicks": start_ticks(proc.pid)}
    proc.kill()
    proc.wait()
    return owner


async def test_input_admitted_before_a_crash_is_promoted_when_the_session_resumes(
    workspace: Path,
) -> None:
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    # What a run killed right after admitting its prompt leaves behind.
    async with await open_store(data_dir) as store:
        await store.append(
            "ses_crashed",
            [
                NewEvent(
                    type="session_created",
                    data={
                        "sessionId": "ses_crashed",
                        "workspaceFolder": workspace.resolve().as_uri(),
                        "title": "crashed",
                        "model": MODEL,
                        "mode": "build",
                    },
                    time=T,
                ),
                NewEvent(
                    type="user_message_admitted",
                    data={
                        "messageId": "msg_first",
                        "content": [{"type": "text", "text": "what does a.py do?"}],
                    },
                    time=T,
                ),
                NewEvent(
                    type="state_changed",
                    data={"state": "running", "owner": dead_owner()},
                    time=T,
                ),
            ],
        )
    with running_fake_llm([{"text": "It greets."}]) as server:
        env = provider_env(server, KEY)
        listed = cli("sessions", "list", "--json", cwd=workspace, env=env)
        assert listed.returncode == 0, listed.stderr
        (info,) = json.loads(listed.stdout)["sessions"]
        assert info["state"] == "idle"  # recovered by the first process to open the database
        result = cli(
            "run", "--model", MODEL, "--session", "ses_crashed", "go on", cwd=workspace, env=env
        )
        assert result.returncode == 0, result.stderr
        assert "It greets." in result.stdout
        (body,) = [r.body for r in server.requests if r.turn != "side"]
    assert body is not None
    texts = [
        block["text"]
        for message in body["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block["type"] == "text"
    ]
    assert texts == ["what does a.py do?", "go on"]  # both, oldest first, in one turn
    data = show(workspace, env, "ses_crashed")
    assert [(m["role"], m["status"]) for m in data["messages"]] == [
        ("user", "completed"),
        ("user", "completed"),
        ("assistant", "completed"),
    ]
    events = history(workspace, env, "ses_crashed")
    idle = [
        e["data"] for e in events if e["type"] == "state_changed" and e["data"]["state"] == "idle"
    ]
    assert idle[0]["error"] == {"message": TURN_ERROR, "retryable": True}
    assert idle[-1] == {"state": "idle", "stopReason": "end_turn"}


# -- a live owner's turn --------------------------------------------------------------------------


def test_sessions_commands_leave_a_live_owners_turn_alone(workspace: Path) -> None:
    # The turn is held open, not raced: the stream pauses after "word3 " until release(), and
    # the command waits for a file the test writes once it has looked.
    words = [f"word{i} " for i in range(20)]
    wait_for_go = "echo $$ > pid.txt; while [ ! -e go ]; do sleep 0.05; done; echo slept"
    script = [
        {
            "text": words,
            "hold_after": 7,  # message_start, ping, block start, word0..word3
            "tool_calls": [sleeper(wait_for_go)],
        },
        {"text": "finished"},
    ]
    with running_fake_llm(script) as server:
        env = provider_env(server, KEY)
        proc = start_run("--yes", "take your time", cwd=workspace, env=env)
        try:
            assert proc.stdout is not None
            seen = b""
            while b"word3" not in seen:  # whatever has arrived: the rest waits for release()
                wait_for(lambda: bool(select.select([proc.stdout], [], [], 0)[0]), "text", 60)
                chunk = os.read(proc.stdout.fileno(), 4096)
                assert chunk, "the stream ended before any text arrived"
                seen += chunk
            session_id = only_session(workspace, env)
            before = history(workspace, env, session_id)
            data = show(workspace, env, session_id)
            after = history(workspace, env, session_id)
            assert data["session"]["state"] == "running"
            assert data["messages"][-1]["status"] == "streaming"
            assert after[: len(before)] == before
            assert {e["type"] for e in after[len(before) :]} <= {"text_delta"}  # its own only
            server.release()

            wait_for(lambda: bool(pids_in(workspace / "pid.txt")), "the command's pid")
            (pid,) = pids_in(workspace / "pid.txt")
            assert cli("sessions", "list", cwd=workspace, env=env).returncode == 0
            assert running(pid)  # a live owner's command is never killed
            data = show(workspace, env, session_id)
            assert data["session"]["state"] == "running"
            assert [c["status"] for c in tool_parts(data)] == ["in_progress"]
            (workspace / "go").touch()
            out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
    assert proc.returncode == 0, err
    assert out.endswith("finished\n")
    events = history(workspace, env, session_id)
    assert not any(e["data"].get("error") for e in events if e["type"] == "state_changed")
    assert events[-1]["data"] == {"state": "idle", "stopReason": "end_turn"}
    (call,) = tool_parts(show(workspace, env, session_id))
    assert call["status"] == "completed"
    assert "slept" in call["output"]


# -- a corrupt database ---------------------------------------------------------------------------


def test_a_corrupt_database_is_moved_aside_with_a_message(workspace: Path) -> None:
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    data_dir.mkdir(parents=True, exist_ok=True)
    db = data_dir / "lsp-agent.db"
    db.write_bytes(b"\x00garbage, not SQLite\n" * 500)
    result = cli("sessions", "list", cwd=workspace, env={})
    assert result.returncode == 0, result.stderr
    (aside,) = [p for p in data_dir.iterdir() if ".corrupt-" in p.name]
    assert aside.read_bytes().startswith(b"\x00garbage")
    assert "is corrupt" in result.stderr
    assert str(aside) in result.stderr
    assert "fresh" in result.stderr
    again = cli("sessions", "list", cwd=workspace, env={})
    assert (again.returncode, again.stderr) == (0, "")  # the fresh one is used from now on

    db.write_bytes(b"\x00garbage again\n" * 500)
    doctor = cli("doctor", cwd=workspace, env={})
    assert doctor.returncode == 1
    assert any(
        line.startswith("FAIL") and "database" in line and "moved aside" in line
        for line in doctor.stdout.splitlines()
    ), doctor.stdout
    assert any(
        line.startswith("ok") and "integrity ok" in line for line in doctor.stdout.splitlines()
    )
