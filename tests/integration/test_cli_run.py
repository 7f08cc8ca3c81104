"""``lsp-agent run`` as a user sees it: tool lines, command output, the closing summary, the
exit status of refused asks, the prompt from stdin, ``--file`` attachments, ``--help``."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from lsp_agent.testing.cli import DEFAULT_TIMEOUT, run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-cli-run-SECRET-4242"
MODEL = ("--model", "anthropic/claude-test")
SUMMARY = re.compile(r"^session (ses_\w+) · [\d,]+ in, [\d,]+ out tokens", re.MULTILINE)


@pytest.fixture
def workspace(workspace: Path) -> Path:
    (workspace / "a.py").write_text("print('a')\n")
    return workspace


def run_with_stdin(
    *args: str, cwd: Path, env: dict[str, str], stdin: str
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd,
        env={**os.environ, **env},
        input=stdin,
        capture_output=True,
        text=True,
        timeout=DEFAULT_TIMEOUT,
        check=False,
    )


def user_texts(server: FakeLLMServer) -> list[str]:
    """The text blocks of the first model request's last user message."""
    body = server.model_bodies()[0]
    content = body["messages"][-1]["content"]
    return [block["text"] for block in content if block.get("type") == "text"]


def test_a_command_gets_one_line_its_output_and_the_run_ends_with_the_session(
    workspace: Path,
) -> None:
    command = "for i in 1 2 3 4; do echo line$i; done"
    script = [
        {"tool_calls": [{"name": "bash", "input": {"command": command}}]},
        {"text": "Counted to four."},
    ]
    with running_fake_llm(script) as server:
        result = run_cli(
            "run", *MODEL, "--yes", "count", cwd=workspace, env=provider_env(server, KEY)
        )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Counted to four.\n"  # stdout is the answer only
    lines = result.stderr.splitlines()
    assert [line for line in lines if command in line] == [f"→ Run {command}"]
    start = lines.index(f"→ Run {command}")
    shown = [line.strip() for line in lines[start + 1 : start + 7]]
    assert shown == ["line1", "line2", "line3", "line4", "", "Exit code: 0"]
    match = SUMMARY.search(result.stderr)
    assert match is not None, result.stderr
    assert lines[-1].startswith("session ")
    again = run_cli("sessions", "show", match[1], cwd=workspace)
    assert again.returncode == 0
    assert "Counted to four." in again.stdout
    assert KEY not in result.stdout + result.stderr


def test_a_refused_edit_without_a_terminal_exits_4_and_says_so_once(workspace: Path) -> None:
    script = [
        {"tool_calls": [{"name": "write", "input": {"file_path": "b.txt", "content": "x\n"}}]},
        {"text": "I could not write it."},
    ]
    with running_fake_llm(script) as server:
        result = run_cli("run", *MODEL, "write b.txt", cwd=workspace, env=provider_env(server, KEY))
    assert result.returncode == 4, result.stderr
    assert result.stderr.count("not approved: no terminal") == 1
    assert "1 permission ask was refused" in result.stderr
    assert not (workspace / "b.txt").exists()
    assert SUMMARY.search(result.stderr)


def test_the_prompt_can_come_from_stdin(workspace: Path) -> None:
    prompt = "explain this\nover two lines"
    with running_fake_llm([{"text": "ok"}]) as server:
        result = run_with_stdin(
            "run", *MODEL, "-", cwd=workspace, env=provider_env(server, KEY), stdin=prompt
        )
        assert result.returncode == 0, result.stderr
        assert user_texts(server)[0] == prompt


def test_an_empty_prompt_from_stdin_is_bad_usage(workspace: Path) -> None:
    result = run_with_stdin("run", *MODEL, "-", cwd=workspace, env={}, stdin="  \n")
    assert result.returncode == 2
    assert "prompt is empty" in result.stderr


def test_files_are_attached_as_delimited_blocks(workspace: Path) -> None:
    (workspace / "src").mkdir()
    (workspace / "src" / "b.py").write_text(f"TOKEN = '{KEY}'\n")
    with running_fake_llm([{"text": "seen"}]) as server:
        result = run_cli(
            "run",
            *MODEL,
            "--file",
            "a.py",
            "--file",
            "src/b.py",
            "review these",
            cwd=workspace,
            env=provider_env(server, KEY),
        )
        assert result.returncode == 0, result.stderr
        texts = user_texts(server)
    prompt, first, second = texts[-3:]
    assert prompt == "review these"
    assert first == "<attached_file path=\"a.py\">\nprint('a')\n</attached_file>"
    assert second.startswith('<attached_file path="src/b.py">\n')
    assert second.endswith("</attached_file>")
    assert KEY not in second  # the agent's own key is masked, as in what tools return


@pytest.mark.parametrize("kind", ["outside", "symlink_out", "fifo", "missing", "folder"])
def test_a_file_that_cannot_be_attached_is_bad_usage(
    workspace: Path, tmp_path: Path, kind: str
) -> None:
    outside = tmp_path / "secret.txt"
    outside.write_text("TOP SECRET\n")
    target = {
        "outside": str(outside),
        "symlink_out": "link.txt",
        "fifo": "pipe",
        "missing": "nope.txt",
        "folder": ".",
    }[kind]
    (workspace / "link.txt").symlink_to(outside)
    os.mkfifo(workspace / "pipe")
    with running_fake_llm([{"text": "unused"}]) as server:
        result = run_cli(
            "run", *MODEL, "--file", target, "hi", cwd=workspace, env=provider_env(server, KEY)
        )
        assert result.returncode == 2, result.stderr
        assert f"--file {target}" in result.stderr
        assert server.model_bodies() == []
    assert "TOP SECRET" not in result.stderr
    listing = run_cli("sessions", "list", "--all", "--json", cwd=workspace)
    assert json.loads(listing.stdout)["sessions"] == []


def test_help_cites_no_missing_document_and_lists_exit_statuses(workspace: Path) -> None:
    result = run_cli("--help", cwd=workspace)
    assert result.returncode == 0
    assert "contract.md" not in result.stdout
    assert "4 a permission ask was refused" in " ".join(result.stdout.split())
    run_help = run_cli("run", "--help", cwd=workspace)
    assert "--file PATH" in run_help.stdout
    assert '"-" reads it from stdin' in run_help.stdout


def test_the_no_model_message_names_the_key_variables(workspace: Path) -> None:
    result = run_cli("run", "hi", cwd=workspace)
    assert result.returncode == 2  # invalid config, as the README's exit statuses say
    assert "LSP_AGENT_MODEL" in result.stderr
    assert "ANTHROPIC_API_KEY" in result.stderr
    assert "OPENAI_API_KEY" in result.stderr
