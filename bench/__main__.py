"""``python -m bench``: the scripted task through ``run``, ``serve`` and opencode, side by side.

Writes ``docs/benchmarks.md`` (the table, the floors, the extras) and ``docs/benchmarks.png``
(with the ``bench`` extra's matplotlib), and the raw samples as ``benchmarks.json`` beside
them. ``--quick``: one run, no warm-up, ours only, the small repository — to check the
harness, not to quote. ``--long``: long sessions instead (``bench/long.py``): the overhead per
step along sessions of 10…1,000 steps in ``run`` and ``serve``, its own section and chart.
``--completion``: inline completion during a scripted typing session (``bench/completion.py``),
its own section.
``--startup``: start and stop beside Claude Code and opencode (``bench/startup.py``): cold and
warm ``run``, 5 runs each by default, its own section and chart; ``--no-peers`` runs ours alone.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import sys
from pathlib import Path

from bench import completion, long, long_report, report, startup, startup_report
from bench.runner import Settings, run_bench

ROOT = Path(__file__).resolve().parents[1]


def parse(argv: list[str]) -> tuple[argparse.Namespace, Settings]:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, help="counted runs (default 10; --startup: 5)")
    parser.add_argument("--warmup", type=int, default=1, help="runs thrown away first")
    parser.add_argument("--quick", action="store_true", help="1 run, ours only, small repo")
    parser.add_argument("--no-opencode", action="store_true")
    parser.add_argument("--no-large", action="store_true", help="skip the 5,000-file repo")
    parser.add_argument("--out", type=Path, default=ROOT / "docs", help="where the report goes")
    cache = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "lsp-agent-bench"
    parser.add_argument("--cache", type=Path, default=cache,
                        help="the npm installs of opencode and Claude Code")  # fmt: skip
    parser.add_argument("--long", action="store_true", help="long sessions (bench/long.py)")
    parser.add_argument("--completion", action="store_true",
                        help="inline completion while typing (bench/completion.py)")  # fmt: skip
    parser.add_argument("--steps", default="10,100,400,800,1000",
                        help="--long: session sizes, comma-separated")  # fmt: skip
    parser.add_argument("--provider", choices=sorted(long.MODELS), default="anthropic",
                        help="--long: the provider the sessions use")  # fmt: skip
    parser.add_argument("--baseline", type=Path,
                        help="--long: also measure this checkout's agent")  # fmt: skip
    parser.add_argument(
        "--startup",
        action="store_true",
        help="start and stop beside Claude Code and opencode (bench/startup.py)",
    )
    parser.add_argument("--no-peers", action="store_true",
                        help="--startup: lsp-agent alone, no peers")  # fmt: skip
    args = parser.parse_args(argv)
    if (args.runs is not None and args.runs < 1) or args.warmup < 0:
        parser.error("--runs must be at least 1 and --warmup at least 0")
    quick = args.quick
    settings = Settings(
        runs=1 if quick else (args.runs or 10),
        warmup=0 if quick else args.warmup,
        opencode=not (quick or args.no_opencode),
        large=not (quick or args.no_large),
        large_files=5000,
        large_mb=20.0,
        relay_deltas=200 if quick else 2000,
        session_events=10_000,
        cache=args.cache,
    )
    return args, settings


def command_line(argv: list[str]) -> str:
    return shlex.join(["python -m bench", *argv]).replace("'python -m bench'", "python -m bench")


def main_long(args: argparse.Namespace, argv: list[str]) -> int:
    try:
        steps = tuple(int(n) for n in ("10,40" if args.quick else args.steps).split(","))
    except ValueError:
        raise SystemExit("--steps takes sizes like 10,100,800") from None
    if any(n < 1 for n in steps):
        raise SystemExit("--steps: every size must be at least 1")
    sessions = asyncio.run(
        long.run_long(long.Settings(steps=steps, provider=args.provider, baseline=args.baseline))
    )
    doc = long_report.write(sessions, args.out, command_line(argv))
    raw = {"sessions": [s.to_json() for s in sessions]}
    (args.out / "benchmarks-long.json").write_text(json.dumps(raw, indent=1) + "\n")
    print("\n".join(long_report.table(sessions)))
    print(f"\nwritten: {doc}")
    return 0


def main_startup(args: argparse.Namespace, argv: list[str]) -> int:
    settings = startup.StartupSettings(
        runs=1 if args.quick else (args.runs or 5),
        warmup=0 if args.quick else args.warmup,
        peers=not (args.quick or args.no_peers),
        cache=args.cache,
    )
    results = asyncio.run(startup.run_startup(settings))
    doc = startup_report.write(results, args.out, command_line(argv))
    (args.out / "benchmarks-startup.json").write_text(
        json.dumps(results.to_json(), indent=1) + "\n"
    )
    print(doc.read_text().split(startup_report.START, 1)[1].split(startup_report.END, 1)[0].strip())
    print(f"\nwritten: {doc}")
    return 0


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args, settings = parse(argv)
    if args.long:
        return main_long(args, argv)
    if args.completion:
        result = asyncio.run(completion.run(words=24 if args.quick else 120))
        doc = completion.write(result, args.out, command_line(argv))
        print("\n".join(completion.table(result)))
        print(f"\nwritten: {doc}")
        return 0
    if args.startup:
        return main_startup(args, argv)
    results = asyncio.run(run_bench(settings))
    doc = report.write(results, args.out, command_line(argv))
    (args.out / "benchmarks.json").write_text(json.dumps(results.to_json(), indent=1) + "\n")
    print(doc.read_text().split(report.START, 1)[1].split(report.END, 1)[0].strip())
    print(f"\nwritten: {doc}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
