"""Undo and continue from the terminal: ``run --continue``, ``sessions revert ID --last``, the
files a run changed on stderr, tool output in ``sessions show``, and a reader that goes away
(``| head``) ending any command quietly."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from pathlib import Path

from lsp_agent.testing.cli import DEFAULT_TIMEOUT, run_cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-cli-continue-SECRET-7"
MODEL = ("--model", "anthropic/claude-test")
SESSION = re.compile(r"^session (ses_\w+) · ", re.MULTILINE)


def run(workspace: Path, server: FakeLLMServer, *args: str) -> subprocess.CompletedProcess[str]:
    return run_cli("run", *MODEL, *args, cwd=workspace, env=provider_env(server, KEY))


def session_of(result: subprocess.CompletedProcess[str]) -> str:
    match = SESSION.search(result.stderr)
    assert match is not None, result.stderr
    return match[1]


def write(path: str, content: str) -> dict[str, object]:
    return {"tool_calls": [{"name": "write", "input": {"file_path": path, "content": content}}]}


def test_continue_goes_on_with_the_latest_session_of_this_folder(
    workspace: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    script = [{"text": "first answer"}, {"text": "elsewhere"}, {"text": "second answer"}]
    with running_fake_llm(script) as server:
        first = run(workspace, server, "remember the word tangerine")
        assert first.returncode == 0, first.stderr
        elsewhere = run(other, server, "a session in another folder, updated later")
        assert elsewhere.returncode == 0, elsewhere.stderr
        again = run(workspace, server, "--continue", "what was the word?")
        assert again.returncode == 0, again.stderr
        sent = json.dumps(server.model_bodies()[2]["messages"])
    assert session_of(again) == session_of(first)
    assert "remember the word tangerine" in sent
    assert "first answer" in sent
    assert "another folder" not in sent
    listing = run_cli("sessions", "list", "--json", cwd=workspace)
    assert len(json.loads(listing.stdout)["sessions"]) == 1


def test_continue_without_a_session_here_is_bad_usage(workspace: Path) -> None:
    with running_fake_llm([{"text": "never"}]) as server:
        result = run(workspace, server, "--continue", "go on")
        assert server.model_bodies() == []
    assert result.returncode == 2
    assert f"no session to continue in {workspace}" in result.stderr


def test_continue_and_session_together_are_bad_usage(workspace: Path) -> None:
    result = run_cli("run", "--continue", "--session", "ses_x", "hi", cwd=workspace)
    assert result.returncode == 2
    assert "not allowed with argument" in result.stderr


def test_revert_last_takes_the_files_back_to_before_the_last_prompt(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\n")
    script = [
        write("a.py", "x = 2\n"),
        {"text": "two"},
        write("a.py", "x = 3\n"),
        {"text": "three"},
    ]
    with running_fake_llm(script) as server:
        first = run(workspace, server, "--yes", "make it two")
        second = run(workspace, server, "--yes", "--continue", "now make it three")
    assert second.returncode == 0, second.stderr
    session = session_of(first)
    assert (workspace / "a.py").read_text() == "x = 3\n"

    staged = run_cli("sessions", "revert", session, "--last", cwd=workspace)

    assert staged.returncode == 0, staged.stderr
    assert (workspace / "a.py").read_text() == "x = 2\n"
    assert re.search(
        r"^reverting to before the last prompt, msg_\w+: now make it three$",
        staged.stdout,
        re.MULTILINE,
    ), staged.stdout
    assert "restored: a.py" in staged.stdout
    shown = run_cli("sessions", "show", session, cwd=workspace).stdout
    assert "make it two" in shown
    assert "now make it three" not in shown


def test_revert_last_of_a_session_without_a_prompt_fails(workspace: Path) -> None:
    with running_fake_llm([{"text": "hello"}]) as server:
        session = session_of(run(workspace, server, "hi"))
    cleared = run_cli("sessions", "revert", session, "--last", cwd=workspace)
    assert cleared.returncode == 0, cleared.stderr
    again = run_cli("sessions", "revert", session, "--last", cwd=workspace)
    assert again.returncode == 1
    assert f"nothing to revert: session {session} has no prompt" in again.stderr


def test_a_run_that_changed_files_lists_them_with_their_lines(workspace: Path) -> None:
    (workspace / "a.py").write_text("x = 1\ny = 2\n")
    (workspace / "gone.txt").write_text("one\ntwo\n")
    script = [
        {
            "tool_calls": [
                {
                    "name": "edit",
                    "input": {"file_path": "a.py", "old_string": "x = 1", "new_string": "x = 10"},
                },
                {"name": "write", "input": {"file_path": "new.txt", "content": "a\nb\nc\n"}},
                {"name": "bash", "input": {"command": "rm gone.txt"}},
            ]
        },
        {"text": "Done."},
    ]
    with running_fake_llm(script) as server:
        result = run(workspace, server, "--yes", "change things")
    assert result.returncode == 0, result.stderr
    lines = result.stderr.splitlines()
    start = lines.index("3 files changed (+4 -3):")
    assert lines[start + 1 : start + 4] == [
        "  a.py      +1 -1",
        "  gone.txt  +0 -2 (deleted)",
        "  new.txt   +3 -0 (new)",
    ]
    assert lines[-1].startswith("session ")


def test_a_run_that_changed_nothing_lists_no_files(workspace: Path) -> None:
    with running_fake_llm([{"text": "Just talking."}]) as server:
        result = run(workspace, server, "--yes", "hello")
    assert result.returncode == 0, result.stderr
    assert "changed" not in result.stderr


def test_show_prints_the_last_lines_of_a_tool_s_output(workspace: Path) -> None:
    command = "for i in $(seq 1 15); do echo out$i; done"
    script = [{"tool_calls": [{"name": "bash", "input": {"command": command}}]}, {"text": "ok"}]
    with running_fake_llm(script) as server:
        session = session_of(run(workspace, server, "--yes", "count"))

    shown = run_cli("sessions", "show", session, cwd=workspace)

    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("[bash completed]"))
    under = lines[call + 1 : lines.index("", call)] + lines[lines.index("", call) + 1 :]
    output = under[: next(i for i, line in enumerate(under) if line.startswith("## "))]
    assert re.fullmatch(
        rf"    … \d+ earlier lines \(all of it: lsp-agent sessions export {session}\)",
        output[0],
    ), output
    assert len(output) == 1 + 10  # the count, then the last ten lines
    assert "    out15" in output
    assert "    Exit code: 0" in output
    assert "    out1" not in output


def test_show_prints_a_tool_s_error(workspace: Path) -> None:
    script = [
        {"tool_calls": [{"name": "read", "input": {"file_path": "missing.py"}}]},
        {"text": "no such file"},
    ]
    with running_fake_llm(script) as server:
        session = session_of(run(workspace, server, "--yes", "read it"))
    lines = run_cli("sessions", "show", session, cwd=workspace).stdout.splitlines()
    call = next(i for i, line in enumerate(lines) if line.startswith("[read "))
    assert lines[call + 1] == "    error:"
    assert "missing.py" in lines[call + 2]


def closed_reader(*args: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    """Run the CLI with stdout a pipe whose reader has already gone: every write fails."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        return subprocess.run(
            [sys.executable, "-m", "lsp_agent", *args],
            cwd=cwd,
            env={**os.environ, **env},
            stdin=subprocess.DEVNULL,
            stdout=write_end,
            stderr=subprocess.PIPE,
            text=True,
            timeout=DEFAULT_TIMEOUT,
            check=False,
        )
    finally:
        os.close(write_end)


def test_a_closed_reader_ends_every_command_quietly(workspace: Path) -> None:
    with running_fake_llm([{"text": "an answer"}]) as server:
        session = session_of(run(workspace, server, "hello"))
    for args in (
        ("sessions", "list"),
        ("sessions", "show", session),
        ("sessions", "history", session),
        ("sessions", "export", session),
    ):
        result = closed_reader(*args, cwd=workspace, env={})
        assert result.returncode == 141, (args, result.stderr)
        assert result.stderr == "", (args, result.stderr)
    for args in (("--help",), ("sessions", "revert", "--help")):  # argparse drops the write
        result = closed_reader(*args, cwd=workspace, env={})
        assert (result.returncode, result.stderr) == (0, ""), args


def test_a_closed_reader_stops_a_run_and_its_session_ends_cleanly(workspace: Path) -> None:
    answer = "".join(f"line {i}\n" for i in range(200))
    with running_fake_llm([{"text": answer}]) as server:
        result = closed_reader("run", *MODEL, "talk", cwd=workspace, env=provider_env(server, KEY))
    assert result.returncode == 141, result.stderr
    assert "Traceback" not in result.stderr
    assert "Error" not in result.stderr
    session = session_of(result)
    history = json.loads(run_cli("sessions", "history", session, "--json", cwd=workspace).stdout)
    last = history["events"][-1]
    assert last["type"] == "state_changed"
    assert last["data"] == {"state": "idle", "stopReason": "cancelled"}
