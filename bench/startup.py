"""``python -m bench --startup``: start and stop beside Claude Code and opencode (issue 38).

The same scripted task (read → edit → answer) against the fake LLM, each agent a fresh
process per run, the agents alternating (the order reversed every iteration): lsp-agent cold
(``run`` in its own process, the warm path off), lsp-agent warm (``run`` handing its work to
the warm process, started by a warm-up run first), Claude Code (``claude -p``) and opencode
(``opencode run``). In the same iterations: the floors the goals are judged by (an interpreter
importing ``anthropic``, spawn → exit; a bare interpreter; a bare pygls server answering
``initialize``) and ``serve``'s spawn → ``initialize`` answered.

Per run: the whole run (spawn → exit), spawn → first model request, last answer → exit, the
agent's own time per step (answer → next request) and the peak RSS of the process tree (for
the warm row, of the ``run`` process only: the warm process is shared by every run).
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
import tempfile
from collections.abc import Awaitable, Callable
from pathlib import Path

import attrs

from bench import claude_code, floors, opencode, run_path, serve_path, workload
from bench.results import Samples
from bench.run_path import RunSample
from lsp_agent.testing.fake_llm import FakeLLMServer, running_fake_llm

AGENTS = ("cold", "warm", "claude", "opencode")
FAILURES = (RuntimeError, OSError, subprocess.TimeoutExpired)


@attrs.frozen(kw_only=True)
class StartupSettings:
    runs: int
    warmup: int
    peers: bool
    cache: Path


@attrs.define
class StartupResults:
    agents: dict[str, Samples] = attrs.field(factory=lambda: {a: Samples() for a in AGENTS})
    floors: Samples = attrs.field(factory=Samples)
    notes: list[str] = attrs.field(factory=list)
    settings: dict[str, str] = attrs.field(factory=dict)

    def add_run(self, agent: str, sample: RunSample) -> None:
        samples, turn, process = self.agents[agent], sample.turn, sample.process
        samples.add("wall_s", process.wall_s)
        samples.add("first_ms", turn.first_request_ms)
        samples.add("exit_ms", sample.exit_ms)
        samples.add("step_ms", (turn.read_step_ms + turn.edit_step_ms) / 2)
        samples.add("rss_mib", process.peak_rss_mib)

    def to_json(self) -> dict[str, object]:
        return {
            "settings": self.settings,
            "agents": {name: s.values for name, s in self.agents.items()},
            "floors": self.floors.values,
            "notes": self.notes,
        }


Job = Callable[[bool], Awaitable[None]]


class StartupBench:
    def __init__(self, settings: StartupSettings, work: Path, server: FakeLLMServer) -> None:
        self.s = settings
        self.work = work
        self.server = server
        self.results = StartupResults(
            settings={k: str(v) for k, v in attrs.asdict(settings).items()}
        )

    def agent_job(self, agent: str, run: Callable[[], RunSample]) -> Job:
        """A job that measures ``run``; its first failure ends that agent's runs, noted."""
        failed: list[str] = []

        async def job(counted: bool) -> None:
            if failed:
                return
            try:
                sample = await asyncio.to_thread(run)
            except FAILURES as error:
                failed.append(str(error))
                self.results.notes.append(f"{agent} stopped being measured: {error}")
                return
            if counted:
                self.results.add_run(agent, sample)

        return job

    def ours(self, workspace: Path, *, warm: bool) -> Callable[[], RunSample]:
        home = self.work / ("home-warm" if warm else "home-cold")
        return lambda: run_path.ours(self.server, workspace, home, provider="anthropic", warm=warm)

    def floors_job(self, workspace: Path) -> Job:
        env = serve_path.server_env(self.work / "home-floors", self.server)
        serve_env = serve_path.server_env(self.work / "home-serve", self.server)

        async def job(counted: bool) -> None:
            figures = {
                "import.anthropic_ms": await asyncio.to_thread(floors.sdk_import_ms, "anthropic"),
                "python_ms": await asyncio.to_thread(floors.interpreter_ms),
                "pygls_init_ms": await floors.bare_pygls_initialize_ms(env, workspace),
            }
            async with serve_path.started(serve_env, workspace) as (_, elapsed):
                figures["serve.spawn_ms"] = elapsed
            if counted:
                for key, value in figures.items():
                    self.results.floors.add(key, value)

        return job

    async def peers(self) -> list[Job]:
        jobs: list[Job] = []
        if not self.s.peers:
            self.results.notes.append(
                "Claude Code and opencode not measured (--quick or --no-peers)"
            )
            return jobs
        for name, module, runner in (
            ("claude", claude_code, claude_code.one_run),
            ("opencode", opencode, opencode.one_run),
        ):
            installed = await asyncio.to_thread(module.install, self.s.cache)
            if isinstance(installed, str):
                self.results.notes.append(f"{name} not measured: {installed}")
                continue
            workspace = workload.small_repo(self.work / f"small-{name}")
            home = self.work / f"home-{name}"
            jobs.append(
                self.agent_job(name, _bind(runner, installed, self.server, workspace, home))
            )
        return jobs

    async def warm_job(self, workspace: Path) -> Job | None:
        """The warm row, once a warm-up run has started the warm process; None (noted) when
        there is no warm path here."""
        warm = self.ours(workspace, warm=True)
        try:
            await asyncio.to_thread(warm)
        except FAILURES as error:
            self.results.notes.append(f"warm not measured: the warm-up run failed: {error}")
            return None
        if not list((self.work / "home-warm" / "run").rglob("*.sock")):
            self.results.notes.append("warm not measured: no warm process here (Linux only)")
            return None
        return self.agent_job("warm", warm)

    async def run(self) -> StartupResults:
        small = workload.small_repo(self.work / "small")
        jobs = [self.agent_job("cold", self.ours(small, warm=False)), self.floors_job(small)]
        jobs += await self.peers()
        warm = await self.warm_job(small)
        if warm is not None:
            jobs.insert(1, warm)
        try:
            for index in range(self.s.warmup + self.s.runs):
                order = jobs if index % 2 == 0 else list(reversed(jobs))
                for job in order:
                    await job(index >= self.s.warmup)
        finally:
            await asyncio.to_thread(self.stop_warm_process)
        return self.results

    def stop_warm_process(self) -> None:
        home = self.work / "home-warm"
        if not home.exists():
            return
        env = workload.isolated_env(home, **run_path.warm_env(home, warm=True))
        argv = [sys.executable, "-m", "lsp_agent", "daemon", "stop"]
        subprocess.run(argv, env=env, capture_output=True, timeout=60, check=False)


def _bind(
    runner: Callable[[Path, FakeLLMServer, Path, Path], RunSample],
    binary: Path,
    server: FakeLLMServer,
    workspace: Path,
    home: Path,
) -> Callable[[], RunSample]:
    return lambda: runner(binary, server, workspace, home)


async def run_startup(settings: StartupSettings) -> StartupResults:
    with tempfile.TemporaryDirectory(prefix="lsp-agent-bench-") as tmp, running_fake_llm() as fake:
        return await StartupBench(settings, Path(tmp).resolve(), fake).run()
