"""``python -m evals``: the tasks through the real agent, each judged by its hidden checker.

With a model (``--model anthropic/claude-sonnet-4-5``, or a local OpenAI-compatible server
through ``OPENAI_BASE_URL`` or ``--config``) it measures that model with our prompts and
tools. ``--scripted`` plays each task's oracle through the fake model instead: it proves the
harness end to end, and that every task is solvable with the agent's tools.
"""

from __future__ import annotations

import argparse
import fnmatch
import json
import shlex
import sys
from pathlib import Path
from typing import Any

from evals import report
from evals.suite import Settings, run_all
from evals.tasks import TASKS


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m evals", description=__doc__.splitlines()[0])
    parser.add_argument("--model", help="provider/model (default: what --config names)")
    parser.add_argument("--scripted", action="store_true", help="oracle trajectories, fake model")
    parser.add_argument("--config", type=Path, help="a user config file (providers, model)")
    parser.add_argument(
        "--env", action="append", default=[], metavar="NAME", help="pass NAME to the agent too"
    )
    parser.add_argument("--tasks", default="*", help="a glob over task names (default: all)")
    parser.add_argument("--no-serve", action="store_true", help="skip the serve task set")
    parser.add_argument("--jobs", type=int, default=1, help="tasks run at once (default 1)")
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds per task")
    parser.add_argument("--out", type=Path, default=Path("evals-results"), help="report folder")
    parser.add_argument("--keep", type=Path, help="keep each task's folder under this path")
    parser.add_argument("--list", action="store_true", help="list the tasks and exit")
    args = parser.parse_args(argv)
    if not args.scripted and args.model is None and args.config is None and not args.list:
        parser.error("name a model (--model or --config), or use --scripted")
    if args.jobs < 1:
        parser.error("--jobs must be at least 1")
    return args


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parse(argv)
    tasks = [task for task in TASKS if fnmatch.fnmatch(task.name, args.tasks)]
    if args.list:
        for task in TASKS:
            front = "run, serve" if task.serve else "run"
            print(f"{task.name:28} {task.category} ({front})")
        return 0
    if not tasks:
        print(f"no task matches {args.tasks!r}", file=sys.stderr)
        return 2
    config: dict[str, Any] = json.loads(args.config.read_text()) if args.config else {}
    settings = Settings(
        model=args.model,
        scripted=args.scripted,
        config=config,
        passed_env=tuple(args.env),
        timeout=args.timeout,
        jobs=args.jobs,
        keep=args.keep,
    )
    results = run_all(tasks, settings, serve=not args.no_serve)
    doc = report.write(results, args.out, shlex.join(["python", "-m", "evals", *argv]))
    print(report.table(results))
    print(f"\n{report.summary(results)}; written: {doc}")
    return 0 if not args.scripted or all(r.solved for r in results) else 1


if __name__ == "__main__":
    raise SystemExit(main())
