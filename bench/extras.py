"""The secondary figures: prefix stability, snapshot cost, relay latency, a 10,000-event load.

Each reuses the focused bench script that measures it in depth (``prefix_stability.py``,
``snapshot.py``, ``relay.py``) at the size the report needs.
"""

from __future__ import annotations

import itertools
import json
import random
import re
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from bench import prefix_stability, relay, serve_path
from bench.stats import Summary
from lsp_agent.core.events import NewEvent
from lsp_agent.snapshots import GitShadowSnapshots
from lsp_agent.storage.event_log import open_store
from lsp_agent.testing.fake_llm import RequestRecord

_ID = re.compile(r"\b(msg|call|prt|chk)_([0-9A-Z]{10})([0-9A-Z]{6})([0-9A-Z]{10})\b")
_CROCKFORD = "0123456789ABCDEFGHJKMNPQRSTVWXYZ"
_ONCE = {"session_created", "context_built", "title_set", "checkpoint_recorded", "review_recorded"}


def prefix_share(bodies: Sequence[dict[str, Any]]) -> float | None:
    """The smallest share of a request repeated verbatim as the next one's prefix
    (cache marks ignored): 100 % means the provider's prompt cache always hits."""
    shares = []
    for before, after in itertools.pairwise(bodies):
        a = prefix_stability.ordered(prefix_stability.strip_marks(before))
        b = prefix_stability.ordered(prefix_stability.strip_marks(after))
        shares.append(prefix_stability.common_prefix(a, b) / len(a))
    return min(shares) if shares else None


def model_bodies(records: Sequence[RequestRecord]) -> list[dict[str, Any]]:
    return [r.body for r in records if r.turn != "side" and isinstance(r.body, dict)]


async def snapshot_track_ms(workspace: Path, data_dir: Path, steps: int) -> dict[str, Summary]:
    """``track()`` (the call at every step boundary) in ``workspace``: unchanged, 1 file changed."""
    store = GitShadowSnapshots(data_dir)
    begun = time.perf_counter()
    await store.track(workspace)
    first = (time.perf_counter() - begun) * 1000
    unchanged, changed = [], []
    files = sorted(p for p in workspace.rglob("*.py") if ".git" not in p.parts)
    rnd = random.Random(3)
    for step in range(steps):
        begun = time.perf_counter()
        await store.track(workspace)
        unchanged.append((time.perf_counter() - begun) * 1000)
        with rnd.choice(files).open("a") as f:
            f.write(f"# bench step {step}\n")
        begun = time.perf_counter()
        await store.track(workspace)
        changed.append((time.perf_counter() - begun) * 1000)
    return {
        "first": Summary.of([first]),
        "unchanged": Summary.of(unchanged),
        "changed": Summary.of(changed),
    }


async def relay_latency(deltas: int) -> dict[str, Any]:
    """Answer text streamed at 2,000 deltas/s through ``serve``: write → editor receipt."""
    results = await relay.run([float(relay.GOAL_RATE)], [deltas], 60.0)
    return dict(results[0])


def _renamed(event: dict[str, Any], copy: int) -> dict[str, Any]:
    tag = "".join(_CROCKFORD[(copy >> (5 * i)) & 31] for i in reversed(range(6)))
    text = _ID.sub(lambda m: f"{m[1]}_{m[2]}{tag}{m[4]}", json.dumps(event["data"]))
    return {"type": event["type"], "data": json.loads(text), "time": event["time"]}


async def write_long_session(
    data_dir: Path, session_id: str, events: Sequence[dict[str, Any]], total: int
) -> int:
    """The exported session's turn repeated (fresh ids each time) up to ``total`` events."""
    turn = [e for e in events if e["type"] not in _ONCE]
    out = [{"type": e["type"], "data": e["data"], "time": e["time"]} for e in events]
    copy = 1
    while len(out) < total:
        out.extend(_renamed(e, copy) for e in turn)
        copy += 1
    store = await open_store(data_dir)
    try:
        await store.append(
            session_id, [NewEvent(type=e["type"], data=e["data"], time=e["time"]) for e in out]
        )
    finally:
        await store.close()
    return len(out)


async def load_session_ms(env: dict[str, str], folder: Path, session_id: str) -> tuple[float, int]:
    """``agent/session/load`` with the full replay: request → answered, and updates received."""
    async with serve_path.started(env, folder) as (client, _):
        before = len(client.updates)
        begun = time.monotonic()
        await client.request("agent/session/load", {"sessionId": session_id, "replay": "full"}, 120)
        elapsed = (time.monotonic() - begun) * 1000
        received = sum(1 for u in client.updates[before:] if u["sessionId"] == session_id)
    return elapsed, received
