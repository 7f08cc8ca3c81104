"""The bench's sequence: workloads, floors, the agents alternating A/B, then the extras.

Each iteration runs every measurement once, in the opposite order to the iteration before,
so drift on a shared machine (other jobs, thermal state) falls on both sides alike. The first
``warmup`` iterations are run and thrown away.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import attrs

from bench import extras, floors, opencode, run_path, serve_path, workload
from bench.results import Results, Samples
from bench.run_path import RunSample
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm
from tests.support.lsp_client import AgentClient


@attrs.frozen(kw_only=True)
class Settings:
    runs: int
    warmup: int
    opencode: bool
    large: bool
    large_files: int
    large_mb: float
    relay_deltas: int
    session_events: int
    cache: Path


Job = Callable[[bool], Awaitable[None]]


def _add_run(samples: Samples, prefix: str, sample: RunSample) -> None:
    turn, process = sample.turn, sample.process
    samples.add(f"{prefix}.first_ms", turn.first_request_ms)
    samples.add(f"{prefix}.read_ms", turn.read_step_ms)
    samples.add(f"{prefix}.edit_ms", turn.edit_step_ms)
    samples.add(f"{prefix}.wall_s", process.wall_s)
    samples.add(f"{prefix}.cpu_s", process.cpu_s)
    samples.add(f"{prefix}.rss_mib", process.peak_rss_mib)
    samples.add(f"{prefix}.system_bytes", turn.system_bytes)
    samples.add(f"{prefix}.tools_bytes", turn.tools_bytes)


class Bench:
    def __init__(self, settings: Settings, work: Path, server: FakeLLMServer) -> None:
        self.s = settings
        self.work = work
        self.server = server
        self.results = Results(settings={k: str(v) for k, v in attrs.asdict(settings).items()})

    # -- one measurement each --------------------------------------------------------------

    def run_job(self, workspace: Path, provider: str, prefix: str) -> Job:
        home = self.work / f"home-{prefix}"

        async def job(counted: bool) -> None:
            sample = await asyncio.to_thread(
                run_path.ours, self.server, workspace, home, provider=provider
            )
            if counted:
                _add_run(self.results.ours, prefix, sample)
                self.results.extras.setdefault(f"{prefix}.bodies", extras.model_bodies(
                    self.server.requests))  # fmt: skip

        return job

    def opencode_job(self, binary: Path, workspace: Path) -> Job:
        home = self.work / "home-opencode"

        failed: list[str] = []

        async def job(counted: bool) -> None:
            if failed:  # one failure (a changed config, no network it wanted): ours alone
                return
            try:
                sample = await asyncio.to_thread(
                    opencode.one_run, binary, self.server, workspace, home
                )
            except (RuntimeError, OSError, subprocess.TimeoutExpired) as error:
                failed.append(str(error))
                self.results.notes.append(f"opencode stopped being measured: {error}")
                return
            if counted:
                _add_run(self.results.opencode, "run", sample)
                self.results.extras.setdefault("opencode.bodies", extras.model_bodies(
                    self.server.requests))  # fmt: skip

        return job

    def serve_spawn_job(self, workspace: Path) -> Job:
        env = serve_path.server_env(self.work / "home-serve-spawn", self.server)

        async def job(counted: bool) -> None:
            async with serve_path.started(env, workspace) as (_, elapsed):
                pass
            if counted:
                self.results.ours.add("serve.spawn_ms", elapsed)

        return job

    def floors_job(self, workspace: Path) -> Job:
        env = serve_path.server_env(self.work / "home-bare", self.server)

        async def job(counted: bool) -> None:
            figures = {
                "import.openai_ms": await asyncio.to_thread(floors.sdk_import_ms, "openai"),
                "import.anthropic_ms": await asyncio.to_thread(floors.sdk_import_ms, "anthropic"),
                "python_ms": await asyncio.to_thread(floors.interpreter_ms),
                "pygls_init_ms": await floors.bare_pygls_initialize_ms(env, workspace),
            }
            if counted:
                for key, value in figures.items():
                    self.results.floors.add(key, value)

        return job

    def serve_turn_job(self, client: AgentClient, workspace: Path, prefix: str) -> Job:
        pid = serve_path.server_pid(client)

        async def job(counted: bool) -> None:
            before = serve_path.process_figures(pid)
            turn = await serve_path.one_turn(client, self.server, workspace)
            after = serve_path.process_figures(pid)
            if counted:
                ours = self.results.ours
                ours.add(f"{prefix}.prompt_first_ms", turn.prompt_to_first_ms)
                ours.add(f"{prefix}.read_ms", turn.turn.read_step_ms)
                ours.add(f"{prefix}.edit_ms", turn.turn.edit_step_ms)
                ours.add(f"{prefix}.turn_cpu_ms", (after.cpu_s - before.cpu_s) * 1000)
                ours.add(f"{prefix}.rss_mib", after.peak_rss_mib)
                self.results.extras.setdefault(f"{prefix}.bodies", extras.model_bodies(
                    self.server.requests))  # fmt: skip

        return job

    async def iterate(self, jobs: list[Job], runs: int, warmup: int) -> None:
        for index in range(warmup + runs):
            order = jobs if index % 2 == 0 else list(reversed(jobs))
            for job in order:
                await job(index >= warmup)

    # -- the whole sequence ----------------------------------------------------------------

    async def run(self) -> Results:
        s, results = self.s, self.results
        small = workload.small_repo(self.work / "small")
        binary: Path | None = None
        if s.opencode:
            installed = await asyncio.to_thread(opencode.install, s.cache)
            if isinstance(installed, Path):
                binary = installed
            else:
                results.notes.append(f"opencode not measured: {installed}")
        else:
            results.notes.append("opencode not measured (--quick or --no-opencode)")
        jobs = [
            self.run_job(small, "openai", "run"),
            self.run_job(small, "anthropic", "run_anthropic"),
            self.serve_spawn_job(small),
            self.floors_job(small),
        ]
        if binary is not None:
            jobs.insert(1, self.opencode_job(binary, self.work / "small-opencode"))
            workload.small_repo(self.work / "small-opencode")
        env = serve_path.server_env(self.work / "home-serve", self.server)
        async with serve_path.started(env, small) as (client, _):
            await serve_path.open_buffers(client, small, [small / "README.md"])
            await self.serve_turn_job(client, small, "serve")(False)  # warm the server up
            jobs.append(self.serve_turn_job(client, small, "serve"))
            await self.iterate(jobs, s.runs, s.warmup)
        if s.large:
            await self.large_repo()
        else:
            results.notes.append("large repository not measured (--quick or --no-large)")
            track = await extras.snapshot_track_ms(small, self.work / "snap-small", 5)
            results.extras["snapshot.small"] = {k: v.to_json() for k, v in track.items()}
        await self.secondary(small)
        return results

    async def large_repo(self) -> None:
        s = self.s
        large = await asyncio.to_thread(
            workload.large_repo, self.work / "large", s.large_files, s.large_mb
        )
        track = await extras.snapshot_track_ms(large, self.work / "snap-large", 10)
        self.results.extras["snapshot.large"] = {k: v.to_json() for k, v in track.items()}
        env = serve_path.server_env(self.work / "home-serve-large", self.server)
        buffers = sorted(large.glob("pkg0/mod*/file_*.py"))[:20]
        async with serve_path.started(env, large) as (client, _):
            await serve_path.open_buffers(client, large, buffers)
            await self.serve_turn_job(client, large, "large.serve")(False)
            jobs = [
                self.run_job(large, "openai", "large.run"),
                self.serve_turn_job(client, large, "large.serve"),
            ]
            await self.iterate(jobs, s.runs, 1)

    async def secondary(self, small: Path) -> None:
        results = self.results
        for prefix in ("run", "serve", "opencode"):
            bodies = results.extras.pop(f"{prefix}.bodies", None)
            if bodies is not None:
                results.extras[f"{prefix}.prefix_share"] = extras.prefix_share(bodies)
        for key in [k for k in results.extras if k.endswith(".bodies")]:
            del results.extras[key]
        results.extras["relay"] = await extras.relay_latency(self.s.relay_deltas)
        results.extras["session_load"] = await self.session_load(small)

    async def session_load(self, small: Path) -> dict[str, Any]:
        home = self.work / "home-run"
        env = workload.isolated_env(home)
        listing = await asyncio.to_thread(_cli, env, small, "sessions", "list", "--json")
        session_id = json.loads(listing)["sessions"][0]["sessionId"]
        exported = json.loads(
            await asyncio.to_thread(
                _cli, env, small, "sessions", "export", session_id, "--format", "json"
            )
        )
        home_load = self.work / "home-load"
        data_dir = home_load / "lsp-agent-data"
        count = await extras.write_long_session(
            data_dir, session_id, exported["events"], self.s.session_events
        )
        serve_env = serve_path.server_env(home_load, self.server)
        elapsed, updates = await extras.load_session_ms(serve_env, small, session_id)
        return {"events": count, "load_ms": elapsed, "updates": updates}


def _cli(env: dict[str, str], cwd: Path, *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "lsp_agent", *args],
        cwd=cwd, env=env, capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout


async def run_bench(settings: Settings) -> Results:
    with tempfile.TemporaryDirectory(prefix="lsp-agent-bench-") as tmp, running_fake_llm() as fake:
        return await Bench(settings, Path(tmp).resolve(), fake).run()
