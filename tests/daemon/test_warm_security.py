"""The warm process's socket is private: 0600 in a 0700 folder, so another user cannot even
connect; and were the folder opened to them, the process still refuses any caller whose user id
(``SO_PEERCRED``) is not its own."""

from __future__ import annotations

import os
import stat
import subprocess
from pathlib import Path

import pytest

from lsp_agent.testing.fake_llm import running_fake_llm
from tests.daemon.conftest import folder, logs, lsp_agent, running, warm_env, warm_pids

NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
PROBE = """
import socket, struct, sys
s = socket.socket(socket.AF_UNIX)
try:
    s.connect(sys.argv[1])
except OSError as e:
    print(type(e).__name__); sys.exit()
body = b'{"op": "hello", "version": "x", "idle_seconds": 600}'
try:
    s.sendall(struct.pack("!I", len(body)) + body)
    s.settimeout(30)
    print("answered" if s.recv(100) else "closed")
except OSError:  # closed before the hello was sent, or reset
    print("closed")
"""

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="switching user needs root (CI is)")


def start_warm(runtime_dir: Path, workspace: Path) -> Path:
    with running_fake_llm([{"text": "hi"}]) as server:
        env = warm_env(
            runtime_dir,
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            ANTHROPIC_API_KEY="sk-warm-security",
        )
        result = lsp_agent("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    (pid,) = warm_pids(runtime_dir)
    assert running(pid)
    (sock,) = folder(runtime_dir).glob("*.sock")
    return sock


def as_nobody(sock: Path) -> str:
    probe = subprocess.run(
        [*NOBODY, "/usr/bin/python3", "-I", "-c", PROBE, str(sock)],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
        cwd="/",
    )
    assert probe.returncode == 0, probe.stderr
    return probe.stdout.strip()


def test_the_socket_is_0600_in_a_0700_folder(runtime_dir: Path, workspace: Path) -> None:
    sock = start_warm(runtime_dir, workspace)
    assert stat.S_IMODE(folder(runtime_dir).stat().st_mode) == 0o700
    assert stat.S_IMODE(sock.stat().st_mode) == 0o600
    assert stat.S_ISSOCK(sock.stat().st_mode)
    for log in folder(runtime_dir).glob("*.lo*"):  # the log and the lock
        assert stat.S_IMODE(log.stat().st_mode) == 0o600


@needs_root
def test_another_user_cannot_connect(runtime_dir: Path, workspace: Path) -> None:
    sock = start_warm(runtime_dir, workspace)
    runtime_dir.chmod(0o711)  # only the folder of the socket keeps them out
    assert as_nobody(sock) == "PermissionError"


@needs_root
def test_a_caller_of_another_user_id_is_refused_even_with_the_socket_open_to_them(
    runtime_dir: Path, workspace: Path
) -> None:
    sock = start_warm(runtime_dir, workspace)
    runtime_dir.chmod(0o711)
    folder(runtime_dir).chmod(0o711)
    sock.chmod(0o666)
    assert as_nobody(sock) == "closed"  # connected, but never answered
    assert "refused a connection from user id 65534" in logs(runtime_dir)


def test_a_folder_others_can_enter_is_not_used(runtime_dir: Path, workspace: Path) -> None:
    folder(runtime_dir).mkdir(mode=0o700)
    folder(runtime_dir).chmod(0o755)
    with running_fake_llm([{"text": "cold"}]) as server:
        env = warm_env(
            runtime_dir,
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            ANTHROPIC_API_KEY="sk-warm-security",
        )
        result = lsp_agent("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert (result.returncode, result.stdout) == (0, "cold\n")  # ran cold, as without it
    assert not list(folder(runtime_dir).iterdir())
