"""The two ways a task reaches the agent: ``lsp-agent run`` (a fresh process, ``--yes``
answering its asks as a user at the terminal would) and ``lsp-agent serve`` driven by the
scripted editor (allow once for each ask, buffers for ``open_files``)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import attrs

from evals.task import Task
from evals.updates import Transcript, read_updates


@attrs.frozen(kw_only=True)
class Ran:
    transcript: Transcript
    wall_s: float
    error: str | None = None
    """Why the run did not finish normally (the checker still judges what it left)."""


def via_run(task: Task, root: Path, env: dict[str, str], model: str | None, timeout: float) -> Ran:
    argv = [sys.executable, "-m", "lsp_agent", "run", "--json", "--yes", "--mode", task.mode]
    if model is not None:
        argv += ["--model", model]
    argv.append(task.prompt)
    begun = time.monotonic()
    try:
        done = subprocess.run(
            argv, cwd=root, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired as stopped:
        out = stopped.stdout.decode() if isinstance(stopped.stdout, bytes) else ""
        return Ran(
            transcript=read_updates(_lines(out)),
            wall_s=time.monotonic() - begun,
            error=f"timed out after {timeout:.0f} s",
        )
    wall = time.monotonic() - begun
    error = None
    if done.returncode != 0:
        tail = done.stderr.strip().splitlines()[-1:] or [""]
        error = f"lsp-agent run exited {done.returncode}: {tail[0][:300]}"
    return Ran(transcript=read_updates(_lines(done.stdout)), wall_s=wall, error=error)


def _lines(text: str) -> list[dict[str, Any]]:
    out = []
    for line in text.splitlines():
        try:
            value = json.loads(line)
        except json.JSONDecodeError:
            continue
        if isinstance(value, dict):
            out.append(value)
    return out


def via_serve(
    task: Task, root: Path, env: dict[str, str], model: str | None, timeout: float
) -> Ran:
    return asyncio.run(_serve(task, root, env, model, timeout))


async def _serve(
    task: Task, root: Path, env: dict[str, str], model: str | None, timeout: float
) -> Ran:
    repo = str(Path(__file__).resolve().parents[1])  # tests.support, as bench imports it
    if repo not in sys.path:
        sys.path.insert(0, repo)
    from tests.support.lsp_client import agent_client, allow_once

    if model is not None:
        env = {**env, "LSP_AGENT_MODEL": model}
    begun = time.monotonic()
    async with agent_client(env=env, folders=[root]) as client:
        for rel in task.open_files:
            client.open(root / rel, (root / rel).read_text())
        client.permission_answers.extend(allow_once() for _ in range(200))
        for rel, line, message in task.diagnostics:
            place = {"line": line - 1, "character": 0}
            client.publish_diagnostics(
                (root / rel).as_uri(),
                [{"range": {"start": place, "end": place}, "severity": 1,
                  "source": "evals", "message": message}],
            )  # fmt: skip
        session = await client.new_session(mode=task.mode, **({"model": model} if model else {}))
        await client.prompt(session, task.prompt)
        error = None
        try:
            await client.wait_idle(session, timeout)
        except TimeoutError:
            error = f"timed out after {timeout:.0f} s"
        for rel in task.open_files:  # the user saves what the agent changed in the buffers
            (root / rel).write_text(client.documents[(root / rel).as_uri()].text)
        transcript = read_updates(client.session_updates(session))
    return Ran(transcript=transcript, wall_s=time.monotonic() - begun, error=error)
