"""Run one command as a measured process tree: start time, wall, CPU and peak RSS.

Run as ``python -m bench.measured OUT.json -- ARGV…``: a fresh process whose only children
are the command's tree, so ``RUSAGE_CHILDREN`` is that tree's CPU and the peak RSS of its
largest process (opencode's launcher starts its binary as a child; ``wait4`` on the launcher
alone would miss it). The time is taken just before the spawn, on CLOCK_MONOTONIC, which
compares with the fake LLM's request times.
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

import attrs


@attrs.frozen(kw_only=True)
class Measured:
    started: float
    wall_s: float
    cpu_s: float
    peak_rss_mib: float
    returncode: int
    stderr_tail: str


def run_measured(
    argv: list[str], *, cwd: Path, env: dict[str, str], out: Path, timeout: float
) -> Measured:
    """Run ``argv`` under this module in a fresh interpreter; its figures."""
    wrapper = [sys.executable, "-m", "bench.measured", str(out), "--", *argv]
    root = str(Path(__file__).resolve().parents[1])
    # A PYTHONPATH of the caller's (another checkout's agent) stays first.
    wrapper_env = {
        **env,
        "PYTHONPATH": os.pathsep.join(p for p in (env.get("PYTHONPATH"), root) if p),
    }
    done = subprocess.run(
        wrapper, cwd=cwd, env=wrapper_env, capture_output=True, text=True, timeout=timeout
    )
    if done.returncode != 0 or not out.exists():
        raise RuntimeError(f"measuring {argv[0]} failed ({done.returncode}): {done.stderr[-2000:]}")
    return Measured(**json.loads(out.read_text()))


def main(argv: list[str]) -> int:
    out, rest = Path(argv[0]), argv[2:]
    started = time.monotonic()
    proc = subprocess.Popen(rest, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)  # fmt: skip
    _, stderr = proc.communicate()
    wall = time.monotonic() - started
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = Measured(
        started=started,
        wall_s=wall,
        cpu_s=usage.ru_utime + usage.ru_stime,
        peak_rss_mib=usage.ru_maxrss / 1024,
        returncode=proc.returncode,
        stderr_tail=stderr.decode(errors="replace")[-2000:],
    )
    out.write_text(json.dumps(attrs.asdict(result)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
