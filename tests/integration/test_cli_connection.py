"""A model endpoint that cannot be reached: the message names the URL, the cause and the
setting that chose it; ``doctor`` shows and tests the endpoint; a run that failed before
anything was answered leaves no empty session, one that failed mid-way keeps its session.

Only loopback is used: a port that was just closed (refused), an URL without a scheme."""

from __future__ import annotations

import json
import os
import socket
from pathlib import Path

import pytest

from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

KEY = "sk-cli-conn-SECRET-7777"


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "a.py").write_text("x = 1\n")
    return workspace


@pytest.fixture(autouse=True)
def no_retries() -> None:
    folder = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "config.json").write_text(json.dumps({"retry": {"max_retries": 0}}))


def closed_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
    return port


def sessions(workspace: Path) -> list[dict[str, object]]:
    listing = run_cli("sessions", "list", "--all", "--json", cwd=workspace)
    assert listing.returncode == 0, listing.stderr
    found: list[dict[str, object]] = json.loads(listing.stdout)["sessions"]
    return found


@pytest.mark.parametrize(
    ("model", "variable", "suffix"),
    [
        ("anthropic/claude-test", "ANTHROPIC_BASE_URL", ""),
        ("openai/gpt-test", "OPENAI_BASE_URL", "/v1"),
    ],
)
def test_a_refused_connection_names_url_cause_and_variable(
    workspace: Path, model: str, variable: str, suffix: str
) -> None:
    url = f"http://127.0.0.1:{closed_port()}{suffix}"
    key_env = "ANTHROPIC_API_KEY" if variable.startswith("ANTHROPIC") else "OPENAI_API_KEY"
    result = run_cli(
        "run", "--model", model, "hi", cwd=workspace, env={variable: url, key_env: KEY}
    )
    assert result.returncode == 1
    assert f"connection failed: {url} (from {variable}): connection refused" in result.stderr
    assert "Connection error." not in result.stderr
    assert KEY not in result.stderr
    # Nothing was answered: no "(untitled)" session is left behind, and the run says so.
    assert "no session was kept" in result.stderr
    assert sessions(workspace) == []


def test_a_base_url_without_a_scheme_is_named_and_not_retried(workspace: Path) -> None:
    address = f"127.0.0.1:{closed_port()}"
    env = {"ANTHROPIC_BASE_URL": address, "ANTHROPIC_API_KEY": KEY}
    result = run_cli("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert result.returncode == 1
    assert f"invalid base URL '{address}' (from ANTHROPIC_BASE_URL)" in result.stderr
    assert "http:// or https://" in result.stderr
    assert "retrying" not in result.stderr


def test_a_providers_base_url_is_named_as_the_setting(workspace: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    config = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    config.write_text(
        json.dumps(
            {
                "retry": {"max_retries": 0},
                "providers": {"local": {"type": "openai-compatible", "base_url": url}},
            }
        )
    )
    result = run_cli("run", "--model", "local/qwen", "hi", cwd=workspace)
    assert result.returncode == 1
    assert f"{url} (from providers.local.base_url): connection refused" in result.stderr


def test_a_run_that_failed_mid_way_keeps_its_session(workspace: Path) -> None:
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]},
        {"status": 400, "error_message": "bad things"},
    ]
    with running_fake_llm(script) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        result = run_cli("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert result.returncode == 1
    (kept,) = sessions(workspace)
    assert f"session {kept['sessionId']}" in result.stderr
    shown = run_cli("sessions", "show", str(kept["sessionId"]), cwd=workspace)
    assert "hi" in shown.stdout  # the input is not lost
    assert "[read completed]" in shown.stdout


def test_a_failed_continuation_never_deletes_the_session(workspace: Path) -> None:
    with running_fake_llm([{"text": "first"}]) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY}
        first = run_cli("run", "--model", "anthropic/claude-test", "one", cwd=workspace, env=env)
    assert first.returncode == 0, first.stderr
    (session,) = sessions(workspace)
    env = {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}", "ANTHROPIC_API_KEY": KEY}
    again = run_cli(
        "run",
        "--session",
        str(session["sessionId"]),
        "--model",
        "anthropic/claude-test",
        "two",
        cwd=workspace,
        env=env,
    )
    assert again.returncode == 1
    assert [s["sessionId"] for s in sessions(workspace)] == [session["sessionId"]]


def doctor_lines(workspace: Path, env: dict[str, str]) -> tuple[int, list[str], str]:
    result = run_cli(
        "doctor", cwd=workspace, env={"LSP_AGENT_MODEL": "anthropic/claude-test", **env}
    )
    return result.returncode, result.stdout.splitlines(), result.stdout + result.stderr


def test_doctor_tests_a_refused_endpoint_and_fails(workspace: Path) -> None:
    url = f"http://127.0.0.1:{closed_port()}"
    code, lines, everything = doctor_lines(
        workspace, {"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": KEY}
    )
    assert code == 1
    assert f"FAIL  endpoint: {url} (from ANTHROPIC_BASE_URL): connection refused" in lines
    assert KEY not in everything


def test_doctor_reports_a_reachable_endpoint_with_its_status(workspace: Path) -> None:
    with running_fake_llm([]) as server:
        code, lines, everything = doctor_lines(
            workspace,
            {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": KEY},
        )
        probes = [r for r in server.requests if r.path.endswith("/models")]
    (line,) = [line for line in lines if "endpoint:" in line]
    assert f"{server.anthropic_base_url} (from ANTHROPIC_BASE_URL)" in line
    assert "reachable" in line
    assert "HTTP 404" in line  # the fake has no model list
    assert code == 0
    assert len(probes) == 1
    assert KEY not in everything


def test_doctor_shows_an_invalid_url_and_where_sessions_live(workspace: Path) -> None:
    code, lines, _ = doctor_lines(
        workspace, {"ANTHROPIC_BASE_URL": "localhost:9", "ANTHROPIC_API_KEY": KEY}
    )
    assert code == 1
    assert any("endpoint: localhost:9 (from ANTHROPIC_BASE_URL): invalid URL" in x for x in lines)
    data = Path(os.environ["LSP_AGENT_DATA_DIR"])
    assert any(
        x.startswith("ok") and f"sessions live in {data / 'lsp-agent.db'}" in x for x in lines
    )


def test_doctor_does_not_test_without_a_key(workspace: Path) -> None:
    code, lines, _ = doctor_lines(
        workspace, {"ANTHROPIC_BASE_URL": f"http://127.0.0.1:{closed_port()}"}
    )
    assert code == 0
    assert any(x.startswith("warn") and "not tested without a key" in x for x in lines)
