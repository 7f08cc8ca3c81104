"""MCP servers end to end, through the real CLI (issue 20, docs/mcp.md): a server written with
the ``mcp`` package (tests/support/mcp_servers.py) over stdio, streamable HTTP and legacy SSE;
its tools offered to the model as ``<server>_<tool>`` (provider-safe names, new tools after
``tools/list_changed``) behind the permission gate (key ``mcp``, patterns ``<server>:<tool>``,
only the user file's ``read_only_tools`` run unasked); a local server's clean environment and a
remote one's headers; error results, timeouts, a killed server restarted on the call after the
failed one, a server that cannot start reported without stopping the run; ``doctor`` listing
every server; a project file's servers only in a trusted folder. The agent's key reaches no
request body."""

from __future__ import annotations

import json
import os
import re
import signal
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer
from tests.support.mcp_servers import (
    FAILURE,
    LATE_TOOL,
    MISSING_COMMAND,
    STDERR_MARKER,
    TOOL_NAMES,
    start_http_server,
    stdio_command,
)
from tests.support.provider_env import provider_env
from tests.support.user_config import write_user_config

KEY = "sk-mcp-e2e-SECRET-7731"
OTHER_KEY = "sk-openai-mcp-SECRET-1187"
MODEL = ("--model", "anthropic/claude-test")
SERVER = "probe"


def local_server(pid_file: Path, **extra: Any) -> dict[str, Any]:
    return {"type": "local", "command": stdio_command(pid_file), "timeout_ms": 30000, **extra}


def call(tool: str, **arguments: Any) -> dict[str, Any]:
    return {"tool_calls": [{"name": tool, "input": arguments}]}


def tool_results(body: dict[str, Any]) -> list[dict[str, Any]]:
    """The ``tool_result`` blocks of a model request's last message (the previous turn's calls)."""
    content = body["messages"][-1]["content"]
    assert isinstance(content, list), body["messages"][-1]
    return [block for block in content if block.get("type") == "tool_result"]


def result_text(block: dict[str, Any]) -> str:
    content = block.get("content")
    if isinstance(content, str):
        return content
    assert isinstance(content, list), block
    return "\n".join(part.get("text", "") for part in content if part.get("type") == "text")


def only_result(body: dict[str, Any]) -> tuple[str, bool]:
    [block] = tool_results(body)
    return result_text(block), bool(block.get("is_error"))


def offered_tools(body: dict[str, Any]) -> set[str]:
    return {tool["name"] for tool in body.get("tools", [])}


def every_body(server: FakeLLMServer) -> str:
    """Every request the fake LLM got, side requests included, as one string."""
    return json.dumps([record.body for record in server.requests])


def updates(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line)["update"] for line in stdout.splitlines() if line.strip()]


def is_gone(pid: int) -> bool:
    """Exited (a zombie counts: nothing runs any more)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return True
    return state in ("Z", "X")


def wait_gone(pid: int, timeout: float = 15.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if is_gone(pid):
            return True
        time.sleep(0.05)
    return is_gone(pid)


@pytest.fixture
def pid_file(tmp_path: Path) -> Iterator[Path]:
    """Where the stdio server writes its pid; a server still running after the test is
    killed (by that pid) so a failing test leaks nothing."""
    path = tmp_path / "mcp-server.pid"
    yield path
    if path.exists() and not is_gone(pid := int(path.read_text())):
        os.kill(pid, signal.SIGKILL)


def env_lines(text: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in text.splitlines() if "=" in line)


def test_a_stdio_server_s_tools_are_called_through_the_gate_with_a_clean_environment(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config(
        {
            "mcp": {
                SERVER: local_server(
                    pid_file,
                    environment={
                        "PROBE_SETTING": "configured-value",
                        "PROBE_FROM_ENV": "{env:PROBE_SOURCE}",
                    },
                    enabled=True,
                )
            }
        }
    )
    fake_llm.set_script(
        [
            call(f"{SERVER}_echo", text="hello through mcp"),
            call(f"{SERVER}_env"),
            {"text": "Both tools answered."},
        ]
    )
    env = {
        **provider_env(fake_llm, KEY),
        "OPENAI_API_KEY": OTHER_KEY,
        "PROBE_SOURCE": "resolved-from-agent-env",
        "PROBE_UNLISTED": "not-for-the-server",
    }
    result = run_cli("run", *MODEL, "--yes", "--json", "use the probe", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 3, result.stderr
    assert {f"{SERVER}_echo", f"{SERVER}_env"} <= offered_tools(bodies[0])

    echoed, failed = only_result(bodies[1])
    assert not failed, echoed
    assert "hello through mcp" in echoed

    printed, failed = only_result(bodies[2])
    assert not failed, printed
    seen = env_lines(printed)
    assert seen.get("PROBE_SETTING") == "configured-value", printed
    assert seen.get("PROBE_FROM_ENV") == "resolved-from-agent-env", printed
    assert "PATH" in seen, printed
    assert "PROBE_UNLISTED" not in seen, printed
    assert not {"ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_BASE_URL"} & set(seen), printed

    sent = every_body(fake_llm)
    assert KEY not in sent
    assert OTHER_KEY not in sent
    assert STDERR_MARKER not in sent  # the server's stderr goes to the log, not the model
    assert KEY not in result.stdout + result.stderr

    permissions = [u for u in updates(result.stdout) if u["sessionUpdate"] == "permission_update"]
    assert [u["permission"] for u in permissions if u["state"] == "allowed"] == ["mcp", "mcp"]

    # the session is over: the server it started is stopped with it
    assert wait_gone(int(pid_file.read_text())), "the MCP server outlived `lsp-agent run`"


def test_a_streamable_http_server_s_results_pass_the_secret_filter(
    workspace: Path, fake_llm: FakeLLMServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The remote server runs with the agent's key in its environment (a server we do not
    # control may hold anything): its `env` output carries the key, the model must not see it.
    monkeypatch.setenv("PROBE_HTTP_MARKER", "served-over-http")
    monkeypatch.setenv("PROBE_LEAKED_KEY", KEY)
    with start_http_server() as url:
        monkeypatch.delenv("PROBE_LEAKED_KEY")
        write_user_config({"mcp": {SERVER: {"type": "remote", "url": url, "timeout_ms": 30000}}})
        fake_llm.set_script(
            [
                call(f"{SERVER}_echo", text="hello over http"),
                call(f"{SERVER}_env"),
                {"text": "Both tools answered."},
            ]
        )
        result = run_cli(
            "run", *MODEL, "--yes", "use the probe", cwd=workspace, env=provider_env(fake_llm, KEY)
        )
    assert result.returncode == 0, result.stderr
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 3, result.stderr
    assert {f"{SERVER}_echo", f"{SERVER}_env"} <= offered_tools(bodies[0])

    echoed, failed = only_result(bodies[1])
    assert not failed, echoed
    assert "hello over http" in echoed

    printed, failed = only_result(bodies[2])
    assert not failed, printed
    assert "PROBE_HTTP_MARKER=served-over-http" in printed
    assert "PROBE_LEAKED_KEY=" in printed  # the line is there, its value masked
    assert KEY not in every_body(fake_llm)
    assert KEY not in result.stdout + result.stderr


def test_a_remote_server_gets_the_configured_headers_and_no_key(
    workspace: Path, fake_llm: FakeLLMServer
) -> None:
    with start_http_server() as url:
        remote = {"type": "remote", "url": url, "headers": {"X-Probe": "{env:PROBE_HEADER}"}}
        write_user_config({"mcp": {SERVER: remote}})
        fake_llm.set_script([call(f"{SERVER}_headers"), {"text": "ok"}])
        env = {**provider_env(fake_llm, KEY), "PROBE_HEADER": "header-from-agent-env"}
        result = run_cli("run", *MODEL, "--yes", "headers", cwd=workspace, env=env)
    assert result.returncode == 0, result.stderr
    seen, failed = only_result(fake_llm.model_bodies()[1])
    assert not failed, seen
    assert "x-probe: header-from-agent-env" in seen.splitlines(), seen
    assert "masked" not in seen, seen  # nothing secret (no provider key) was sent to it


def test_a_server_s_new_tools_are_offered_after_tools_list_changed(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config({"mcp": {SERVER: local_server(pid_file)}})
    late = f"{SERVER}_{LATE_TOOL}"
    fake_llm.set_script(
        [
            call(f"{SERVER}_grow"),
            call(f"{SERVER}_echo", text="meanwhile"),
            call(late),
            {"text": "ok"},
        ]
    )
    result = run_cli("run", *MODEL, "--yes", "grow", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 0, result.stderr
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 4, result.stderr
    assert late not in offered_tools(bodies[0])
    assert late in offered_tools(bodies[2])
    answered, failed = only_result(bodies[3])
    assert not failed, answered
    assert "the late tool answered" in answered


def test_a_remote_server_that_speaks_legacy_sse_is_used_over_sse(
    workspace: Path, fake_llm: FakeLLMServer
) -> None:
    with start_http_server(transport="sse") as url:
        write_user_config({"mcp": {SERVER: {"type": "remote", "url": url}}})
        fake_llm.set_script([call(f"{SERVER}_echo", text="hello over sse"), {"text": "ok"}])
        result = run_cli(
            "run", *MODEL, "--yes", "use the probe", cwd=workspace, env=provider_env(fake_llm, KEY)
        )
    assert result.returncode == 0, result.stderr
    bodies = fake_llm.model_bodies()
    echoed, failed = only_result(bodies[1])
    assert not failed, echoed
    assert "hello over sse" in echoed


def test_mcp_tools_ask_by_default_and_rules_match_server_colon_tool(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config(
        {
            "mcp": {SERVER: local_server(pid_file)},
            "permission": {"mcp": {f"{SERVER}:echo": "allow"}},
        }
    )
    fake_llm.set_script(
        [
            call(f"{SERVER}_echo", text="allowed by rule"),
            call(f"{SERVER}_env"),
            {"text": "One of two."},
        ]
    )
    # no --yes and no terminal: an ask is refused
    result = run_cli("run", *MODEL, "use the probe", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 4, result.stderr  # 4: an ask was refused
    assert "1 permission ask was refused" in result.stderr
    bodies = fake_llm.model_bodies()
    echoed, failed = only_result(bodies[1])
    assert not failed, echoed
    assert "allowed by rule" in echoed
    refused, failed = only_result(bodies[2])
    assert failed
    assert "PATH=" not in refused  # the server's tool did not run


@pytest.mark.parametrize("where", ["nowhere", "hint", "user", "trusted_project"])
def test_read_only_tools_run_unasked_only_when_the_user_file_lists_them(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path, where: str
) -> None:
    # `echo` is marked readOnlyHint, `env` is not; neither call gets --yes or a terminal
    listed = {"mcp": {SERVER: local_server(pid_file, read_only_tools=["echo"])}}
    if where == "nowhere":
        write_user_config({"mcp": {SERVER: local_server(pid_file)}})
    elif where == "hint":  # the server's own annotation, trusted by the old opt-in: no more
        write_user_config({"mcp": {SERVER: local_server(pid_file, allow_read_only=True)}})
    elif where == "user":
        write_user_config(listed)
    else:  # the list counts in the user file only, even from a trusted project
        write_user_config({"trusted_folders": [str(workspace)]})
        (workspace / ".lsp-agent.json").write_text(json.dumps(listed))
    fake_llm.set_script(
        [call(f"{SERVER}_echo", text="read-only"), call(f"{SERVER}_env"), {"text": "done"}]
    )
    result = run_cli("run", *MODEL, "go", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 4, result.stderr  # `env` is refused in every case
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 3, result.stderr
    echoed, echo_failed = only_result(bodies[1])
    assert echo_failed is (where != "user"), echoed
    env_text, env_failed = only_result(bodies[2])
    assert env_failed, env_text


def test_killing_the_stdio_server_fails_the_next_call_and_the_one_after_restarts_it(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config({"mcp": {SERVER: local_server(pid_file)}})
    fake_llm.set_script(
        [
            call(f"{SERVER}_echo", text="first"),
            {**call(f"{SERVER}_echo", text="second"), "hold_after": 0},
            call(f"{SERVER}_echo", text="third"),
            {"text": "Survived the crash."},
        ]
    )
    env = provider_env(fake_llm, KEY)
    with ThreadPoolExecutor(1) as pool:
        running = pool.submit(run_cli, "run", *MODEL, "--yes", "go", cwd=workspace, env=env)
        try:
            # the second model request is held: the first call has run, the second is not made
            deadline = time.monotonic() + 120
            while len(fake_llm.model_bodies()) < 2 and not running.done():
                assert time.monotonic() < deadline, "the second model request never came"
                time.sleep(0.05)
            assert not running.done(), running.result().stderr
            assert pid_file.exists(), "the MCP server was not started with the session"
            first_pid = int(pid_file.read_text())
            os.kill(first_pid, signal.SIGKILL)
            assert wait_gone(first_pid)
        finally:
            fake_llm.release()
        result = running.result()

    assert result.returncode == 0, result.stderr
    assert result.stdout == "Survived the crash.\n"
    tool_lines = ("→", "✗", "✓")
    noted = [
        line
        for line in result.stderr.splitlines()
        if SERVER in line and not line.lstrip().startswith(tool_lines)
    ]
    assert noted, f"no status line names the crashed server: {result.stderr}"
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 4, result.stderr
    first, failed = only_result(bodies[1])
    assert not failed, first
    assert "first" in first
    second, failed = only_result(bodies[2])
    assert failed, f"the call to the killed server did not fail: {second!r}"
    third, failed = only_result(bodies[3])
    assert not failed, f"the call after the failure did not restart the server: {third!r}"
    assert "third" in third
    restarted_pid = int(pid_file.read_text())
    assert restarted_pid != first_pid
    assert KEY not in every_body(fake_llm)
    assert wait_gone(restarted_pid), "the restarted MCP server outlived `lsp-agent run`"


def test_an_error_result_and_a_hung_call_are_tool_errors_and_the_session_goes_on(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config({"mcp": {SERVER: local_server(pid_file, timeout_ms=8000)}})
    fake_llm.set_script(
        [
            call(f"{SERVER}_fail"),
            call(f"{SERVER}_sleep", seconds=600),
            call(f"{SERVER}_echo", text="after the hang"),
            {"text": "Carried on."},
        ]
    )
    result = run_cli("run", *MODEL, "--yes", "go", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Carried on.\n"
    bodies = fake_llm.model_bodies()
    assert len(bodies) == 4, result.stderr
    failed_text, failed = only_result(bodies[1])
    assert failed, failed_text  # isError is a tool error, with the server's text
    assert FAILURE in failed_text
    hung_text, failed = only_result(bodies[2])
    assert failed, hung_text  # past timeout_ms: an error, not a wait of ten minutes
    assert "slept" not in hung_text
    echoed, failed = only_result(bodies[3])
    assert not failed, f"the server was unusable after a timed-out call: {echoed!r}"
    assert "after the hang" in echoed


def missing_and_working(pid_file: Path) -> dict[str, Any]:
    return {
        "mcp": {
            "ghostsrv": {"type": "local", "command": [MISSING_COMMAND, "--serve"]},
            SERVER: local_server(pid_file),
        }
    }


def names_the_error(line: str) -> bool:
    lowered = line.lower()
    return MISSING_COMMAND in line or "not found" in lowered or "no such file" in lowered


def test_a_server_that_cannot_start_is_one_warning_and_the_run_goes_on(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config(missing_and_working(pid_file))
    fake_llm.set_script([call(f"{SERVER}_echo", text="still here"), {"text": "Done anyway."}])
    result = run_cli("run", *MODEL, "--yes", "try", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Done anyway.\n"
    warnings = [line for line in result.stderr.splitlines() if "ghostsrv" in line]
    assert len(warnings) == 1, result.stderr
    bodies = fake_llm.model_bodies()
    assert not any(name.startswith("ghostsrv") for name in offered_tools(bodies[0]))
    echoed, failed = only_result(bodies[1])  # the other server is unharmed
    assert not failed, echoed
    assert "still here" in echoed


def test_doctor_lists_each_server_with_its_tool_count_or_its_error(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path
) -> None:
    write_user_config(missing_and_working(pid_file))
    env = {**provider_env(fake_llm, KEY), "LSP_AGENT_MODEL": "anthropic/claude-test"}
    result = run_cli("doctor", cwd=workspace, env=env)
    lines = result.stdout.splitlines()
    ghost = [line for line in lines if "ghostsrv" in line]
    assert ghost, result.stdout
    assert any(names_the_error(line) for line in ghost), result.stdout
    probe = [line for line in lines if SERVER in line and "ghostsrv" not in line]
    count = len(TOOL_NAMES)
    assert any(re.search(rf"\b{count} tools\b", line) for line in probe), result.stdout
    assert KEY not in result.stdout + result.stderr
    assert wait_gone(int(pid_file.read_text())), "doctor left the MCP server running"


PROVIDER_TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def test_tool_names_follow_the_providers_rules_and_a_disabled_server_is_not_started(
    workspace: Path, fake_llm: FakeLLMServer, tmp_path: Path
) -> None:
    odd, long = "docs.server v2", "s" * 70
    write_user_config(
        {
            "mcp": {
                odd: local_server(tmp_path / "odd.pid"),
                long: local_server(tmp_path / "long.pid"),
                "off": local_server(tmp_path / "off.pid", enabled=False),
            }
        }
    )
    env = provider_env(fake_llm, KEY)
    fake_llm.set_script([{"text": "Looked."}])
    first = run_cli("run", *MODEL, "look", cwd=workspace, env=env)
    assert first.returncode == 0, first.stderr
    [body] = fake_llm.model_bodies()
    names = [tool["name"] for tool in body["tools"]]
    assert len(names) == len(set(names)), names
    assert all(PROVIDER_TOOL_NAME.match(name) for name in names), names
    from_odd = [name for name in names if name.startswith("docs_server_v2_")]
    from_long = [name for name in names if name.startswith("s" * 20)]
    assert len(from_odd) == len(from_long) == len(TOOL_NAMES), names
    assert not any(name.startswith("off") for name in names), names  # disabled: not started
    assert not (tmp_path / "off.pid").exists()
    assert sorted(from_odd) == sorted(f"docs_server_v2_{tool}" for tool in TOOL_NAMES)
    # a server name too long to fit is what gets cut: the model still tells echo from env
    assert sorted(name.rsplit("_", 1)[-1] for name in from_long) == sorted(TOOL_NAMES), names

    # a shortened name is the one the model calls
    [echo] = [name for name in from_long if name.endswith("_echo")]
    fake_llm.clear_log()
    fake_llm.set_script([call(echo, text="long name works"), {"text": "ok"}])
    second = run_cli("run", *MODEL, "--yes", "call it", cwd=workspace, env=env)
    assert second.returncode == 0, second.stderr
    echoed, failed = only_result(fake_llm.model_bodies()[1])
    assert not failed, echoed
    assert "long name works" in echoed


@pytest.mark.parametrize("trusted", [False, True])
def test_a_project_file_starts_servers_only_in_a_trusted_folder(
    workspace: Path, fake_llm: FakeLLMServer, pid_file: Path, trusted: bool
) -> None:
    (workspace / ".lsp-agent.json").write_text(
        json.dumps({"mcp": {SERVER: local_server(pid_file)}})
    )
    write_user_config({"trusted_folders": [str(workspace)]} if trusted else {})
    fake_llm.set_script([{"text": "Looked."}])
    result = run_cli("run", *MODEL, "look", cwd=workspace, env=provider_env(fake_llm, KEY))
    assert result.returncode == 0, result.stderr
    [body] = fake_llm.model_bodies()
    assert (f"{SERVER}_echo" in offered_tools(body)) is trusted
    assert pid_file.exists() is trusted
