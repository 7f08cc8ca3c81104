"""``python -m bench --long``: does a step cost the same at step 800 as at step 8?

Sessions of N ``read`` steps (the fake model calls ``read`` on a 4-line file N times, then
answers), through ``lsp-agent run`` (a fresh process) and ``lsp-agent serve`` (a fresh server
driven over LSP by the tests' scripted editor). For each session: the agent's overhead per step
(the end of one streamed answer → the next request's arrival, as in ``bench/turns.py``), its
median in each tenth of the session, the growth ratio last tenth / first tenth, the request's
size, and the peak RSS.

The floor, measured in the same run: part of a step must grow with the request — encoding
it as JSON and handing it to the SDK and the socket. ``bench/send_floor.py`` (a fresh
process, the provider's SDK, the same fake server) sends the very bodies the agent sent in the
first and the last tenth and times encode → arrival. The report gives the ratio raw and net of
that floor, so a growth that is only the bytes on the wire is told apart from ours.

Nothing here is asserted: ``tests/integration/test_bench_long.py`` checks that the harness
produces every figure.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from bench import serve_path
from bench.measured import run_measured
from bench.workload import isolated_env
from lsp_agent.testing.fake_llm import FakeLLMServer, RequestRecord, running_fake_llm

ROOT = Path(__file__).resolve().parents[1]
MODELS = {"anthropic": "anthropic/claude-bench", "openai": "openai/gpt-bench"}
FILE = "".join(f"line_{i} = {i}\n" for i in range(4))
"""Small, so 800 steps make the ~240 KB request the issue measured (each step adds a call and
its result, ~0.3 KB)."""
PROMPT = "read a.py repeatedly"
FLOOR_SENDS = 5
"""How many times each sampled body is sent to measure the floor."""


@attrs.frozen(kw_only=True)
class Settings:
    steps: tuple[int, ...]
    provider: str = "anthropic"
    paths: tuple[str, ...] = ("run", "serve")
    timeout: float = 900.0
    baseline: Path | None = None
    """Another checkout's root: its agent is measured too, session for session, alternating
    with this one's (before/after in the same run)."""

    def agents(self) -> tuple[tuple[str, str | None], ...]:
        """(label, PYTHONPATH for the agent's processes) of each agent measured."""
        ours = str(ROOT)  # this checkout's agent, whatever the environment installed
        if self.baseline is None:
            return (("lsp-agent", ours),)
        return (("before", str(self.baseline)), ("after", ours))


@attrs.frozen(kw_only=True)
class Floor:
    """Encoding a request body and sending it through the SDK, to its arrival (ms)."""

    encode_ms: float
    send_ms: float
    """Encode + SDK + socket: from before the encode to the fake server's arrival stamp."""
    body_bytes: int


@attrs.frozen(kw_only=True)
class Session:
    agent: str
    path: str
    steps: int
    gaps_ms: tuple[float, ...]
    body_bytes: tuple[int, ...]
    peak_rss_mib: float
    floor_first: Floor
    floor_last: Floor

    def tenths(self, q: float = 0.5) -> list[float]:
        """The overhead of each tenth of the session's steps: its median, or its ``q``
        quantile (the lower quartile is what other jobs on a shared machine move least:
        their bursts only ever add to a step)."""
        return [percentile(chunk, q) for chunk in _tenths(self.gaps_ms)]

    def growth(self, q: float = 0.5) -> float:
        tenths = self.tenths(q)
        return tenths[-1] / tenths[0]

    def net_growth(self) -> float | None:
        """The growth of what is left after the floor; None if the floor swallows it."""
        tenths = self.tenths()
        first = tenths[0] - self.floor_first.send_ms
        last = tenths[-1] - self.floor_last.send_ms
        return last / first if first > 0 and last > 0 else None

    def to_json(self) -> dict[str, Any]:
        data = attrs.asdict(self)
        data.update(
            tenths_ms=self.tenths(),
            growth=self.growth(),
            tenths_lower_quartile_ms=self.tenths(0.25),
            growth_lower_quartile=self.growth(0.25),
            net_growth=self.net_growth(),
        )
        return data


def percentile(values: Sequence[float], q: float) -> float:
    """The ``q`` quantile, interpolated (the median for 0.5)."""
    if q == 0.5:
        return statistics.median(values)
    return (
        statistics.quantiles(values, n=100, method="inclusive")[round(q * 100) - 1]
        if len(values) > 1
        else values[0]
    )


def _tenths(values: Sequence[float]) -> list[list[float]]:
    n = len(values)
    if n < 10:
        return [[v] for v in values]
    return [list(values[k * n // 10 : (k + 1) * n // 10]) for k in range(10)]


def script(steps: int) -> list[dict[str, Any]]:
    call = {"tool_calls": [{"name": "read", "input": {"file_path": "a.py"}}]}
    return [call] * steps + [{"text": "done"}]


def prepare(root: Path, steps: int, provider: str) -> tuple[Path, Path]:
    """A workspace with a.py, and a home whose config lets N steps run uncompacted."""
    workspace, home = root / "ws", root / "home"
    workspace.mkdir(parents=True)
    (workspace / "a.py").write_text(FILE)
    config = home / ".config" / "lsp-agent"
    config.mkdir(parents=True)
    name, model = MODELS[provider].split("/")
    (config / "config.json").write_text(
        json.dumps(
            {
                "title": {"enabled": False},
                "max_steps": steps + 10,
                # The growth is measured on one uncompacted conversation: a window large
                # enough that compaction never starts (it would shrink the request).
                "providers": {name: {"models": {model: {"context_window": 2_000_000}}}},
            }
        )
    )
    return workspace, home


def provider_env(
    home: Path, server: FakeLLMServer, pythonpath: str | None, **extra: str
) -> dict[str, str]:
    """The agent's environment; ``pythonpath`` puts another checkout's agent first."""
    passed = {"PYTHONPATH": pythonpath} if pythonpath else {}
    return isolated_env(
        home,
        ANTHROPIC_BASE_URL=server.anthropic_base_url,
        ANTHROPIC_API_KEY="bench-key",
        OPENAI_BASE_URL=server.openai_base_url,
        OPENAI_API_KEY="bench-key",
        LSP_AGENT_LOG="WARNING",
        **passed,
        **extra,
    )


def model_requests(server: FakeLLMServer, steps: int) -> list[RequestRecord]:
    found = [r for r in server.requests if r.turn != "side" and r.kind == "success"]
    if len(found) != steps + 1:
        raise RuntimeError(f"expected {steps + 1} model requests, saw {len(found)}")
    return found


def gaps(records: Sequence[RequestRecord]) -> list[float]:
    out = []
    for before, after in itertools.pairwise(records):
        if before.ended_monotonic is None:
            raise RuntimeError("an answer was not finished")
        out.append((after.arrived_monotonic - before.ended_monotonic) * 1000)
    return out


async def serve_session(server: FakeLLMServer, root: Path, steps: int, settings: Settings,
                        pythonpath: str | None) -> tuple[list[RequestRecord], float]:  # fmt: skip
    """N steps in one prompt of a fresh ``lsp-agent serve``: model requests, VmHWM (MiB)."""
    provider, timeout = settings.provider, settings.timeout
    workspace, home = prepare(root, steps, provider)
    env = provider_env(home, server, pythonpath, LSP_AGENT_MODEL=MODELS[provider])
    async with serve_path.started(env, workspace) as (client, _):
        server.set_script(script(steps))
        server.clear_log()
        session = await client.new_session()
        await client.prompt(session, PROMPT)
        idle = await client.wait_idle(session, timeout)
        if idle.get("stopReason") != "end_turn":
            raise RuntimeError(f"the serve turn ended with {idle}")
        rss = serve_path.process_figures(serve_path.server_pid(client)).peak_rss_mib
    return model_requests(server, steps), rss


def sample_body(records: Sequence[RequestRecord], first: bool) -> RequestRecord:
    """The request in the middle of the first (or last) tenth of the steps."""
    chunks = _tenths(range(1, len(records)))  # the requests that follow a step
    chunk = chunks[0] if first else chunks[-1]
    return records[int(chunk[len(chunk) // 2])]


def measure_floor(server: FakeLLMServer, record: RequestRecord, provider: str) -> Floor:
    """Encode + send the agent's own body of ``record`` through the SDK, in a fresh process."""
    with tempfile.TemporaryDirectory() as tmp:
        body_file = Path(tmp) / "body.json"
        body_file.write_text(json.dumps(record.body))
        server.set_script([{"text": "ok"}] * FLOOR_SENDS)
        server.clear_log()
        base = server.anthropic_base_url if provider == "anthropic" else server.openai_base_url
        root = str(Path(__file__).resolve().parents[1])
        done = subprocess.run(
            [sys.executable, "-m", "bench.send_floor", provider, base, str(body_file),
             str(FLOOR_SENDS)],
            capture_output=True, text=True, timeout=120, env={**os.environ, "PYTHONPATH": root},
        )  # fmt: skip
        if done.returncode != 0:
            raise RuntimeError(f"the floor sender failed: {done.stderr[-2000:]}")
        starts = json.loads(done.stdout)
        arrivals = [r.arrived_monotonic for r in server.requests if r.turn != "side"]
    if len(arrivals) != len(starts):
        raise RuntimeError(f"the floor sender sent {len(starts)}, the server saw {len(arrivals)}")
    sends = [(arrived - s["start"]) * 1000 for s, arrived in zip(starts, arrivals, strict=True)]
    return Floor(
        encode_ms=statistics.median(s["encode_ms"] for s in starts),
        send_ms=statistics.median(sends),
        body_bytes=record.body_bytes,
    )


def session_figures(
    server: FakeLLMServer, agent: str, path: str, steps: int, provider: str,
    records: list[RequestRecord], rss: float,
) -> Session:  # fmt: skip
    first, last = sample_body(records, True), sample_body(records, False)
    floor_first = measure_floor(server, first, provider)
    floor_last = measure_floor(server, last, provider)
    return Session(
        agent=agent,
        path=path,
        steps=steps,
        gaps_ms=tuple(gaps(records)),
        body_bytes=tuple(r.body_bytes for r in records),
        peak_rss_mib=rss,
        floor_first=floor_first,
        floor_last=floor_last,
    )


@contextlib.contextmanager
def no_gc() -> Iterator[None]:
    """No cyclic garbage collection in this process during a session: the fake server (a
    thread here) keeps every request body, and a collection walking them would delay its
    arrival stamps by tens of ms, more the longer the session — a growth not the agent's."""
    gc.disable()
    try:
        yield
    finally:
        gc.enable()
        gc.collect()


async def run_long(settings: Settings) -> list[Session]:
    """Every size through every path (and agent), smallest first, alternating the order."""
    sessions: list[Session] = []
    runs = [(path, agent) for path in settings.paths for agent in settings.agents()]
    with running_fake_llm() as server:
        for index, steps in enumerate(settings.steps):
            for path, (agent, pythonpath) in runs if index % 2 == 0 else reversed(runs):
                began = time.monotonic()
                session = await one_session(server, settings, steps, path, agent, pythonpath)
                sessions.append(session)
                print(
                    f"{agent:9} {path:5} {steps:5} steps: first tenth "
                    f"{session.tenths()[0]:.1f} ms, last {session.tenths()[-1]:.1f} ms, growth "
                    f"{session.growth():.2f}x, floor {session.floor_first.send_ms:.1f} -> "
                    f"{session.floor_last.send_ms:.1f} ms, RSS {session.peak_rss_mib:.1f} MiB "
                    f"({time.monotonic() - began:.0f} s)",
                    file=sys.stderr,
                    flush=True,
                )
    return sessions


async def one_session(
    server: FakeLLMServer, settings: Settings, steps: int, path: str, agent: str,
    pythonpath: str | None,
) -> Session:  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="lsp-agent-long-") as tmp, no_gc():
        root = Path(tmp).resolve()
        if path == "run":
            records, rss = await asyncio.to_thread(
                run_measured_session, server, root, steps, settings, pythonpath
            )
        else:
            records, rss = await serve_session(server, root, steps, settings, pythonpath)
        try:
            return session_figures(server, agent, path, steps, settings.provider, records, rss)
        finally:
            del records
            server.clear_log()


def run_measured_session(
    server: FakeLLMServer, root: Path, steps: int, settings: Settings, pythonpath: str | None
) -> tuple[list[RequestRecord], float]:
    """N steps through a fresh ``lsp-agent run``: the model requests and the peak RSS (MiB),
    taken by ``bench/measured.py``'s small wrapper (a fork of this process, which holds every
    request body, would count this process's memory as the child's)."""
    workspace, home = prepare(root, steps, settings.provider)
    server.set_script(script(steps))
    server.clear_log()
    argv = [sys.executable, "-m", "lsp_agent", "run", "--max-steps", str(steps + 10)]
    argv += ["--model", MODELS[settings.provider], PROMPT]
    env = provider_env(home, server, pythonpath, PWD=str(workspace))
    process = run_measured(
        argv, cwd=workspace, env=env, out=root / "measured.json", timeout=settings.timeout
    )
    if process.returncode != 0:
        raise RuntimeError(f"lsp-agent run exited {process.returncode}: {process.stderr_tail}")
    return model_requests(server, steps), process.peak_rss_mib
