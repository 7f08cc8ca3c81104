"""Finding 6: what the terminal shows cannot be rewritten by model or tool content.

A command holding ``\\r\\x1b[2K  command: ls -la`` used to display as ``ls -la`` in the
approval prompt, and an edit ask's patch was printed raw. Every path the terminal adapter
prints model/tool text through (the permission prompt, questions, tool lines, command
output, the streamed answer, ``sessions show/list/history``) is checked here for raw control
characters, through the code that really prints them.
"""

from __future__ import annotations

import io
import json
import os
import pty
import re
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission.rules import PermissionAsk, PermissionRequest
from lsp_agent.core.permission.subjects import CommandSubject, EditSubject
from lsp_agent.core.question import Question, QuestionAsk, QuestionOption
from lsp_agent.display import block, one_line
from lsp_agent.headless import TerminalEditor
from lsp_agent.testing.cli import run_cli
from lsp_agent.testing.fake_llm import running_fake_llm

SPOOF = "rm -rf ~\r\x1b[2K  command: ls -la"
HARMLESS_SPOOF = "touch pwned\r\x1b[2K  command: ls -la"  # for the one test that could run it
# Anything a terminal would act on rather than print: C0 except newline, DEL, C1 (\x9b is a
# one-byte CSI), bidi overrides and isolates.
RAW_CONTROL = re.compile("[\x00-\x09\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
NASTY = ["\x1b[2K", "\r", "\x9b2J", "\x07", "\x08", "\u202e", "\u2066", "\x00", "\x7f"]


def editor(lines: list[str] | None = None) -> tuple[TerminalEditor, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    feed: Iterator[str] | None = iter(lines) if lines is not None else None
    read_line = (lambda: next(feed, "")) if feed is not None else None
    return TerminalEditor(stdout=out, stderr=err, read_line=read_line), out, err


def command_ask(command: str) -> PermissionAsk:
    request = PermissionRequest(
        permission="bash",
        patterns=(command,),
        title=f"Run {command}",
        description="list \x1b]0;owned\x07 files",
        subject=CommandSubject(command=command, cwd="/ws"),
    )
    return PermissionAsk(session_id="s", tool_call_id="t", mode="build", request=request)


def assert_no_raw_control(text: str) -> None:
    # Tabs are fine in a block, but none of our one-line displays produce them either.
    found = RAW_CONTROL.findall(text)
    assert not found, f"raw control characters {found!r} in {text!r}"


@pytest.mark.parametrize("char", NASTY)
def test_one_line_and_block_leave_no_raw_control_character(char: str) -> None:
    text = f"a{char}b\nc\td"
    assert_no_raw_control(one_line(text))
    assert "\n" not in one_line(text)
    shown = block(text)
    assert_no_raw_control(shown.replace("\t", ""))
    assert shown.endswith("\nc\td")  # newlines and tabs keep the layout of a block


def test_escapes_are_visible_and_say_which_character_it_was() -> None:
    assert one_line("a\r\x1b[2Kb\n") == "a\\r\\x1b[2Kb\\n"
    assert block("\x9b\u202eok\n") == "\\x9b\\u202eok\n"
    assert one_line("plain ascii, é and 日本") == "plain ascii, é and 日本"


async def test_the_approval_prompt_shows_the_whole_spoofed_command() -> None:
    ed, _, err = editor(["n\n"])
    reply = await ed.request_permission(command_ask(SPOOF))
    assert reply.kind == "reject_once"
    shown = err.getvalue()
    assert_no_raw_control(shown)
    # What the user reads is what would run: the rm, then the visible escapes.
    assert "command: rm -rf ~\\r\\x1b[2K  command: ls -la" in shown
    assert "\\x1b]0;owned\\x07" in shown


async def test_an_edit_asks_patch_is_escaped_but_keeps_its_lines() -> None:
    patch = "--- a/a.py\n+++ b/a.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\x1b[1A\x1b[2K\r+x = 1\n"
    request = PermissionRequest(
        permission="edit",
        patterns=("a.py",),
        title="Edit a.py",
        subject=EditSubject(patch=patch),
    )
    ask = PermissionAsk(session_id="s", tool_call_id="t", mode="build", request=request)
    ed, _, err = editor(["n\n"])
    await ed.request_permission(ask)
    shown = err.getvalue()
    assert_no_raw_control(shown)
    assert "+x = 2\\x1b[1A\\x1b[2K\\r+x = 1\n" in shown
    assert "\n-x = 1\n" in shown


async def test_question_texts_are_escaped() -> None:
    question = Question(
        question_id="q1",
        question="Pick one\x1b[2K\rYes is safe",
        header="Hdr\x1b[31m",
        options=(QuestionOption(label="a\rb", description="d\x9bX"),),
    )
    ed, _, err = editor(["1\n"])
    await ed.ask_question(QuestionAsk(session_id="s", tool_call_id="t", questions=(question,)))
    assert_no_raw_control(err.getvalue())
    assert "Pick one\\x1b[2K\\rYes is safe" in err.getvalue()


def event(type_: str, data: dict[str, Any], seq: int = 1) -> StoredEvent:
    return StoredEvent(session_id="s", seq=seq, type=type_, data=data, time="t")  # type: ignore[arg-type]


async def test_tool_lines_output_and_the_answer_are_escaped() -> None:
    ed, out, err = editor()
    ed.focus("s")
    base = {"toolCallId": "c1", "messageId": "m", "toolName": "bash", "kind": "execute"}
    base["title"] = f"Run {SPOOF}"  # the tool's title carries the model's words
    await ed.publish(
        event("tool_call_updated", {**base, "status": "pending", "input": {"command": SPOOF}})
    )
    await ed.publish(event("tool_call_updated", {**base, "status": "in_progress"}))
    output = "ok\n\x1b[2K\rFAKE: all tests passed\x1b]0;t\x07\n\nExit code: 1"
    await ed.publish(event("tool_call_updated", {**base, "status": "completed", "output": output}))
    await ed.publish(
        event("text_delta", {"messageId": "m", "partId": "p", "text": "done\x1b[8m hidden\n"})
    )
    assert_no_raw_control(err.getvalue())
    assert_no_raw_control(out.getvalue())
    assert "→ Run rm -rf ~\\r\\x1b[2K  command: ls -la" in err.getvalue()
    assert "\\x1b[2K\\rFAKE: all tests passed" in err.getvalue()
    assert out.getvalue() == "done\\x1b[8m hidden\n"


async def test_a_failed_calls_reason_is_escaped() -> None:
    ed, _, err = editor()
    ed.focus("s")
    base = {"toolCallId": "c1", "messageId": "m", "toolName": "read", "kind": "read"}
    base["title"] = "Read x\x1b[2K"
    await ed.publish(
        event(
            "tool_call_updated",
            {**base, "status": "in_progress", "input": {"file_path": "x\x1b[2K"}},
        )
    )
    await ed.publish(
        event("tool_call_updated", {**base, "status": "failed", "error": "no\r\x1b[2Kfine"})
    )
    assert_no_raw_control(err.getvalue())
    assert "✗ Read x\\x1b[2K: no\\r\\x1b[2Kfine" in err.getvalue()


def test_sessions_show_list_and_history_escape_model_text(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    answer = "It is fine\x1b[2K\r\x9b2J\u202e"
    with running_fake_llm([{"text": answer}]) as server:
        env = {"ANTHROPIC_BASE_URL": server.anthropic_base_url, "ANTHROPIC_API_KEY": "k" * 12}
        run = run_cli("run", "--model", "anthropic/claude-test", "hi", cwd=workspace, env=env)
    assert run.returncode == 0, run.stderr
    assert_no_raw_control(run.stdout)
    listing = run_cli("sessions", "list", "--json", cwd=workspace)
    (session,) = json.loads(listing.stdout)["sessions"]
    for args in (("show",), ("list",), ("history",)):
        ids = () if args == ("list",) else (session["sessionId"],)
        shown = run_cli("sessions", *args, *ids, cwd=workspace)
        assert shown.returncode == 0, shown.stderr
        assert_no_raw_control(shown.stdout)
    show = run_cli("sessions", "show", session["sessionId"], cwd=workspace)
    assert "It is fine\\x1b[2K\\r\\x9b2J\\u202e" in show.stdout


def read_until(fd: int, marker: bytes, timeout: float = 120.0) -> bytes:
    """What the pty shows until ``marker`` appears (a hang becomes a failure)."""
    seen = b""
    deadline = time.monotonic() + timeout
    while marker not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"timed out waiting for {marker!r}; saw {seen!r}"
        ready, _, _ = select.select([fd], [], [], left)
        if ready:
            try:
                chunk = os.read(fd, 4096)
            except OSError:  # the other side closed
                break
            if not chunk:
                break
            seen += chunk
    return seen


def test_on_a_real_terminal_the_prompt_shows_the_spoofed_command_escaped(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    script = [
        {"tool_calls": [{"name": "bash", "input": {"command": HARMLESS_SPOOF}}]},
        {"text": "ok"},
    ]
    with running_fake_llm(script) as server:
        env = {
            **os.environ,
            "ANTHROPIC_BASE_URL": server.anthropic_base_url,
            "ANTHROPIC_API_KEY": "k" * 12,
        }
        leader, follower = pty.openpty()
        try:
            proc = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "lsp_agent",
                    "run",
                    "--model",
                    "anthropic/claude-test",
                    "go",
                ],
                cwd=workspace,
                env=env,
                stdin=follower,
                stdout=subprocess.DEVNULL,
                stderr=follower,
            )
            os.close(follower)
            try:
                shown = read_until(leader, b"[r]eason to deny: ")
                os.write(leader, b"n\n")
                shown += read_until(leader, b"session ses_")
                assert proc.wait(timeout=120) == 4
            finally:
                proc.kill()
                proc.wait()
        finally:
            os.close(leader)
    # The pty turns each "\n" into "\r\n" (and echoes the typed "n"): undo that first.
    text = shown.decode("utf-8").replace("\r\n", "\n")
    assert "\r" not in text
    assert "\x1b" not in text
    assert "command: touch pwned\\r\\x1b[2K  command: ls -la" in text
    assert not (workspace / "pwned").exists()  # refused: nothing ran
