"""What snapshots cost per step: ``GitShadowSnapshots.track`` on a generated git repository.

Generates a repository of ``--files`` files (``--size-mb`` in all, spread over 10 × 25
folders, one commit), then times ``track()`` — the call made at every step boundary — as the
agent sees it (thread hop included):

- first: the first snapshot of the folder (creates the shadow repository);
- unchanged: nothing changed since the last snapshot;
- N changed: ``--changed`` files edited (a line appended) before each snapshot.

Each is measured twice: with the project's objects packed (as after a clone or ``git gc``) and
loose (right after the generating commit). For scale, it also times the machine's floor: one
``git version`` process, ``lstat`` of every file from Python, creating 30 small files (a
changed step writes about 3 per changed file: a blob, and trees up its folders), and the plain
``git add -A . && git write-tree`` with the same shadow index.

    python bench/snapshot.py [--files 5000] [--size-mb 20] [--steps 30] [--changed 10] [--dir D]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from lsp_agent.snapshots import GitShadowSnapshots
from lsp_agent.snapshots.layout import shadow_dir

_GIT_ENV = {
    "GIT_AUTHOR_NAME": "bench",
    "GIT_AUTHOR_EMAIL": "bench@example.invalid",
    "GIT_COMMITTER_NAME": "bench",
    "GIT_COMMITTER_EMAIL": "bench@example.invalid",
}
_WORDS = [f"w{i:03x}" for i in range(512)]


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def generate(root: Path, files: int, size_mb: float, *, packed: bool) -> list[Path]:
    """A committed repository of ``files`` text files, ``size_mb`` MiB in all."""
    rnd = random.Random(7)
    per_file = int(size_mb * 1024 * 1024 / files)
    paths = []
    for i in range(files):
        folder = root / f"pkg{i % 10}" / f"mod{(i // 10) % 25}"
        folder.mkdir(parents=True, exist_ok=True)
        lines, size = [], 0
        while size < per_file:
            line = " ".join(rnd.choice(_WORDS) for _ in range(10)) + "\n"
            lines.append(line)
            size += len(line)
        path = folder / f"file_{i}.py"
        path.write_text("".join(lines)[:per_file])
        paths.append(path)
    (root / ".gitignore").write_text("*.log\nbuild/\n")
    env = {**os.environ, **_GIT_ENV}
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "generated"]):
        subprocess.run(["git", *args], cwd=root, env=env, check=True)
    if packed:
        subprocess.run(["git", "gc", "-q"], cwd=root, env=env, check=True)
    return paths


async def timed(action: Callable[[], Awaitable[object]]) -> float:
    start = time.perf_counter()
    await action()
    return (time.perf_counter() - start) * 1000


def edit(paths: list[Path], rnd: random.Random, count: int, step: int) -> None:
    for path in rnd.sample(paths, count):
        with open(path, "a") as f:
            f.write(f"# step {step}\n")


def floor_numbers(
    workspace: Path, paths: list[Path], git_dir: Path, steps: int
) -> dict[str, float]:
    """The machine's floor: spawning git, and stat-ing every file once."""
    spawn, stats, plain, creates = [], [], [], []
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith("GIT_")},
        "GIT_DIR": str(git_dir),
        "GIT_WORK_TREE": str(workspace),
        "GIT_INDEX_FILE": str(git_dir / "index"),
        "GIT_OPTIONAL_LOCKS": "0",
    }
    for _ in range(steps):
        start = time.perf_counter()
        subprocess.run(["git", "version"], capture_output=True, check=True)
        spawn.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        for path in paths:
            os.lstat(path)
        stats.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        subprocess.run(["git", "add", "-A", "."], cwd=workspace, env=env, check=True)
        subprocess.run(
            ["git", "write-tree"], cwd=workspace, env=env, check=True, capture_output=True
        )
        plain.append((time.perf_counter() - start) * 1000)
        with tempfile.TemporaryDirectory(dir=git_dir.parent) as scratch:
            start = time.perf_counter()
            for i in range(30):
                Path(scratch, f"f{i}").write_bytes(b"x" * 100)
            creates.append((time.perf_counter() - start) * 1000)
    return {
        "create 30 small files": statistics.median(creates),
        "git version (one process)": statistics.median(spawn),
        "lstat of every file (Python)": statistics.median(stats),
        "plain add -A . + write-tree": statistics.median(plain),
    }


async def scenario(base: Path, args: argparse.Namespace, *, packed: bool) -> None:
    workspace = base / ("packed" if packed else "loose")
    workspace.mkdir()
    paths = generate(workspace, args.files, args.size_mb, packed=packed)
    data_dir = base / f"data-{workspace.name}"
    store = GitShadowSnapshots(data_dir)
    rnd = random.Random(11)

    first = await timed(lambda: store.track(workspace))
    await store.track(workspace)
    unchanged = [await timed(lambda: store.track(workspace)) for _ in range(args.steps)]
    changed = []
    trees = set()
    for step in range(args.steps):
        edit(paths, rnd, args.changed, step)
        start = time.perf_counter()
        trees.add(await store.track(workspace))
        changed.append((time.perf_counter() - start) * 1000)
    assert len(trees) == args.steps, "every edited step must give a new tree"
    floor = floor_numbers(workspace, paths, shadow_dir(data_dir, workspace.resolve()), args.steps)

    label = "project objects packed" if packed else "project objects loose"
    print(f"\n{label}: {len(paths)} files, {args.size_mb:g} MiB, {args.steps} steps each")
    print(f"  {'first track (creates the shadow)':34} {first:8.1f} ms")
    for name, values in (("unchanged", unchanged), (f"{args.changed} files changed", changed)):
        med, p95 = statistics.median(values), percentile(values, 0.95)
        print(f"  {'track, ' + name:34} median {med:6.1f} ms   p95 {p95:6.1f} ms")
    for name, value in floor.items():
        print(f"  {name:34} median {value:6.1f} ms")


async def run(args: argparse.Namespace, base: Path) -> None:
    for packed in (True, False):
        await scenario(base, args, packed=packed)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--size-mb", type=float, default=20.0)
    parser.add_argument("--steps", type=int, default=30)
    parser.add_argument("--changed", type=int, default=10)
    parser.add_argument("--dir", help="where to generate (default: the system's temp folder)")
    parser.add_argument("--keep", action="store_true", help="keep the generated folders")
    args = parser.parse_args()
    git = subprocess.run(["git", "version"], capture_output=True, text=True, check=True)
    print(f"{git.stdout.strip()}, Python {sys.version.split()[0]}, {os.cpu_count()} CPUs")
    print(f"folder: {args.dir or tempfile.gettempdir()}")
    if hasattr(os, "getloadavg"):
        print(f"load average at start: {os.getloadavg()[0]:.2f}")
    base = Path(tempfile.mkdtemp(prefix="lsp-agent-snapshot-bench-", dir=args.dir))
    try:
        asyncio.run(run(args, base))
    finally:
        if args.keep:
            print(f"\nkept {base}")
        else:
            shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    main()
