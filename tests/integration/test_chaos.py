"""Chaos: `lsp-agent run` killed with SIGKILL at random moments, then the next processes to open
the database recover what it left (issue "Nothing lost", acceptance).

Each iteration runs a scripted session (a write, an edit, then `bash` that starts a `sleep 5`
in the background and writes the pids to a file) with `--yes`, kills it with SIGKILL at a
moment drawn from a seeded random generator (right away, during the stream, during the edits
or while the command runs), then opens the database with `sessions list` or `sessions show`
and checks: the database passes `PRAGMA integrity_check`; every admitted user message is still
there (in the conversation or in the inbox); no tool call is left pending/in_progress; the
session is idle; no process of the killed run survives (checked by pid, and by scanning for
any process still working in the iteration's folder); and `run --session ID "go on"` then
promotes and answers everything that was pending. All iterations share one database.
"""

from __future__ import annotations

import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from lsp_agent.storage.recovery import group_members
from lsp_agent.testing.cli import run_cli as cli
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

ITERATIONS = 30
WORKERS = 3
SEED = 20250301
KEY = "sk-chaos-test-key"
MODEL = "anthropic/claude-test"
COMMAND = "sleep 5 & echo $$ $! > pids.txt; wait"
MOMENTS = ("start", "stream", "edit", "command")


def killed_script() -> list[dict[str, Any]]:
    return [
        {
            "text": [f"step{i} " for i in range(6)],
            "chunk_delay": 0.04,
            "tool_calls": [
                {"name": "write", "input": {"file_path": "notes.txt", "content": "hello\n"}},
                {
                    "name": "edit",
                    "input": {
                        "file_path": "notes.txt",
                        "old_string": "hello",
                        "new_string": "bye",
                    },
                },
                {"name": "bash", "input": {"command": COMMAND}},
            ],
        },
        {"text": "all done"},
    ]


def running(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            data = f.read()
    except OSError:
        return False
    return data[data.rfind(b")") + 2 :].split()[0] not in (b"Z", b"X")


def processes_in(folder: Path) -> list[int]:
    """Live processes whose working directory is ``folder``."""
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                cwd = os.readlink(f"/proc/{name}/cwd")
            except OSError:
                continue
            if cwd == str(folder) and running(int(name)):
                found.append(int(name))
    return found


def read_pids(folder: Path) -> list[int]:
    try:
        text = (folder / "pids.txt").read_text()
    except FileNotFoundError:
        return []
    return [int(p) for p in text.split()]


def kill_at(
    proc: subprocess.Popen[bytes], ws: Path, out: Path, err: Path, moment: str, rng: random.Random
) -> None:
    """Wait for ``moment`` (or for the run to get past it), then a random short delay, then
    SIGKILL."""
    deadline = time.monotonic() + 20
    markers = {"edit": "→ Edit", "command": "→ Run "}  # the tools' own titles

    def reached() -> bool:
        if moment == "start":
            return True
        if moment == "command":
            return bool(read_pids(ws))
        if moment == "stream":
            return out.exists() and out.stat().st_size > 0
        return markers[moment] in err.read_text() if err.exists() else False

    while not reached() and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.005)
    delay = rng.uniform(0.0, {"start": 1.5, "stream": 0.4, "edit": 0.15, "command": 0.5}[moment])
    time.sleep(delay)
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def db_rows(db: Path, sql: str, *params: Any) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        return list(conn.execute(sql, params).fetchall())
    finally:
        conn.close()


def session_of(db: Path, ws: Path) -> str | None:
    """The folder's session; None also when every run so far was killed before the database
    had its tables (the next process to open it creates them)."""
    if not db_rows(db, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'sessions'"):
        return None
    rows = db_rows(db, "SELECT session_id FROM sessions WHERE workspace_folder = ?", ws.as_uri())
    return str(rows[0][0]) if rows else None


def events_of(db: Path, session_id: str) -> list[tuple[str, dict[str, Any]]]:
    rows = db_rows(
        db, "SELECT type, data FROM events WHERE session_id = ? ORDER BY seq", session_id
    )
    return [(str(kind), json.loads(data)) for kind, data in rows]


def check_recovered(
    db: Path, ws: Path, session_id: str, shown: dict[str, Any], prompt: str
) -> dict[str, Any]:
    """The invariants after recovery; returns facts about what the kill interrupted."""
    events = events_of(db, session_id)
    admitted = {d["messageId"]: d for kind, d in events if kind == "user_message_admitted"}
    promoted = {d["messageId"] for kind, d in events if kind == "user_message_promoted"}
    pending = {
        row[0]
        for row in db_rows(
            db,
            "SELECT message_id FROM inbox WHERE session_id = ? AND promoted_seq IS NULL",
            session_id,
        )
    }
    # Every admitted message is still there: in the conversation or waiting in the inbox.
    in_conversation = {m["messageId"] for m in shown["messages"] if m["role"] == "user"}
    assert in_conversation & set(admitted) == promoted  # (context notes are user messages too)
    assert set(admitted) == promoted | pending
    assert not promoted & pending
    for data in admitted.values():
        assert data["content"] == [{"type": "text", "text": prompt}]
    assert shown["session"]["state"] == "idle"
    statuses = [
        part["status"]
        for message in shown["messages"]
        for part in message["parts"]
        if part["type"] == "tool_call"
    ]
    assert not {"pending", "in_progress"} & set(statuses), statuses
    assert not any(m["status"] == "streaming" for m in shown["messages"])
    started = [d for kind, d in events if kind == "process_started"]
    ended = {(d["toolCallId"], d["pgid"]) for kind, d in events if kind == "process_ended"}
    assert {(d["toolCallId"], d["pgid"]) for d in started} <= ended
    for group in started:
        assert group_members(group["pgid"], group["startTicks"]) == {}
    recovered = any(
        kind == "state_changed" and (d.get("error") or {}).get("message", "").startswith("interr")
        for kind, d in events
    )
    return {
        "pending_input": bool(pending),
        "command_started": bool(started),
        "recovered": recovered,
        "tools": len(statuses),
    }


def test_runs_killed_at_random_moments_lose_nothing_and_leave_no_orphans(tmp_path: Path) -> None:
    # The pids the command writes must be this machine's, not a sandbox's own PID namespace's
    # (tests/security/test_escaped_processes.py kills sandboxed runs mid-command).
    user_file = Path(os.environ["XDG_CONFIG_HOME"]) / "lsp-agent" / "config.json"
    user_file.parent.mkdir(parents=True, exist_ok=True)
    user_file.write_text('{"sandbox": "off"}')
    data_dir = Path(os.environ["LSP_AGENT_DATA_DIR"])
    db = data_dir / "lsp-agent.db"
    started = time.monotonic()

    def worker(index: int) -> Counter[str]:
        tally: Counter[str] = Counter()
        with running_fake_llm(killed_script()) as server:
            env = {
                **os.environ,
                "ANTHROPIC_BASE_URL": server.anthropic_base_url,
                "ANTHROPIC_API_KEY": KEY,
            }
            for n in range(index, ITERATIONS, WORKERS):
                rng = random.Random(SEED * 100 + n)
                ws = (tmp_path / f"ws{n:02d}").resolve()
                ws.mkdir()
                moment = rng.choice(MOMENTS)
                tally[f"moment:{moment}"] += 1
                prompt = f"iteration {n}: write notes and run the command"
                tally.update(_iteration(server, env, db, ws, n, moment, prompt, rng))
        return tally

    # Iterations run a few at a time on the one database: while one run is killed and
    # recovered, the others are live owners that recovery must leave alone.
    with ThreadPoolExecutor(WORKERS) as pool:
        tally = sum(pool.map(worker, range(WORKERS)), Counter[str]())
    elapsed = time.monotonic() - started
    print(f"{elapsed:.1f}s", sorted(tally.items()))
    # The random moments did hit what matters (each iteration's generator is seeded).
    assert tally["command_started"] >= 5, tally
    assert tally["recovered"] >= 10, tally


def _iteration(
    server: FakeLLMServer,
    env: dict[str, str],
    db: Path,
    ws: Path,
    n: int,
    moment: str,
    prompt: str,
    rng: random.Random,
) -> Counter[str]:
    """One run killed, recovered, checked and resumed; what happened, for the tally."""
    tally: Counter[str] = Counter()
    server.set_script(killed_script())
    out, err = ws.parent / f"ws{n:02d}.stdout", ws.parent / f"ws{n:02d}.stderr"
    with out.open("wb") as out_file, err.open("wb") as err_file:
        proc = subprocess.Popen(
            [sys.executable, "-m", "lsp_agent", "run", "--yes", "--model", MODEL, prompt],
            cwd=ws,
            env=env,
            stdout=out_file,
            stderr=err_file,
        )
        try:
            kill_at(proc, ws, out, err, moment, rng)
        finally:
            proc.kill()
            proc.wait()
    pids = read_pids(ws)

    # The next process to open the database recovers (sessions list, or show).
    session_id = session_of(db, ws) if db.exists() else None
    if n % 2 == 0 or session_id is None:
        listed = cli("sessions", "list", "--json", cwd=ws, env=env)
        assert listed.returncode == 0, listed.stderr
        assert "Traceback" not in listed.stderr
        session_id = session_of(db, ws)
    if session_id is None:
        tally["killed_before_the_session"] += 1
        assert not pids
        assert processes_in(ws) == []
        return tally
    result = cli("sessions", "show", session_id, "--json", cwd=ws, env=env)
    assert result.returncode == 0, result.stderr
    assert db_rows(db, "PRAGMA integrity_check") == [("ok",)]
    facts = check_recovered(db, ws, session_id, json.loads(result.stdout), prompt)
    tally.update(k for k, v in facts.items() if v is True)
    assert not any(running(pid) for pid in pids), (n, moment, pids)
    assert processes_in(ws) == [], (n, moment)

    # Resuming completes what was pending.
    server.set_script([{"text": f"resumed {n}"}])
    again = cli("run", "--yes", "--model", MODEL, "--session", session_id, "go on", cwd=ws, env=env)
    assert again.returncode == 0, (n, moment, again.stderr)
    assert f"resumed {n}" in again.stdout
    pending = db_rows(
        db, "SELECT 1 FROM inbox WHERE session_id = ? AND promoted_seq IS NULL", session_id
    )
    assert pending == []
    body = [r.body for r in server.requests if r.turn != "side"][-1]
    assert body is not None
    sent = json.dumps(body["messages"])
    assert "go on" in sent
    if facts["pending_input"]:
        assert prompt in sent  # the prompt admitted before the kill was promoted and answered
    states = [d for kind, d in events_of(db, session_id) if kind == "state_changed"]
    assert states[-1] == {"state": "idle", "stopReason": "end_turn"}
    return tally
