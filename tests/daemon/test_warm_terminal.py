"""What a person at the terminal does reaches the warm run: a permission ask is put on the
client's terminal and answered there; Ctrl-C interrupts the run with the cold run's exit 130."""

from __future__ import annotations

import contextlib
import json
import os
import pty
import re
import select
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

from lsp_agent.system.procfs import read_stat
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.daemon.conftest import TIMEOUT, logs, lsp_agent, wait_for, warm_env

MODEL = ("--model", "anthropic/claude-test")


def sleeping() -> bool:
    """Whether the run's command still runs (its pid is the sandbox's, so look for it)."""
    for entry in Path("/proc").iterdir():
        try:
            if (entry / "cmdline").read_bytes() == b"sleep\x0067.25\x00":
                return True
        except OSError:
            continue
    return False


def read_until(fd: int, marker: bytes, timeout: float = TIMEOUT) -> bytes:
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        assert time.monotonic() < deadline, f"no {marker!r} in {seen!r}"
        ready, _, _ = select.select([fd], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_a_permission_ask_is_answered_on_the_client_s_terminal(
    runtime_dir: Path, workspace: Path
) -> None:
    command = "echo approved > out.txt"
    script = [{"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "ok"}]
    with running_fake_llm(script) as server:
        env = warm_env(
            runtime_dir, ANTHROPIC_BASE_URL=server.anthropic_base_url, ANTHROPIC_API_KEY="k" * 12
        )
        leader, follower = pty.openpty()
        try:
            proc = subprocess.Popen(
                [sys.executable, "-m", "lsp_agent", "run", *MODEL, "go"],
                cwd=workspace,
                env=env,
                stdin=follower,
                stdout=subprocess.PIPE,
                stderr=follower,
            )
            os.close(follower)
            try:
                shown = read_until(leader, b"[r]eason to deny: ")
                os.write(leader, b"y\n")
                shown += read_until(leader, b"session ses_")
                assert proc.wait(timeout=TIMEOUT) == 0
                assert proc.stdout is not None
                assert proc.stdout.read() == b"ok\n"
            finally:
                if proc.poll() is None:
                    proc.kill()
                proc.wait()
                if proc.stdout is not None:
                    proc.stdout.close()
        finally:
            os.close(leader)
    assert f"command: {command}" in shown.decode()
    assert (workspace / "out.txt").read_text() == "approved\n"
    # the warm process ran it (it logs the exit after sending the code to the client)
    wait_for(lambda: "exited 0" in logs(runtime_dir), "the warm process to log the exit")


SLOW = "sleep 67.25 & echo $! > pids.txt; wait"


@contextlib.contextmanager
def slow_warm_run(
    runtime_dir: Path, workspace: Path
) -> Iterator[tuple[subprocess.Popen[str], dict[str, str]]]:
    """A warm ``run`` whose command is running (its pid written); killed if a test leaves it."""
    script = [{"tool_calls": [{"name": "bash", "input": {"command": SLOW}}]}, {"text": "never"}]
    with running_fake_llm(script) as server:
        env = warm_env(
            runtime_dir, ANTHROPIC_BASE_URL=server.anthropic_base_url, ANTHROPIC_API_KEY="k" * 12
        )
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "run", *MODEL, "--yes", "go"],
            cwd=workspace,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            # its own process group, as a shell starts a job: a group whose parent is in the
            # same session is not orphaned, so a stop signal's default action is not discarded
            process_group=0,
        )
        pids = workspace / "pids.txt"
        try:
            wait_for(lambda: pids.is_file() and pids.read_text().endswith("\n"), "the command")
            yield proc, env
        finally:
            if proc.poll() is None:
                proc.kill()
            proc.communicate()


def session_state(workspace: Path, env: dict[str, str]) -> str:
    listed = lsp_agent("sessions", "list", "--json", cwd=workspace, env=env)
    (session,) = json.loads(listed.stdout)["sessions"]
    return str(session["state"])


def test_ctrl_c_interrupts_the_warm_run_with_exit_130(runtime_dir: Path, workspace: Path) -> None:
    with slow_warm_run(runtime_dir, workspace) as (proc, env):
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 130
    assert "interrupted" in err
    assert out == ""
    wait_for(lambda: not sleeping(), "the command to be stopped")
    # the warm process logs the exit after it has sent the code to the client
    wait_for(lambda: "exited 130" in logs(runtime_dir), "the warm process to log the exit")
    assert session_state(workspace, env) == "idle"  # it ends consistently, as after a cold one


def test_a_client_killed_mid_run_interrupts_its_run(runtime_dir: Path, workspace: Path) -> None:
    with slow_warm_run(runtime_dir, workspace) as (proc, env):
        proc.kill()  # no chance to pass anything on: the warm process sees it go
        proc.wait()
        wait_for(lambda: "exited 130" in logs(runtime_dir), "the run to be interrupted")
    wait_for(lambda: not sleeping(), "the command to be stopped")
    assert session_state(workspace, env) == "idle"


def state(pid: int) -> str:
    stat = read_stat(pid)
    return stat.state if stat is not None else "gone"


def test_ctrl_z_stops_the_warm_run_with_the_client_and_fg_resumes_it(
    runtime_dir: Path, workspace: Path
) -> None:
    with slow_warm_run(runtime_dir, workspace) as (proc, _env):
        (run,) = [int(pid) for pid in re.findall(r"run (\d+): run", logs(runtime_dir))]
        proc.send_signal(signal.SIGTSTP)
        wait_for(lambda: state(proc.pid) == "T", "the client to stop")
        wait_for(lambda: state(run) == "T", "the run to stop with it")
        proc.send_signal(signal.SIGCONT)
        wait_for(lambda: state(run) != "T", "the run to go on")
        proc.send_signal(signal.SIGINT)
        assert proc.wait(timeout=TIMEOUT) == 130


def test_a_reader_that_went_away_stops_the_warm_run_quietly_with_141(
    runtime_dir: Path, workspace: Path
) -> None:
    answer = "".join(f"line {i}\n" for i in range(200))
    with running_fake_llm([{"text": answer}]) as server:
        env = warm_env(
            runtime_dir, ANTHROPIC_BASE_URL=server.anthropic_base_url, ANTHROPIC_API_KEY="k" * 12
        )
        read_end, write_end = os.pipe()
        os.close(read_end)  # `| head` that has already gone: every write fails
        try:
            result = subprocess.run(
                [sys.executable, "-m", "lsp_agent", "run", *MODEL, "talk"],
                cwd=workspace,
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=write_end,
                stderr=subprocess.PIPE,
                text=True,
                timeout=TIMEOUT,
                check=False,
            )
        finally:
            os.close(write_end)
    assert result.returncode == 141
    assert "Traceback" not in result.stderr
    # the warm process logs the exit after it has sent the code to the client
    wait_for(lambda: "exited 141" in logs(runtime_dir), "the warm process to log the exit")
    assert session_state(workspace, env) == "idle"
