"""``lsp-agent run`` through the warm process (docs/configuration.md "Warm path"): the second
run is the warm process's, prints and exits as a cold run does, gets its own environment and
folder; ``--no-daemon`` and ``daemon.enabled: false`` leave no socket; a version change and
the idle time end the process."""

from __future__ import annotations

import fcntl
import json
import os
import re
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

from lsp_agent.daemon import wire
from lsp_agent.daemon.client import LOG_LIMIT
from lsp_agent.daemon.paths import daemon_paths
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.daemon.conftest import (
    TIMEOUT,
    folder,
    logs,
    lsp_agent,
    running,
    wait_for,
    warm_env,
    warm_pids,
)

MODEL = ("--model", "anthropic/claude-test")
KEY = "sk-warm-test-key"
SESSION = re.compile(r"ses_\w+")


def provider(server_url: str) -> dict[str, str]:
    return {"ANTHROPIC_BASE_URL": server_url, "ANTHROPIC_API_KEY": KEY}


def runs_in_log(runtime_dir: Path, at_least: int) -> list[tuple[int, int]]:
    """Every run the warm process logged as ended, once ``at_least`` are: it logs an exit
    after it has sent the code to the client, so the client may return first."""

    def logged() -> list[tuple[int, int]]:
        found = re.findall(r"run (\d+) exited (-?\d+)", logs(runtime_dir))
        return [(int(p), int(c)) for p, c in found]

    wait_for(lambda: len(logged()) >= at_least, f"{at_least} runs' exits in the warm log")
    return logged()


def test_the_second_run_is_the_warm_process_s_and_prints_what_a_cold_run_prints(
    runtime_dir: Path, workspace: Path
) -> None:
    (workspace / "a.txt").write_text("alpha\n")
    step = [
        {"tool_calls": [{"name": "read", "input": {"file_path": "a.txt"}}]},
        {"text": "It says alpha."},
    ]
    with running_fake_llm(step * 3) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        cold = lsp_agent("run", *MODEL, "--no-daemon", "what is in a.txt?", cwd=workspace, env=env)
        assert not folder(runtime_dir).exists()  # --no-daemon: no folder, no socket
        first = lsp_agent("run", *MODEL, "what is in a.txt?", cwd=workspace, env=env)
        second = lsp_agent("run", *MODEL, "what is in a.txt?", cwd=workspace, env=env)
    (pid,) = warm_pids(runtime_dir)
    assert running(pid)
    assert len(runs_in_log(runtime_dir, 2)) == 2  # both warm runs were the warm process's
    for warm in (first, second):
        assert warm.returncode == cold.returncode == 0
        assert warm.stdout == cold.stdout == "It says alpha.\n"
        assert SESSION.sub("ses_", warm.stderr) == SESSION.sub("ses_", cold.stderr)
    assert "→ " in second.stderr
    assert "✗" not in second.stderr
    listed = lsp_agent("sessions", "list", "--json", cwd=workspace, env=env)
    assert len(json.loads(listed.stdout)["sessions"]) == 3  # the same store, the same folder
    status = lsp_agent("daemon", "status", cwd=workspace, env=env)
    assert f"pid {pid} " in status.stdout
    assert str(folder(runtime_dir)) in status.stdout


def test_a_failing_run_exits_with_the_cold_run_s_code_and_words(
    runtime_dir: Path, workspace: Path
) -> None:
    env = warm_env(runtime_dir, LSP_AGENT_MODEL="anthropic/claude-test", ANTHROPIC_API_KEY=KEY)
    cold = lsp_agent("run", "--no-daemon", "--max-steps", "0", "hi", cwd=workspace, env=env)
    warm = lsp_agent("run", "--max-steps", "0", "hi", cwd=workspace, env=env)
    assert warm_pids(runtime_dir)
    assert (warm.returncode, warm.stdout, warm.stderr) == (cold.returncode, "", cold.stderr)
    assert cold.returncode == 2
    unknown = lsp_agent("run", "--session", "ses_nope", "hi", cwd=workspace, env=env)
    assert unknown.returncode == 2
    assert "unknown session: ses_nope" in unknown.stderr
    assert [code for _pid, code in runs_in_log(runtime_dir, 2)] == [2, 2]


def test_each_run_gets_its_own_environment_and_folder(runtime_dir: Path, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    script = [{"tool_calls": [{"name": "bash", "input": {"command": "pwd; echo $GREETING"}}]}]
    with (
        running_fake_llm([*script, {"text": "from A"}]) as a,
        running_fake_llm([*script, {"text": "from B"}]) as b,
    ):
        env_a = warm_env(runtime_dir, GREETING="hello-a", **provider(a.anthropic_base_url))
        env_b = warm_env(runtime_dir, GREETING="hello-b", **provider(b.anthropic_base_url))
        first = lsp_agent("run", *MODEL, "--yes", "go", cwd=one, env=env_a)
        second = lsp_agent("run", *MODEL, "--yes", "go", cwd=two, env=env_b)
        assert len(a.model_bodies()) == 2
        assert len(b.model_bodies()) == 2
    assert len(warm_pids(runtime_dir)) == 1  # one warm process served both
    assert len(runs_in_log(runtime_dir, 2)) == 2
    assert (first.returncode, first.stdout) == (0, "from A\n")
    assert (second.returncode, second.stdout) == (0, "from B\n")
    assert f"{one}\n" in first.stderr
    assert "hello-a" in first.stderr
    assert f"{two}\n" in second.stderr
    assert "hello-b" in second.stderr


def test_a_prompt_from_stdin_reaches_the_warm_run(runtime_dir: Path, workspace: Path) -> None:
    with running_fake_llm([{"text": "read it"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        result = lsp_agent("run", *MODEL, "-", cwd=workspace, env=env, stdin="the piped prompt")
        body = server.model_bodies()[0]
    assert warm_pids(runtime_dir)
    assert (result.returncode, result.stdout) == (0, "read it\n")
    assert "the piped prompt" in json.dumps(body["messages"][-1])


def test_daemon_enabled_false_in_the_user_file_keeps_runs_cold(
    runtime_dir: Path, workspace: Path, isolated_home: Path
) -> None:
    config = isolated_home / ".config" / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"daemon": {"enabled": False}}))
    with running_fake_llm([{"text": "cold"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
    assert (result.returncode, result.stdout) == (0, "cold\n")
    assert not folder(runtime_dir).exists()


def test_a_warm_process_of_another_version_is_replaced(runtime_dir: Path, workspace: Path) -> None:
    with running_fake_llm([{"text": "new"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        with (runtime_dir / "old.log").open("w") as log:
            old = subprocess.Popen(  # an older install's warm process, still running
                [sys.executable, "-m", "lsp_agent", "daemon", "serve"],
                env={**env, "LSP_AGENT_DAEMON_VERSION": "0.0.1+old"},
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                start_new_session=True,
            )
        try:
            wait_for(
                lambda: "version 0.0.1+old, ready" in (runtime_dir / "old.log").read_text(),
                "the old one",
            )
            result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
            assert old.wait(timeout=TIMEOUT) == 0  # asked to stop, it exited
        finally:
            if old.poll() is None:
                old.kill()
                old.wait()
    assert "asked to stop" in (runtime_dir / "old.log").read_text()
    (new,) = warm_pids(runtime_dir)
    assert new != old.pid
    assert running(new)
    assert (result.returncode, result.stdout) == (0, "new\n")
    assert len(runs_in_log(runtime_dir, 1)) == 1  # the run was the new process's


def test_the_warm_process_exits_after_its_idle_time(
    runtime_dir: Path, workspace: Path, isolated_home: Path
) -> None:
    config = isolated_home / ".config" / "lsp-agent" / "config.json"
    config.parent.mkdir(parents=True, exist_ok=True)
    config.write_text(json.dumps({"daemon": {"idle_seconds": 2}}))
    with running_fake_llm([{"text": "done"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
    assert result.returncode == 0
    (pid,) = warm_pids(runtime_dir)
    wait_for(lambda: not running(pid), "the idle warm process to exit")
    assert "idle for" in logs(runtime_dir)
    assert not list(folder(runtime_dir).glob("*.sock"))  # it removed its socket


def test_two_first_runs_at_once_start_one_warm_process_that_serves_both(
    runtime_dir: Path, tmp_path: Path
) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    with running_fake_llm([{"text": "answer"}, {"text": "answer"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        procs = [
            subprocess.Popen(
                [sys.executable, "-m", "lsp_agent", "run", *MODEL, "hi"],
                cwd=folder_,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for folder_ in (one, two)
        ]
        results = [proc.communicate(timeout=TIMEOUT) for proc in procs]
    assert [proc.returncode for proc in procs] == [0, 0]
    assert [out for out, _err in results] == ["answer\n", "answer\n"]
    assert len(warm_pids(runtime_dir)) == 1  # the second found the lock taken
    assert len(runs_in_log(runtime_dir, 2)) == 2


def test_a_config_change_between_runs_takes_effect(
    runtime_dir: Path, workspace: Path, isolated_home: Path
) -> None:
    with running_fake_llm([{"text": "first"}, {"text": "second"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        unset = lsp_agent("run", "hi", cwd=workspace, env=env)
        config = isolated_home / ".config" / "lsp-agent" / "config.json"
        config.parent.mkdir(parents=True, exist_ok=True)
        config.write_text(json.dumps({"model": "anthropic/claude-test"}))
        configured = lsp_agent("run", "hi", cwd=workspace, env=env)
    assert unset.returncode == 2  # no model configured yet
    assert (configured.returncode, configured.stdout) == (0, "first\n")
    assert len(warm_pids(runtime_dir)) == 1
    assert [code for _pid, code in runs_in_log(runtime_dir, 2)] == [2, 0]


def test_daemon_stop_ends_the_warm_process_and_removes_its_socket(
    runtime_dir: Path, workspace: Path
) -> None:
    with running_fake_llm([{"text": "hi"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        assert lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env).returncode == 0
    (pid,) = warm_pids(runtime_dir)
    stopped = lsp_agent("daemon", "stop", cwd=workspace, env=env)
    assert (stopped.returncode, stopped.stdout) == (0, f"stopping pid {pid}\n")
    wait_for(lambda: not running(pid), "the warm process to exit")
    assert not list(folder(runtime_dir).glob("*.sock"))
    status = lsp_agent("daemon", "status", cwd=workspace, env=env)
    assert status.stdout == "no warm lsp-agent process is running\n"


def test_a_log_grown_past_its_limit_starts_again_with_the_next_warm_process(
    runtime_dir: Path, workspace: Path
) -> None:
    with running_fake_llm([{"text": "hi"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        paths = daemon_paths(env)
        Path(paths.log).write_text("old line\n" * (LOG_LIMIT // 9 + 1))
        assert lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env).returncode == 0
    text = Path(paths.log).read_text()
    assert "old line" not in text
    assert len(warm_pids(runtime_dir)) == 1


def test_a_warm_process_that_cannot_start_leaves_the_run_cold(
    runtime_dir: Path, workspace: Path
) -> None:
    with running_fake_llm([{"text": "cold anyway"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        paths = daemon_paths(env)
        with open(paths.lock, "w") as held:  # a process that holds the lock but never listens
            fcntl.flock(held, fcntl.LOCK_EX)
            result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
    assert (result.returncode, result.stdout) == (0, "cold anyway\n")
    assert warm_pids(runtime_dir) == []  # the one started found the lock taken and left


def test_a_runtime_folder_too_long_for_a_socket_leaves_the_run_cold(
    tmp_path: Path, workspace: Path
) -> None:
    deep = tmp_path / ("d" * 100)
    deep.mkdir(mode=0o700)
    with running_fake_llm([{"text": "cold"}]) as server:
        env = warm_env(deep, **provider(server.anthropic_base_url))
        result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
    assert (result.returncode, result.stdout) == (0, "cold\n")
    assert not list((deep / "lsp-agent").iterdir())


def test_the_warm_client_imports_none_of_the_agent_s_heavy_modules(
    runtime_dir: Path, workspace: Path
) -> None:
    with running_fake_llm([{"text": "one"}, {"text": "two"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        assert lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env).returncode == 0
        traced = subprocess.run(
            [sys.executable, "-X", "importtime", "-m", "lsp_agent", "run", *MODEL, "hi"],
            cwd=workspace,
            env=env,
            capture_output=True,
            text=True,
            timeout=TIMEOUT,
            check=False,
        )
    assert (traced.returncode, traced.stdout) == (0, "two\n")
    assert len(runs_in_log(runtime_dir, 2)) == 2  # the traced run was the warm process's
    imported = {
        line.split("|")[-1].strip()
        for line in traced.stderr.splitlines()
        if line.startswith("import time:") and "package" not in line
    }
    assert "lsp_agent.daemon.client" in imported
    heavy = ("anthropic", "openai", "pydantic", "httpx", "asyncio", "sqlite3", "lsp_agent.app")
    assert not [name for name in imported if name.split(".")[0] in heavy or name in heavy]
    assert len(imported) < 200  # a cold run imports thousands


def test_a_replaced_process_slow_to_let_go_of_its_socket_is_waited_for(
    runtime_dir: Path, workspace: Path
) -> None:
    """An older version's process that keeps its socket a moment after "stop" (on a busy
    machine) is not asked again and again until the run gives up and goes cold."""
    with running_fake_llm([{"text": "new"}]) as server:
        env = warm_env(runtime_dir, **provider(server.anthropic_base_url))
        paths = daemon_paths(env)
        listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        listener.bind(paths.socket)
        listener.listen(8)
        listener.settimeout(0.2)
        stops: list[float] = []
        done = threading.Event()

        def let_go() -> None:
            os.unlink(paths.socket)
            listener.close()

        def old_version() -> None:
            while not done.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:  # the timeout, or closed after letting go
                    continue
                with conn:
                    conn.settimeout(5)
                    hello, _ = wire.receive(conn)
                    wire.send(conn, {"version": "0.0.1+old"})
                    stop, _ = wire.receive(conn)
                    assert (hello["op"], stop["op"]) == ("hello", "stop")
                    wire.send(conn, {"stopping": True})
                    stops.append(time.monotonic())
                    if len(stops) == 1:
                        threading.Timer(1.0, let_go).start()

        thread = threading.Thread(target=old_version, daemon=True)
        thread.start()
        try:
            result = lsp_agent("run", *MODEL, "hi", cwd=workspace, env=env)
        finally:
            done.set()
            thread.join(timeout=10)
    assert (result.returncode, result.stdout) == (0, "new\n")
    assert len(stops) == 1  # asked once, then given time to go
    assert len(runs_in_log(runtime_dir, 1)) == 1  # the run was the new warm process's
