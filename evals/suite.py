"""One task end to end: generate its repository, run the agent, judge what it left.

``--scripted`` gives every task a fake model of its own (``lsp_agent.testing.fake_llm``)
playing the task's oracle, so a run proves the harness and that the task is solvable with the
agent's tools; it also fails a task whose script was not played to the end.
"""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Literal

import attrs

from evals.env import agent_env, merged_config
from evals.fronts import Ran, via_run, via_serve
from evals.task import Outcome, Task
from lsp_agent.testing.fake_llm import running_fake_llm

Front = Literal["run", "serve"]
ORACLE_MODELS = ("anthropic/eval-oracle", "openai/eval-oracle")
"""The scripted runs alternate providers, so both wire formats are exercised."""


@attrs.frozen(kw_only=True)
class Settings:
    model: str | None
    """``provider/model``; None: what the config names (``--config``, ``LSP_AGENT_MODEL``)."""
    scripted: bool = False
    config: Mapping[str, Any] = attrs.field(factory=dict)
    passed_env: tuple[str, ...] = ()
    timeout: float = 600.0
    jobs: int = 1
    keep: Path | None = None
    """Keep each task's folder under this path (default: removed)."""
    work: Path | None = None
    """Where the task folders are made (default: the system's temporary folder)."""


@attrs.frozen(kw_only=True)
class Result:
    task: str
    category: str
    front: Front
    model: str
    solved: bool
    reason: str
    steps: int
    input_tokens: int
    output_tokens: int
    cached_tokens: int
    cost: float | None
    wall_s: float
    error: str | None

    def to_json(self) -> dict[str, Any]:
        return attrs.asdict(self)


def run_one(task: Task, front: Front, settings: Settings, index: int) -> Result:
    base = Path(tempfile.mkdtemp(prefix=f"evals-{task.name}-", dir=settings.work))
    try:
        return _run_in(base, task, front, settings, index)
    finally:
        if settings.keep is not None:
            target = settings.keep / f"{task.name}@{front}"
            shutil.rmtree(target, ignore_errors=True)
            shutil.copytree(base, target, symlinks=True)
        shutil.rmtree(base, ignore_errors=True)


def _run_in(base: Path, task: Task, front: Front, settings: Settings, index: int) -> Result:
    root = task.make(base / "repo")
    config = merged_config(settings.config, task.config)
    env = agent_env(base / "home", config=config, passed=settings.passed_env)
    go = via_run if front == "run" else via_serve
    if not settings.scripted:
        ran = go(task, root, env, settings.model, settings.timeout)
        return judged(task, front, settings.model or "(configured)", root, ran)
    model = ORACLE_MODELS[index % 2]
    with running_fake_llm({"turns": list(task.oracle(root))}) as server:
        env.update(
            ANTHROPIC_BASE_URL=server.anthropic_base_url,
            ANTHROPIC_API_KEY="evals-scripted",
            OPENAI_BASE_URL=server.openai_base_url,
            OPENAI_API_KEY="evals-scripted",
        )
        ran = go(task, root, env, model, settings.timeout)
        left = server.remaining_turns
    if left and ran.error is None:
        ran = attrs.evolve(ran, error=f"the oracle's script has {left} turns not played")
    return judged(task, front, model, root, ran)


def judged(task: Task, front: Front, model: str, root: Path, ran: Ran) -> Result:
    transcript = ran.transcript
    outcome = Outcome(workspace=root, answer=transcript.answer, tool_calls=transcript.tool_calls)
    verdict = task.check(task, outcome)
    usage = transcript.usage
    return Result(
        task=task.name,
        category=task.category,
        front=front,
        model=model,
        solved=verdict.solved and (ran.error is None),
        reason=verdict.reason if ran.error is None else f"{ran.error}; {verdict.reason}",
        steps=transcript.steps,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        cached_tokens=usage.cached_tokens,
        cost=usage.cost,
        wall_s=round(ran.wall_s, 3),
        error=ran.error,
    )


def run_all(tasks: Sequence[Task], settings: Settings, *, serve: bool = True) -> list[Result]:
    """Every task through ``run``, then the serve set through ``serve``, in that order."""
    jobs: list[tuple[Task, Front]] = [(task, "run") for task in tasks]
    if serve:
        jobs += [(task, "serve") for task in tasks if task.serve]
    with ThreadPoolExecutor(max_workers=max(1, settings.jobs)) as pool:
        futures = [
            pool.submit(run_one, task, front, settings, index)
            for index, (task, front) in enumerate(jobs)
        ]
        return [future.result() for future in futures]
