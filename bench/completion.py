"""Inline completion over the real LSP wire: a scripted typing session against the loopback fake.

Runs the real language server (a subprocess) under pytest-lsp's client, with
``completion.enabled`` and a fill-in-the-middle model on an ``openai-compatible`` provider
pointed at the fake LLM server (a thread of this process), which answers ``/v1/completions``
after ``--model-ms`` (the model's own time). The client types a fixed text key by key, as an
editor does: each keystroke is a ``didChange`` and a ``textDocument/inlineCompletion``
request, the previous request cancelled (``$/cancelRequest``); keys come 90–140 ms apart
within a word and 450–900 ms apart between words (a seeded schedule, the same every run).

Reported:

- keystroke → ghost text: from the ``didChange`` to the answer carrying an item, p50 / p95;
- agent overhead: that time minus the debounce (``completion.debounce_ms``, a deliberate
  wait) and minus the fake's own time for the model request it answered from (its record's
  arrival to end), p50 / p95 — goals ≤ 15 / 30 ms (reported, not asserted);
- model requests per 100 keystrokes (started, and completed: not cancelled by typing on);
- tokens per hour of typing: the completed requests' tokens (the fake's usage: the body's
  bytes ÷ 4 plus the answer's pieces), scaled from the session's length to an hour.

    python bench/completion.py [--words 120] [--model-ms 20] [--debounce-ms 150]
    python -m bench --completion [--quick]      (also writes its section of docs/benchmarks.md)
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import json
import os
import random
import statistics
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # the repo root: tests.support
from bench.report import machine, number, replace_section
from tests.support.lsp_client import AgentClient, agent_client

START, END = "<!-- bench-completion:start -->", "<!-- bench-completion:end -->"
GOAL_P50_MS, GOAL_P95_MS = 15.0, 30.0
TYPED = (
    "def total_price(items, tax_rate): subtotal = sum(item.price * item.quantity for item in "
    "items) discount = compute_discount(subtotal) return round((subtotal - discount) * (1 + "
    "tax_rate), 2) class Basket: def __init__(self): self.items = [] def add(self, item): "
    "self.items.append(item) def total(self, tax_rate): return total_price(self.items, tax_rate)"
)
WORDS = TYPED.split(" ")


@attrs.frozen(kw_only=True)
class Result:
    keystrokes: int
    seconds: float
    shown_ms: list[float]
    overhead_ms: list[float]
    started: int
    completed: int
    tokens: int
    debounce_ms: int
    model_ms: int

    def to_json(self) -> dict[str, Any]:
        return {
            "keystrokes": self.keystrokes,
            "seconds": round(self.seconds, 3),
            "shown_p50_ms": _pct(self.shown_ms, 50),
            "shown_p95_ms": _pct(self.shown_ms, 95),
            "overhead_p50_ms": _pct(self.overhead_ms, 50),
            "overhead_p95_ms": _pct(self.overhead_ms, 95),
            "answers": len(self.shown_ms),
            "requests_started_per_100_keys": round(100 * self.started / self.keystrokes, 2),
            "requests_completed_per_100_keys": round(100 * self.completed / self.keystrokes, 2),
            "tokens_per_hour": round(self.tokens * 3600 / self.seconds),
            "debounce_ms": self.debounce_ms,
            "model_ms": self.model_ms,
        }


def _pct(values: Sequence[float], pct: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return round(values[0], 2)
    return round(statistics.quantiles(values, n=100, method="inclusive")[pct - 1], 2)


def schedule(words: int, seed: int = 36) -> list[tuple[str, float]]:
    """(the text after the key, the pause before the next key in seconds), key by key."""
    rng = random.Random(seed)
    keys: list[tuple[str, float]] = []
    text = ""
    for n in range(words):
        word = WORDS[n % len(WORDS)] + " "
        for i, char in enumerate(word):
            text += char
            last = i == len(word) - 1
            keys.append((text, rng.uniform(0.45, 0.9) if last else rng.uniform(0.09, 0.14)))
    return keys


def _config(fake: FakeLLMServer, debounce_ms: int) -> dict[str, Any]:
    return {
        "providers": {"local": {"type": "openai-compatible", "base_url": fake.openai_base_url}},
        "agents": {"completion": {"model": "local/coder"}},
        "completion": {"enabled": True, "debounce_ms": debounce_ms, "max_tokens_per_hour": 0},
    }


async def _type(client: AgentClient, path: Path, keys: list[tuple[str, float]]) -> list[Any]:
    """Type the schedule; each answered request as (sent, received, items)."""
    protocol: Any = client.client.protocol
    answers: list[tuple[float, float, int]] = []
    pending: list[asyncio.Task[None]] = []
    previous: str | None = None  # the last request, while it is unanswered

    async def wait(msg_id: str, sent: float, future: Any) -> None:
        nonlocal previous
        try:
            result = await asyncio.wait_for(asyncio.wrap_future(future), 60)
        except JsonRpcRequestCancelled:
            return
        finally:
            if previous == msg_id:
                previous = None  # answered: nothing left to cancel
        received = time.monotonic()
        if result is not None and result.items:
            answers.append((sent, received, len(result.items)))

    for n, (text, pause) in enumerate(keys):
        if previous is not None:
            client.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=previous))
        sent = time.monotonic()
        client.change(path, text)
        line = text.count("\n")
        params = lsp.InlineCompletionParams(
            text_document=lsp.TextDocumentIdentifier(uri=path.as_uri()),
            position=lsp.Position(line=line, character=len(text.rsplit("\n", 1)[-1])),
            context=lsp.InlineCompletionContext(
                trigger_kind=lsp.InlineCompletionTriggerKind.Automatic
            ),
        )
        previous = f"key-{n}"
        future = protocol.send_request("textDocument/inlineCompletion", params, msg_id=previous)
        pending.append(asyncio.ensure_future(wait(previous, sent, future)))
        await asyncio.sleep(pause)
    await asyncio.gather(*pending)
    return answers


async def run(words: int = 120, model_ms: int = 20, debounce_ms: int = 150) -> Result:
    keys = schedule(words)
    script = {"completions": [{"text": "ghost text", "delay": model_ms / 1000}]}
    with (
        tempfile.TemporaryDirectory(prefix="bench-completion-") as tmp,
        running_fake_llm(script) as fake,
    ):
        root = Path(tmp)
        home, workspace = root / "home", root / "ws"
        (home / ".config" / "lsp-agent").mkdir(parents=True)
        workspace.mkdir()
        config = home / ".config" / "lsp-agent" / "config.json"
        config.write_text(json.dumps(_config(fake, debounce_ms)))
        env = {k: v for k, v in os.environ.items() if k in ("PATH", "LANG", "TMPDIR")}
        env.update(
            HOME=str(home),
            XDG_CONFIG_HOME=str(home / ".config"),
            LSP_AGENT_DATA_DIR=str(root / "data"),
            LSP_AGENT_MODEL="local/coder",
            LSP_AGENT_LOG="WARNING",
        )
        source = workspace / "basket.py"
        source.write_text("")
        async with agent_client(env=env, folders=[workspace]) as client:
            client.open(source, "")
            began = time.monotonic()
            answers = await _type(client, source, keys)
            seconds = time.monotonic() - began
        records = [r for r in fake.requests if r.path.endswith("/v1/completions")]
    done = [r for r in records if r.status == 200 and r.error is None and r.ended_monotonic]
    shown, overhead = [], []
    for sent, received, _ in answers:
        shown.append((received - sent) * 1000)
        served = [r for r in done if sent <= r.arrived_monotonic and r.ended_monotonic <= received]
        if served:
            model = served[-1]
            assert model.ended_monotonic is not None
            own = model.ended_monotonic - model.arrived_monotonic
            overhead.append((received - sent - own) * 1000 - debounce_ms)
    tokens = sum(max(1, r.body_bytes // 4) + 2 for r in done)  # "ghost text": two pieces
    return Result(
        keystrokes=len(keys),
        seconds=seconds,
        shown_ms=shown,
        overhead_ms=overhead,
        started=len(records),
        completed=len(done),
        tokens=tokens,
        debounce_ms=debounce_ms,
        model_ms=model_ms,
    )


def table(result: Result) -> list[str]:
    data = result.to_json()
    p50, p95 = data["overhead_p50_ms"], data["overhead_p95_ms"]
    goal = "met" if p50 is not None and p50 <= GOAL_P50_MS and p95 <= GOAL_P95_MS else "not met"
    return [
        "| measure | value |",
        "|---|---|",
        f"| keystrokes typed | {result.keystrokes} in {number(result.seconds)} s |",
        f"| keystroke → ghost text p50 / p95 | {number(data['shown_p50_ms'])} / "
        f"{number(data['shown_p95_ms'])} ms (debounce {result.debounce_ms} ms, model "
        f"{result.model_ms} ms) |",
        f"| agent overhead p50 / p95 | {number(p50)} / {number(p95)} ms (goal ≤ "
        f"{GOAL_P50_MS:.0f} / {GOAL_P95_MS:.0f} ms: {goal}) |",
        f"| model requests per 100 keystrokes | {data['requests_started_per_100_keys']} "
        f"started, {data['requests_completed_per_100_keys']} completed |",
        f"| ghost texts shown | {data['answers']} |",
        f"| tokens per hour of typing | {data['tokens_per_hour']:,} |",
    ]


def section(result: Result, command: str) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC")
    return "\n".join(
        [
            START,
            "## Inline completion",
            "",
            f"Produced by `{command}` on {when} (bench/completion.py: a scripted typing "
            "session over the real LSP wire against the loopback fake's `/v1/completions`).",
            "",
            f"Machine: {machine()}.",
            "",
            *table(result),
            "",
            END,
        ]
    )


def write(result: Result, out: Path, command: str) -> Path:
    out.mkdir(parents=True, exist_ok=True)
    return replace_section(out / "benchmarks.md", section(result, command), START, END)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--words", type=int, default=120)
    parser.add_argument("--model-ms", type=int, default=20)
    parser.add_argument("--debounce-ms", type=int, default=150)
    args = parser.parse_args(argv)
    result = asyncio.run(run(args.words, args.model_ms, args.debounce_ms))
    print("\n".join(table(result)))
    print(json.dumps(result.to_json()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
