"""What ``lsp-agent run`` prints on stderr for tool calls, refusals and the closing summary."""

from __future__ import annotations

import io
from typing import Any

import attrs

from lsp_agent.core.events import StoredEvent
from lsp_agent.core.permission.rules import PermissionAsk, PermissionRequest
from lsp_agent.core.transcript import SessionInfo, SessionUsage
from lsp_agent.headless import NO_TERMINAL, OUTPUT_TAIL_LINES, TerminalEditor, run_summary

BASH = {
    "toolCallId": "c1",
    "messageId": "m1",
    "toolName": "bash",
    "kind": "execute",
    "title": "Run make",  # every update carries the tool's own title
}


def event(type_: str, data: dict[str, Any], session: str = "s") -> StoredEvent:
    return StoredEvent(session_id=session, seq=1, type=type_, data=data, time="t")  # type: ignore[arg-type]


def editor(**kwargs: Any) -> tuple[TerminalEditor, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    ed = TerminalEditor(stdout=out, stderr=err, **kwargs)
    ed.focus("s")
    return ed, out, err


async def run_bash(ed: TerminalEditor, chunks: list[str], final: str) -> None:
    await ed.publish(
        event("tool_call_updated", {**BASH, "status": "pending", "input": {"command": "make"}})
    )
    await ed.publish(event("tool_call_updated", {**BASH, "status": "in_progress"}))
    seen = ""
    for chunk in chunks:  # streamed output: each update carries the output so far
        seen += chunk
        await ed.publish(
            event("tool_call_updated", {**BASH, "status": "in_progress", "output": seen})
        )
    await ed.publish(event("tool_call_updated", {**BASH, "status": "completed", "output": final}))


async def test_one_tool_line_per_call_however_many_output_chunks() -> None:
    ed, out, err = editor()
    chunks = ["line1\n", "line2\n", "line3\n", "line4\n"]
    await run_bash(ed, chunks, "line1\nline2\nline3\nline4\n\nExit code: 0")
    lines = err.getvalue().splitlines()
    assert [line for line in lines if "make" in line] == ["→ Run make"]
    assert lines[1:] == ["    line1", "    line2", "    line3", "    line4", "", "    Exit code: 0"]
    assert out.getvalue() == ""  # stdout is the answer only


async def test_long_output_shows_only_its_tail() -> None:
    ed, _, err = editor()
    body = "\n".join(f"row {n}" for n in range(1, 101))
    await run_bash(ed, [], f"{body}\n\nExit code: 2")
    lines = err.getvalue().splitlines()
    assert lines[0] == "→ Run make"
    assert lines[1] == f"    … {100 + 2 - OUTPUT_TAIL_LINES} earlier lines"
    assert lines[-1] == "    Exit code: 2"
    assert len(lines) == 2 + OUTPUT_TAIL_LINES
    assert "row 1\n" not in err.getvalue()


async def test_output_is_dimmed_on_a_colour_terminal_only() -> None:
    ed, _, err = editor(color=True)
    await run_bash(ed, [], "hi\n\nExit code: 0")
    assert "\x1b[2m    hi\x1b[0m" in err.getvalue()
    assert err.getvalue().startswith("→ Run make\n")  # the tool line itself is not dimmed


async def test_other_tools_print_no_output() -> None:
    ed, _, err = editor()
    read = {
        "toolCallId": "r",
        "messageId": "m1",
        "toolName": "read",
        "kind": "read",
        "title": "Read a.py",
    }
    await ed.publish(
        event(
            "tool_call_updated", {**read, "status": "in_progress", "input": {"file_path": "a.py"}}
        )
    )
    await ed.publish(
        event("tool_call_updated", {**read, "status": "completed", "output": "secret body"})
    )
    assert err.getvalue() == "→ Read a.py\n"


def edit_ask() -> PermissionAsk:
    request = PermissionRequest(permission="edit", patterns=("a.py",), title="Edit a.py")
    return PermissionAsk(session_id="s", tool_call_id="w", mode="build", request=request)


async def test_a_refused_ask_is_printed_once_and_counted() -> None:
    ed, _, err = editor()
    write = {
        "toolCallId": "w",
        "messageId": "m1",
        "toolName": "write",
        "kind": "edit",
        "title": "Write a.py",
    }
    await ed.publish(
        event(
            "tool_call_updated", {**write, "status": "in_progress", "input": {"file_path": "a.py"}}
        )
    )
    reply = await ed.request_permission(edit_ask())
    assert reply.reason == NO_TERMINAL
    await ed.publish(
        event(
            "permission_resolved",
            {"toolCallId": "w", "permission": "edit", "state": "rejected", "reason": NO_TERMINAL},
        )
    )
    rejection = "The user rejected permission to use this tool call: " + NO_TERMINAL
    await ed.publish(event("tool_call_updated", {**write, "status": "failed", "error": rejection}))
    assert err.getvalue().count("not approved") == 1
    assert err.getvalue().splitlines() == ["→ Write a.py", f"✗ Write a.py: {NO_TERMINAL}"]
    assert ed.refused_asks == 1


async def test_approved_asks_are_not_counted_as_refused() -> None:
    ed, _, _ = editor(approve_asks=True)
    assert (await ed.request_permission(edit_ask())).kind == "allow_once"
    assert ed.refused_asks == 0


def test_the_summary_names_the_session_tokens_and_cost() -> None:
    info = SessionInfo(
        session_id="ses_123",
        title="t",
        workspace_folder="file:///ws",
        created_at="c",
        updated_at="u",
        state="idle",
        model="anthropic/claude-sonnet-4-5",
        mode="build",
        usage=SessionUsage(
            input_tokens=12345, output_tokens=67, cache_read_tokens=1000, cost=0.01234
        ),
    )
    assert run_summary(info) == (
        "session ses_123 · 12,345 in, 67 out (1,000 cache read, 0 cache write) tokens · $0.0123"
    )
    no_price = attrs.evolve(info, usage=SessionUsage(input_tokens=5))
    assert run_summary(no_price) == "session ses_123 · 5 in, 0 out tokens"
