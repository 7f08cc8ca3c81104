"""Dropped streams, SIGINT, the event history, exports, and rebuilt projections."""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from lsp_agent.core.events import NewEvent
from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import running_fake_llm
from tests.support.provider_env import provider_env

KEY = "sk-history-test-key"
PROJECTIONS = ("sessions", "messages", "parts", "tool_calls", "inbox")


MODELS = {"anthropic": "anthropic/claude-test", "openai": "openai/gpt-test"}


def only_session(cwd: Path) -> str:
    listing = json.loads(cli("sessions", "list", "--json", cwd=cwd).stdout)
    (session,) = listing["sessions"]
    return str(session["sessionId"])


def show(cwd: Path, session_id: str) -> dict[str, Any]:
    result = cli("sessions", "show", session_id, "--json", cwd=cwd)
    assert result.returncode == 0, result.stderr
    return dict(json.loads(result.stdout))


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_stream_dropped_mid_text_is_retried_once(tmp_path: Path, provider: str) -> None:
    script = [
        {"text": "this answer will be cut off here", "drop_after": 4},
        {"text": "the complete answer"},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            MODELS[provider],
            "hi",
            cwd=tmp_path,
            env=provider_env(server, KEY, provider),
        )
        assert result.returncode == 0, result.stderr
        bodies = [r.body for r in server.requests if r.turn != "side"]
    assert len(bodies) == 2
    assert bodies[0] == bodies[1]
    assert result.stdout.endswith("the complete answer\n")
    messages = show(tmp_path, only_session(tmp_path))["messages"]
    assert [(m["role"], m["status"]) for m in messages] == [
        ("user", "completed"),
        ("assistant", "interrupted"),
        ("assistant", "completed"),
    ]
    assert messages[1]["parts"][0]["text"].startswith("this")


def test_a_stream_dropped_twice_fails_with_a_clear_message(tmp_path: Path) -> None:
    script = [{"text": "cut off again and again", "drop_after": 3}] * 2
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            MODELS["anthropic"],
            "hi",
            cwd=tmp_path,
            env=provider_env(server, KEY),
        )
    assert result.returncode == 1
    assert "broke off twice" in result.stderr
    assert len(result.stderr.strip().splitlines()) <= 3


def test_sigint_during_a_slow_stream_ends_consistently_and_resumes(tmp_path: Path) -> None:
    words = [f"word{i} " for i in range(60)]
    # the stream holds after a few words until released: the interrupt never races its end
    script = [{"text": words, "hold_after": 8}, {"text": "continued"}]
    with running_fake_llm(script) as server:
        env = {**os.environ, **provider_env(server, KEY)}
        proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lsp_agent",
                "run",
                "--model",
                MODELS["anthropic"],
                "tell a story",
            ],
            cwd=tmp_path,
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert proc.stdout is not None
        seen = ""
        while "word2" not in seen:
            chunk = proc.stdout.read(6)
            assert chunk, "the stream ended before any text arrived"
            seen += chunk
        proc.send_signal(signal.SIGINT)
        try:
            _out, err = proc.communicate(timeout=60)
        finally:
            proc.kill()
        assert proc.returncode == 130, err
        server.release()  # the held stream's client is gone: let its handler finish
        session_id = only_session(tmp_path)
        data = show(tmp_path, session_id)
        assert data["session"]["state"] == "idle"
        last = data["messages"][-1]
        assert last["role"] == "assistant"
        assert last["status"] == "interrupted"
        partial = last["parts"][0]["text"]
        assert partial.startswith("word0 word1 word2")
        assert "word59" not in partial
        again = cli(
            "run",
            "--session",
            session_id,
            "--model",
            MODELS["anthropic"],
            "go on",
            cwd=tmp_path,
            env=provider_env(server, KEY),
        )
        assert again.returncode == 0, again.stderr
        assert "continued" in again.stdout
        last_body = [r.body for r in server.requests if r.turn != "side"][-1]
        assert "word0" not in json.dumps(last_body)  # interrupted text is never sent back
    history = json.loads(cli("sessions", "history", session_id, "--json", cwd=tmp_path).stdout)
    types = [e["type"] for e in history["events"]]
    assert types.count("user_message_admitted") == 2


def run_with_a_tool(tmp_path: Path) -> str:
    (tmp_path / "a.py").write_text("print('hi')\n")
    script = [
        {
            "thinking": "look first",
            "tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}],
        },
        {"text": "It prints ```hi``` — see:\n\n```python\nprint('hi')\n```"},
    ]
    with running_fake_llm(script) as server:
        result = cli(
            "run",
            "--model",
            MODELS["anthropic"],
            "what is a.py",
            cwd=tmp_path,
            env=provider_env(server, KEY),
        )
        assert result.returncode == 0, result.stderr
    return only_session(tmp_path)


def test_history_is_the_whole_event_log_in_seq_order(tmp_path: Path) -> None:
    session_id = run_with_a_tool(tmp_path)
    result = cli("sessions", "history", session_id, "--json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    events = json.loads(result.stdout)["events"]
    assert [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert all(set(e) == {"seq", "type", "time", "data"} for e in events)
    assert events[0]["type"] == "session_created"
    human = cli("sessions", "history", session_id, cwd=tmp_path)
    assert len(human.stdout.splitlines()) == len(events)
    assert cli("sessions", "history", "ses_missing", cwd=tmp_path).returncode == 2


def projection_rows(db: Path) -> dict[str, list[tuple[Any, ...]]]:
    with sqlite3.connect(db) as conn:
        return {
            t: sorted(conn.execute(f"SELECT * FROM {t}").fetchall(), key=repr) for t in PROJECTIONS
        }


async def test_projections_rebuilt_from_events_are_identical(tmp_path: Path) -> None:
    run_with_a_tool(tmp_path)
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    db = data_dir / "lsp-agent.db"
    before = projection_rows(db)
    assert all(before[t] for t in PROJECTIONS if t != "inbox")
    with sqlite3.connect(db) as conn:
        for table in PROJECTIONS:
            conn.execute(f"DELETE FROM {table}")
    assert not any(projection_rows(db).values())
    store = await open_store(data_dir)
    try:
        await store.rebuild_projections()
    finally:
        await store.close()
    assert projection_rows(db) == before


async def test_json_export_round_trips_through_a_fresh_store(tmp_path: Path) -> None:
    session_id = run_with_a_tool(tmp_path)
    exported = json.loads(
        cli("sessions", "export", session_id, "--format", "json", cwd=tmp_path).stdout
    )
    assert exported["kind"] == "lsp-agent.session"
    shown = show(tmp_path, session_id)
    assert exported["session"] == shown["session"]
    assert exported["messages"] == shown["messages"]
    store = await open_store(tmp_path / "elsewhere")
    try:
        events = [
            NewEvent(type=e["type"], data=e["data"], time=e["time"], version=e["version"])
            for e in exported["events"]
        ]
        await store.append(session_id, events)
        rebuilt = [m.to_json() for m in await store.transcript(session_id)]
        info = await store.session(session_id)
    finally:
        await store.close()
    assert rebuilt == shown["messages"]
    assert info is not None
    assert info.to_json() == shown["session"]


def parse_markdown(text: str) -> list[tuple[str, str, list[str]]]:
    """(role, status, texts and tool names) per message: enough to compare conversations."""
    messages: list[tuple[str, str, list[str]]] = []
    fence: str | None = None
    for line in text.splitlines():
        if fence is not None:
            if line == fence:
                fence = None
            continue
        opened = re.match(r"^(`{3,})\w*$", line)
        if opened:
            fence = opened.group(1)
            continue
        heading = re.match(r"^## (User|Assistant)(?: \((\w+)\))?$", line)
        if heading:
            messages.append((heading.group(1).lower(), heading.group(2) or "completed", []))
        elif messages and (tool := re.match(r"^### Tool: (\w+) \((\w+)\)$", line)):
            messages[-1][2].append(f"tool:{tool.group(1)}:{tool.group(2)}")
        elif (
            messages
            and line
            and not line.startswith(">")
            and line not in ("Input:", "Output:", "Error:")
        ):
            messages[-1][2].append(line)
    return messages


def test_markdown_export_round_trips_the_conversation(tmp_path: Path) -> None:
    session_id = run_with_a_tool(tmp_path)
    markdown = cli("sessions", "export", session_id, "--format", "markdown", cwd=tmp_path).stdout
    expected = []
    for message in show(tmp_path, session_id)["messages"]:
        items: list[str] = []
        for part in message["parts"]:
            if part["type"] == "tool_call":
                items.append(f"tool:{part['toolName']}:{part['status']}")
            elif part["type"] == "text":
                # fenced code inside the text is skipped by the parser, like tool payloads
                items += [ln for ln in parse_markdown(f"## User\n{part['text']}")[0][2]]
        expected.append((message["role"], message["status"], items))
    assert parse_markdown(markdown) == expected
    assert "It prints ```hi```" in markdown
    assert "> look first" in markdown
