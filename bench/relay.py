"""How fast and how promptly ``lsp-agent serve`` relays streamed answer text to the editor.

Runs the real language server (a subprocess) under pytest-lsp's client, against the fake LLM
server (a thread of this process), and prompts one session once per target rate. The fake
streams N text deltas ``d000000 ``, ``d000001 ``… — one unique token per delta — at the rate,
recording the ``time.monotonic()`` after each delta's SSE bytes were written to the socket
(``record_delta_times``; the pacing is ``paced``, so the average rate is exact although one
asyncio sleep can't be shorter than ~1 ms: late deltas go out back to back). The client
stamps each ``agent/session/update`` with ``time.monotonic()`` on receipt. Both stamps are
taken in this process, in between is the server (HTTP read, stream parsing, the ≤ 16 ms
delta batching of protocol §3, the event-log commit, the JSON-RPC notification).

Reported per rate:

- latency: for each delta, from its write by the fake to the receipt of the
  ``agent_message_chunk`` that contains its token: p50 / p90 / p99 / max, in ms;
- the achieved send rate: (N - 1) / (last write - first write);
- backlog: the p50 latency of the first and of the last quarter of the deltas. A server that
  relays slower than the deltas arrive builds a queue, and latency grows through the run. A
  rate is *sustained* when the last quarter's p50 is below 2x the first quarter's **and**
  less than 20 ms above it. "Highest rate without a growing backlog" is the highest tested
  rate that is sustained along with every lower tested rate.

A rate whose achieved send rate is below 90 % of the target is marked: there the fake (which
shares this process, and the machine's cores, with the client) could not keep up, and the row
measures less load than it says.

The goal line checks p99 ≤ 20 ms at 2,000 deltas/s (reported, not asserted). The table is
followed by one JSON line with all the numbers.

    python bench/relay.py [--rates 500,1000,2000,4000,8000,16000,32000] [--seconds 2 | --deltas N]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsp_agent.testing.fake_llm import running_fake_llm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from tests.support.lsp_client import AgentClient, agent_client

MODEL = "anthropic/claude-bench"
DEFAULT_RATES = (500, 1000, 2000, 4000, 8000, 16000, 32000)
GOAL_RATE = 2000
GOAL_P99_MS = 20.0
BACKLOG_RATIO = 2.0
BACKLOG_SLACK_MS = 20.0
TOKEN = re.compile(r"d(\d{6}) ")


class _StampedUpdates(list[dict[str, Any]]):
    """``AgentClient.updates`` that also records when each update was appended."""

    def __init__(self) -> None:
        super().__init__()
        self.times: list[float] = []

    def append(self, item: dict[str, Any]) -> None:
        self.times.append(time.monotonic())
        super().append(item)


def tokens(count: int) -> list[str]:
    if count > 1_000_000:
        raise ValueError("at most 1,000,000 deltas (tokens have six digits)")
    return [f"d{i:06d} " for i in range(count)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))
    return ordered[index]


def turn(rate: float, count: int) -> dict[str, Any]:
    return {"text": tokens(count), "chunk_delay": 1 / rate, "paced": True}


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
        ANTHROPIC_API_KEY="bench-key",
        LSP_AGENT_MODEL=MODEL,
        LSP_AGENT_LOG="WARNING",
    )
    return env


async def _prompt_until_idle(
    client: AgentClient, session: str, text: str, after_seq: int, timeout: float
) -> int:
    """Prompt, wait for the turn's idle ``state_update``; its ``seq``."""
    await client.prompt(session, text)
    idle = await client.wait_for(
        lambda u: (
            u["sessionId"] == session
            and u["seq"] > after_seq
            and u["update"].get("sessionUpdate") == "state_update"
            and u["update"].get("state") == "idle"
        ),
        timeout,
    )
    stop = idle["update"].get("stopReason")
    if stop != "end_turn":
        raise RuntimeError(f"turn ended with {stop}: {idle['update']}")
    return int(idle["seq"])


def receive_times(
    updates: _StampedUpdates, start: int, end: int, session: str, count: int
) -> list[float | None]:
    """For each token index, when the chunk carrying it was received."""
    received: list[float | None] = [None] * count
    for update, at in zip(updates[start:end], updates.times[start:end], strict=True):
        body = update["update"]
        if update["sessionId"] != session or body.get("sessionUpdate") != "agent_message_chunk":
            continue
        for match in TOKEN.finditer(body.get("text", "")):
            index = int(match.group(1))
            if index < count and received[index] is None:
                received[index] = at
    return received


def summarize(rate: float, sent: list[float], received: list[float | None]) -> dict[str, Any]:
    pairs = [(s, r) for s, r in zip(sent, received, strict=True) if r is not None]
    if not pairs:
        raise RuntimeError(f"at {rate:g}/s no delta's token came back in an agent_message_chunk")
    latencies = [(r - s) * 1000 for s, r in pairs]
    quarter = max(1, len(latencies) // 4)
    first_q = statistics.median(latencies[:quarter])
    last_q = statistics.median(latencies[-quarter:])
    sustained = last_q < BACKLOG_RATIO * first_q and last_q - first_q < BACKLOG_SLACK_MS
    span = sent[-1] - sent[0] if len(sent) > 1 else 0.0
    return {
        "target_rate": rate,
        "achieved_rate": (len(sent) - 1) / span if span > 0 else None,
        "deltas": len(sent),
        "missing": len(sent) - len(pairs),
        "p50_ms": percentile(latencies, 0.50),
        "p90_ms": percentile(latencies, 0.90),
        "p99_ms": percentile(latencies, 0.99),
        "max_ms": max(latencies),
        "first_quarter_p50_ms": first_q,
        "last_quarter_p50_ms": last_q,
        "sustained": sustained,
    }


async def run(rates: list[float], counts: list[int], timeout: float) -> list[dict[str, Any]]:
    script = {
        "turns": [{"text": "warm up"}] + [turn(r, n) for r, n in zip(rates, counts, strict=True)]
    }
    results: list[dict[str, Any]] = []
    with (
        tempfile.TemporaryDirectory() as tmp,
        running_fake_llm(script, record_delta_times=True) as fake,
    ):
        root = Path(tmp)
        workspace = root / "ws"
        workspace.mkdir()
        (root / "home" / ".config").mkdir(parents=True)
        env = server_env(root, fake.anthropic_base_url)
        async with agent_client(env=env, folders=[workspace]) as client:
            updates = _StampedUpdates()
            client.updates = updates
            session = await client.new_session()
            seq = await _prompt_until_idle(client, session, "warm up", -1, timeout)
            for index, (rate, count) in enumerate(zip(rates, counts, strict=True), start=1):
                start = len(updates)
                seq = await _prompt_until_idle(
                    client, session, f"stream at {rate:g}/s", seq, count / rate + timeout
                )
                records = [r for r in fake.requests if r.turn == index]
                if len(records) != 1:
                    raise RuntimeError(f"expected one model request for turn {index}")
                sent = records[0].delta_times
                if len(sent) != count:
                    raise RuntimeError(f"the fake recorded {len(sent)} of {count} deltas")
                received = receive_times(updates, start, len(updates), session, count)
                results.append(summarize(rate, sent, received))
    return results


def highest_sustained(results: list[dict[str, Any]]) -> float | None:
    best = None
    for result in sorted(results, key=lambda r: r["target_rate"]):
        if not result["sustained"]:
            break
        best = result["target_rate"]
    return best


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument(
        "--rates",
        default=",".join(str(r) for r in DEFAULT_RATES),
        help="target delta rates per second, comma-separated",
    )
    size = parser.add_mutually_exclusive_group()
    size.add_argument("--seconds", type=float, default=2.0, help="stream length per rate")
    size.add_argument("--deltas", type=int, help="deltas per rate (instead of --seconds)")
    parser.add_argument("--timeout", type=float, default=60.0, help="extra seconds per turn")
    args = parser.parse_args(argv)
    rates = [float(r) for r in args.rates.split(",") if r.strip()]
    if not rates or min(rates) <= 0:
        parser.error("--rates needs positive numbers")
    if args.deltas is not None:
        counts = [args.deltas] * len(rates)
    else:
        counts = [max(2, round(rate * args.seconds)) for rate in rates]
    if min(counts) < 2:
        parser.error("at least 2 deltas per rate")

    results = asyncio.run(run(rates, counts, args.timeout))

    print(f"lsp-agent serve, text relay, {os.cpu_count()} cores, python {sys.version.split()[0]}")
    header = (
        f"{'target/s':>8} {'sent/s':>8} {'deltas':>6} {'p50':>7} {'p90':>7} {'p99':>7} "
        f"{'max':>7} {'1st q50':>8} {'4th q50':>8}  backlog"
    )
    print(header + "   (latencies in ms)")
    for r in results:
        achieved = f"{r['achieved_rate']:.0f}" if r["achieved_rate"] else "-"
        notes = [f"{r['missing']} missing"] if r["missing"] else []
        if not r["achieved_rate"] or r["achieved_rate"] < 0.9 * r["target_rate"]:
            notes.append("sender fell short of the target")
        note = f" ({'; '.join(notes)})" if notes else ""
        print(
            f"{r['target_rate']:>8.0f} {achieved:>8} {r['deltas']:>6} {r['p50_ms']:>7.2f} "
            f"{r['p90_ms']:>7.2f} {r['p99_ms']:>7.2f} {r['max_ms']:>7.2f} "
            f"{r['first_quarter_p50_ms']:>8.2f} {r['last_quarter_p50_ms']:>8.2f}  "
            f"{'no' if r['sustained'] else 'GROWING'}{note}"
        )
    best = highest_sustained(results)
    if best is None:
        verdict = "none of the tested rates"
    elif best == max(rates):
        verdict = f">= {best:.0f} deltas/s (the highest tested)"
    else:
        verdict = f"{best:.0f} deltas/s"
    print(f"highest rate without a growing backlog: {verdict}")
    goal = next((r for r in results if r["target_rate"] == GOAL_RATE), None)
    goal_met: bool | None = None
    if goal is None:
        print(f"goal p99 <= {GOAL_P99_MS:.0f} ms at {GOAL_RATE} deltas/s: not measured")
    else:
        goal_met = goal["p99_ms"] <= GOAL_P99_MS
        print(
            f"goal p99 <= {GOAL_P99_MS:.0f} ms at {GOAL_RATE} deltas/s: "
            f"{'MET' if goal_met else 'NOT MET'} (p99 {goal['p99_ms']:.2f} ms)"
        )
    line = {
        "bench": "relay",
        "cores": os.cpu_count(),
        "results": results,
        "highest_sustained_rate": best,
        "goal": {"rate": GOAL_RATE, "p99_ms": GOAL_P99_MS, "met": goal_met},
    }
    print(json.dumps(line, separators=(",", ":")))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
