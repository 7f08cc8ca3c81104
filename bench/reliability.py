"""Regenerate the figures of docs/reliability.md: the load run and the fault suite's time.

Runs bench/load.py (20 sessions x 20 steps on one ``lsp-agent serve``), then the fault suite
(``pytest tests/reliability``, the load test excluded) with its wall time, and rewrites the
part of docs/reliability.md between the ``figures`` markers. Nothing is asserted here.

    python bench/reliability.py [--no-suite] [--doc docs/reliability.md]
"""

from __future__ import annotations

import argparse
import asyncio
import datetime
import importlib.util
import os
import platform
import re
import resource
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DOC = ROOT / "docs" / "reliability.md"
START, END = "<!-- figures:start -->", "<!-- figures:end -->"


def _load() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_load", ROOT / "bench" / "load.py")
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def suite_time() -> tuple[float, float, str]:
    """Wall time and CPU time (its processes, all of them) of the fault suite, and pytest's
    summary line. The CPU time says what the suite costs whatever else the machine runs."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.monotonic()
    suite = ["tests/reliability", "--ignore", "tests/reliability/test_load.py"]
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", *suite],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    elapsed = time.monotonic() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return elapsed, cpu, lines[-1] if lines else f"pytest exited with {done.returncode}"


def section(load: dict[str, Any], suite: tuple[float, float, str] | None, busy: float) -> str:
    when = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d")
    machine = (
        f"{os.cpu_count()} cores (load average {busy:.1f} at the start), {platform.system()}, "
        f"Python {platform.python_version()}"
    )
    rows = [
        START,
        f"Measured {when} on {machine} (`python bench/reliability.py`).",
        "",
        "| Figure | Value |",
        "|---|---|",
        f"| load: sessions x steps | {load['sessions']} x {load['steps']} |",
        f"| load: model requests / updates | {load['model_requests']} / {load['updates']} |",
        f"| load: wall time | {load['wall_seconds']} s |",
        f"| load: update latency p50 | {load['p50_ms']} ms |",
        f"| load: update latency p90 | {load['p90_ms']} ms |",
        f"| load: update latency p99 | {load['p99_ms']} ms |",
        f"| load: update latency max | {load['max_ms']} ms |",
    ]
    if suite is not None:
        elapsed, cpu, summary = suite
        rows.append(f"| fault suite (`tests/reliability`, load excluded): result | {summary} |")
        rows.append(f"| fault suite: wall time / CPU time | {elapsed:.0f} s / {cpu:.0f} s |")
    rows.append(END)
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--no-suite", action="store_true", help="skip timing the fault suite")
    parser.add_argument("--doc", type=Path, default=DOC)
    args = parser.parse_args(argv)
    busy = os.getloadavg()[0]
    bench = _load()
    result = asyncio.run(bench.run(20, 20, 300.0))
    load = bench.figures(result, 20, 20)
    suite = None if args.no_suite else suite_time()
    text = args.doc.read_text()
    pattern = re.compile(re.escape(START) + ".*?" + re.escape(END), re.DOTALL)
    if not pattern.search(text):
        raise SystemExit(f"{args.doc} has no {START} … {END} section")
    new = section(load, suite, busy)
    args.doc.write_text(pattern.sub(lambda _: new, text))
    print(new)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
