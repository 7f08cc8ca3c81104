"""Load: one ``lsp-agent serve`` running many sessions at once, each a turn of many steps.

The real language server (a subprocess) runs under pytest-lsp's client, against the fake LLM
(a thread of this process) in ``by_history`` mode, so every session walks the same script
whatever the interleaving: steps 1…N-1 answer a unique token ``tNN `` and call ``read`` on a
small file (a cheap tool), step N answers ``done``. All sessions are prompted at once.

Measured, per step of every session: the update latency, from the fake's write of the step's
text delta (``record_delta_times``) to the client's receipt of the ``agent_message_chunk``
carrying its token, with the server busy with every other session (HTTP read, stream
parsing, delta batching, the event-log commit, the JSON-RPC notification). Reported as p50 /
p90 / p99 / max in ms, with the wall time of the whole run. The numbers are reported, never
asserted: ``tests/reliability/test_load.py`` checks the correctness of the same run
(every turn completes; each session's updates are gap-free in ``seq`` order; a full replay
through ``agent/session/load`` equals the live stream).

    python bench/load.py [--sessions 20] [--steps 20] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import attrs

from lsp_agent.testing.fake_llm import RequestRecord, running_fake_llm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.lsp_client import AgentClient, agent_client

MODEL = "anthropic/claude-load"
TOKEN = re.compile(r"t(\d{2}) ")
MARKER = re.compile(r"load-session-(\d+)")


class StampedUpdates(list[dict[str, Any]]):
    """``AgentClient.updates`` that also records when each update arrived."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: dict[str, Any]) -> None:
        self.times.append(time.monotonic())
        super().append(item)


@attrs.frozen(kw_only=True)
class SessionRun:
    """What one session did: its live updates, its replay, how its turn ended."""

    session_id: str
    live: list[dict[str, Any]]
    replayed: list[dict[str, Any]]
    stop_reason: str | None
    last_seq: int


@attrs.frozen(kw_only=True)
class LoadRun:
    sessions: list[SessionRun]
    latencies_ms: list[float]
    missing: int
    wall_seconds: float
    model_requests: int


def script(steps: int, path: Path) -> dict[str, Any]:
    read = {"name": "read", "input": {"file_path": str(path)}}
    turns: list[dict[str, Any]] = [
        {"text": [f"t{step:02d} "], "tool_calls": [read]} for step in range(steps - 1)
    ]
    turns.append({"text": "done"})
    return {"turns": turns, "by_history": True}


def server_env(root: Path, base_url: str) -> dict[str, str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if key in ("PATH", "LANG", "LC_ALL", "PYTHONPATH", "SYSTEMROOT", "TMPDIR")
    }
    env.update(
        HOME=str(root / "home"),
        XDG_CONFIG_HOME=str(root / "home" / ".config"),
        LSP_AGENT_DATA_DIR=str(root / "data"),
        ANTHROPIC_BASE_URL=base_url,
        ANTHROPIC_API_KEY="load-key",
        LSP_AGENT_MODEL=MODEL,
        LSP_AGENT_LOG="WARNING",
    )
    return env


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def _session_of(record: RequestRecord) -> int | None:
    match = MARKER.search(json.dumps(record.body.get("messages", [])[:1]))
    return int(match.group(1)) if match else None


def latencies(
    updates: StampedUpdates, ids: list[str], records: list[RequestRecord], steps: int
) -> tuple[list[float], int]:
    """Per step: receipt of the chunk with its token − the fake's write of the delta."""
    received: dict[tuple[str, int], float] = {}
    for update, at in zip(updates, updates.times, strict=True):
        body = update["update"]
        if body.get("sessionUpdate") != "agent_message_chunk":
            continue
        for match in TOKEN.finditer(body.get("text", "")):
            received.setdefault((update["sessionId"], int(match.group(1))), at)
    found: list[float] = []
    missing = 0
    for record in records:
        index = _session_of(record)
        if index is None or record.turn == "side" or not record.delta_times:
            continue
        step = record.turn
        if not isinstance(step, int) or step >= steps - 1:
            continue  # the final answer carries no token
        key = (ids[index], step)
        if key not in received:
            missing += 1
            continue
        found.append((received[key] - record.delta_times[0]) * 1000)
    return found, missing


async def _turn(client: AgentClient, session: str, index: int, timeout: float) -> str | None:
    await client.prompt(session, f"load-session-{index}: read a.txt until done")
    idle = await client.wait_idle(session, timeout)
    reason = idle.get("stopReason")
    return str(reason) if reason is not None else None


async def run(sessions: int, steps: int, timeout: float) -> LoadRun:
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp).resolve()
        workspace = root / "ws"
        workspace.mkdir()
        (workspace / "a.txt").write_text("a small file\n")
        return await _run_in(root, workspace, sessions, steps, timeout)


async def _run_in(
    root: Path, workspace: Path, sessions: int, steps: int, timeout: float
) -> LoadRun:
    with running_fake_llm(script(steps, workspace / "a.txt"), record_delta_times=True) as fake:
        (root / "home" / ".config" / "lsp-agent").mkdir(parents=True)
        # No titles: every model request is a step of a session.
        (root / "home" / ".config" / "lsp-agent" / "config.json").write_text(
            json.dumps({"title": {"enabled": False}, "max_steps": steps + 1})
        )
        env = server_env(root, fake.anthropic_base_url)
        async with agent_client(env=env, folders=[workspace]) as client:
            updates = StampedUpdates()
            client.updates = updates
            ids = [await client.new_session() for _ in range(sessions)]
            started = time.monotonic()
            reasons = await asyncio.gather(
                *(_turn(client, sid, i, timeout) for i, sid in enumerate(ids))
            )
            wall = time.monotonic() - started
            live = {sid: list(client.session_updates(sid)) for sid in ids}
            runs = []
            for sid, reason in zip(ids, reasons, strict=True):
                before = len(client.updates)
                loaded = await client.request(
                    "agent/session/load", {"sessionId": sid, "replay": "full"}, timeout
                )
                replayed = [u for u in client.updates[before:] if u["sessionId"] == sid]
                runs.append(
                    SessionRun(
                        session_id=sid,
                        live=live[sid],
                        replayed=replayed,
                        stop_reason=reason,
                        last_seq=int(loaded["lastSeq"]),
                    )
                )
            found, missing = latencies(updates, ids, fake.requests, steps)
    return LoadRun(
        sessions=runs,
        latencies_ms=found,
        missing=missing,
        wall_seconds=wall,
        model_requests=len(fake.requests),
    )


def figures(result: LoadRun, sessions: int, steps: int) -> dict[str, Any]:
    lat = result.latencies_ms
    return {
        "bench": "load",
        "cores": os.cpu_count(),
        "python": sys.version.split()[0],
        "sessions": sessions,
        "steps": steps,
        "model_requests": result.model_requests,
        "updates": sum(len(s.live) for s in result.sessions),
        "wall_seconds": round(result.wall_seconds, 2),
        "latency_samples": len(lat),
        "missing": result.missing,
        "p50_ms": round(percentile(lat, 0.50), 2) if lat else None,
        "p90_ms": round(percentile(lat, 0.90), 2) if lat else None,
        "p99_ms": round(percentile(lat, 0.99), 2) if lat else None,
        "max_ms": round(max(lat), 2) if lat else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--sessions", type=int, default=20)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--timeout", type=float, default=300.0, help="seconds per turn")
    parser.add_argument("--json", type=Path, help="also write the figures to this file")
    args = parser.parse_args(argv)
    if args.sessions < 1 or args.steps < 2:
        parser.error("at least 1 session and 2 steps")
    result = asyncio.run(run(args.sessions, args.steps, args.timeout))
    report = figures(result, args.sessions, args.steps)
    print(
        f"lsp-agent serve, {args.sessions} sessions x {args.steps} steps at once, "
        f"{report['cores']} cores: {report['updates']} updates in {report['wall_seconds']} s; "
        f"update latency p50 {report['p50_ms']} ms, p90 {report['p90_ms']} ms, "
        f"p99 {report['p99_ms']} ms, max {report['max_ms']} ms"
    )
    line = json.dumps(report, separators=(",", ":"))
    print(line)
    if args.json is not None:
        args.json.write_text(line + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
