"""The process ends at once after its work (``system.fast_exit``), and nothing is lost: the
store is closed intact, the session resumes, stdout reaches a slow reader whole, a reader that
goes away still gives 141, exit codes and ``serve``'s exit stay as they were.

Ctrl-C through the same entry is covered by ``test_cancel_and_restart.py`` (exit 130, the log
consistent, a late second Ctrl-C)."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import threading
import time
from contextlib import closing
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import DEFAULT_TIMEOUT, run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-fast-exit-SECRET-7311"
MODEL = ("--model", "anthropic/claude-test")
HELLO = 'print("Hello")\n'

# Loaded first by every interpreter that has it on its path: a module global is finalized by
# the interpreter's teardown only; an atexit function and a thread that is not a daemon are what
# a normal exit waits for too.
SITECUSTOMIZE = """
import atexit, os, threading, time

class Teardown:
    def __del__(self, write=os.write):
        write(1, b"teardown ran\\n")

KEPT = Teardown()
atexit.register(lambda: os.write(1, b"atexit ran\\n"))

def late():
    time.sleep(1.5)  # still running when the command returns
    os.write(1, b"thread ran\\n")

threading.Thread(target=late).start()
"""


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "hello.py").write_text(HELLO)
    return workspace


def task(workspace: Path, answer: str = "Done: it says Goodbye.") -> list[dict[str, Any]]:
    """Read → edit → answer, as a real model does it."""
    path = str(workspace / "hello.py")
    edit = {"file_path": path, "old_string": "Hello", "new_string": "Goodbye"}
    return [
        {"tool_calls": [{"name": "read", "input": {"file_path": path}}]},
        {"tool_calls": [{"name": "edit", "input": edit}]},
        {"text": answer},
    ]


def database() -> Path:
    return Path(os.environ["LSP_AGENT_DATA_DIR"]) / "lsp-agent.db"


def assert_store_closed_intact() -> None:
    """``PRAGMA integrity_check`` passes, and the write-ahead log was checkpointed away: the
    store was closed, not abandoned."""
    assert not Path(f"{database()}-wal").exists()
    with closing(sqlite3.connect(database())) as db:
        assert db.execute("PRAGMA integrity_check").fetchall() == [("ok",)]


def start(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env={**os.environ, **env},
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_the_command_skips_the_interpreters_teardown_but_not_atexit_or_threads(
    workspace: Path, tmp_path: Path
) -> None:
    (tmp_path / "site").mkdir()
    (tmp_path / "site" / "sitecustomize.py").write_text(SITECUSTOMIZE)
    path = os.pathsep.join(p for p in (str(tmp_path / "site"), os.environ.get("PYTHONPATH")) if p)
    done = run_cli("sessions", "list", "--json", cwd=workspace, env={"PYTHONPATH": path})
    assert done.returncode == 0, done.stderr
    ran = [line for line in done.stdout.splitlines() if line.endswith(" ran")]
    assert ran[-1] == "atexit ran"  # after the thread, as at a normal exit
    assert sorted(ran) == ["atexit ran", "thread ran"]  # and never "teardown ran"
    listed = [line for line in done.stdout.splitlines() if not line.endswith(" ran")]
    assert json.loads("\n".join(listed)) == {"sessions": []}


def test_a_run_ends_with_the_store_closed_and_the_session_resumes(workspace: Path) -> None:
    with running_fake_llm(task(workspace)) as server:
        env = provider_env(server, KEY)
        first = run_cli("run", *MODEL, "--yes", "say goodbye", cwd=workspace, env=env)
        assert first.returncode == 0, first.stderr
        assert first.stdout == "Done: it says Goodbye.\n"
        assert (workspace / "hello.py").read_text() == 'print("Goodbye")\n'
        assert_store_closed_intact()
        server.set_script([{"text": "It was Hello before."}])
        server.clear_log()
        again = run_cli("run", *MODEL, "--continue", "what was it?", cwd=workspace, env=env)
        assert again.returncode == 0, again.stderr
        assert again.stdout == "It was Hello before.\n"
        (body,) = server.model_bodies()
    said = json.dumps(body["messages"])
    assert "say goodbye" in said
    assert "Done: it says Goodbye." in said
    assert_store_closed_intact()


def read_slowly(stream: Any, into: bytearray, *, limit: int | None = None) -> None:
    """A reader slower than the writer: small reads with pauses; with ``limit``, it stops
    reading and closes the pipe after that many bytes (``| head -c``)."""
    while limit is None or len(into) < limit:
        chunk = stream.read1(4096)
        if not chunk:
            break
        into.extend(chunk)
        time.sleep(0.002)
    stream.close()


def test_a_big_answer_reaches_a_slow_reader_whole(workspace: Path) -> None:
    answer = "".join(f"line {n:06d} of a long answer\n" for n in range(20_000))  # ~600 KB
    with running_fake_llm([{"text": answer}]) as server:
        env = provider_env(server, KEY)
        with start("run", *MODEL, "tell me a lot", cwd=workspace, env=env) as proc:
            got = bytearray()
            reader = threading.Thread(target=read_slowly, args=(proc.stdout, got))
            reader.start()
            assert proc.stderr is not None
            stderr = proc.stderr.read()
            reader.join(timeout=DEFAULT_TIMEOUT)
            assert proc.wait(timeout=DEFAULT_TIMEOUT) == 0, stderr
    assert got.decode() == answer
    assert_store_closed_intact()


def test_a_reader_that_goes_away_still_ends_it_with_141_and_the_store_intact(
    workspace: Path,
) -> None:
    answer = "".join(f"line {n:06d} of a long answer\n" for n in range(20_000))
    script = [{"text": answer, "chunk_delay": 0.001}]
    with running_fake_llm(script) as server:
        env = provider_env(server, KEY)
        with start("run", *MODEL, "tell me a lot", cwd=workspace, env=env) as proc:
            got = bytearray()
            read_slowly(proc.stdout, got, limit=100)
            assert proc.stderr is not None
            stderr = proc.stderr.read().decode()
            assert proc.wait(timeout=DEFAULT_TIMEOUT) == 141, stderr
    assert "Traceback" not in stderr
    assert got.startswith(b"line 000000")
    assert_store_closed_intact()


@pytest.mark.parametrize(
    ("script", "args", "code", "says"),
    [
        ([{"error": "auth"}], (), 1, "error:"),
        ([{"text": "never"}], ("--session", "ses_unknown"), 2, "unknown session"),
        (
            [{"tool_calls": [{"name": "read", "input": {"file_path": "hello.py"}}]}],
            ("--max-steps", "1"),
            3,
            "step limit",
        ),
    ],
)
def test_exit_codes_are_unchanged(
    workspace: Path, script: list[dict[str, Any]], args: tuple[str, ...], code: int, says: str
) -> None:
    with running_fake_llm(script) as server:
        done = run_cli("run", *MODEL, *args, "go", cwd=workspace, env=provider_env(server, KEY))
    assert done.returncode == code, done.stderr
    assert says in done.stderr


# -- serve ------------------------------------------------------------------------------------


def send(proc: subprocess.Popen[bytes], message: dict[str, Any]) -> None:
    body = json.dumps({"jsonrpc": "2.0", **message}).encode()
    assert proc.stdin is not None
    proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))
    proc.stdin.flush()


def receive(proc: subprocess.Popen[bytes], request_id: int) -> dict[str, Any]:
    """Messages until the answer to ``request_id``."""
    assert proc.stdout is not None
    while True:
        length = 0
        while (line := proc.stdout.readline().strip()) != b"":
            name, _, value = line.partition(b":")
            if name.lower() == b"content-length":
                length = int(value)
        message = json.loads(proc.stdout.read(length))
        if message.get("id") == request_id and "method" not in message:
            return dict(message)


@pytest.mark.parametrize(("shutdown", "code"), [(True, 0), (False, 0)])
def test_serve_exits_as_before_on_exit(
    workspace: Path, fake_llm: FakeLLMServer, shutdown: bool, code: int
) -> None:
    with subprocess.Popen(
        [sys.executable, "-m", "lsp_agent", "serve"],
        cwd=workspace,
        env={**os.environ, **provider_env(fake_llm, KEY)},
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    ) as proc:
        serve_until_exit(proc, workspace, shutdown=shutdown, code=code)
    assert_store_closed_intact()


def serve_until_exit(
    proc: subprocess.Popen[bytes], workspace: Path, *, shutdown: bool, code: int
) -> None:
    try:
        params = {"processId": os.getpid(), "rootUri": workspace.as_uri(), "capabilities": {}}
        send(proc, {"id": 1, "method": "initialize", "params": params})
        assert "capabilities" in receive(proc, 1)["result"]
        send(proc, {"method": "initialized", "params": {}})
        if shutdown:
            send(proc, {"id": 2, "method": "shutdown"})
            assert receive(proc, 2)["result"] is None
        send(proc, {"method": "exit"})
        assert proc.wait(timeout=DEFAULT_TIMEOUT) == code
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.stderr is not None
    assert "Traceback" not in proc.stderr.read().decode()
