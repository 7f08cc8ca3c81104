"""``lsp-agent daemon status|stop`` (and ``serve``, which the first warm ``run`` starts)."""

from __future__ import annotations

import argparse
import os
from collections.abc import Callable, Mapping, Sequence
from typing import TextIO

from lsp_agent.daemon.choice import DEFAULT_IDLE_SECONDS


def add_daemon_parser(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    daemon = commands.add_parser(
        "daemon", help="the warm agent process that `run` drives: status, stop"
    )
    verbs = daemon.add_subparsers(dest="verb", metavar="VERB", required=True)
    verbs.add_parser("status", help="the warm processes running for you: pid, socket, log")
    verbs.add_parser("stop", help="stop them (a run in progress finishes first)")
    serve = verbs.add_parser("serve", help="be the warm process (the first `run` starts it)")
    serve.add_argument("--idle-seconds", type=int, default=DEFAULT_IDLE_SECONDS, metavar="N")


def run_daemon(
    args: argparse.Namespace,
    *,
    env: Mapping[str, str],
    run_main: Callable[[Sequence[str]], int],
    out: TextIO,
    err: TextIO,
) -> int:
    from lsp_agent.daemon.paths import UnsafeFolder, daemon_paths, private_folder

    try:
        if args.verb == "serve":
            from lsp_agent.daemon.server import serve

            if args.idle_seconds < 1:
                err.write("--idle-seconds must be at least 1\n")
                return 2
            return serve(daemon_paths(env), idle_seconds=args.idle_seconds, run_main=run_main)
        folder = private_folder(env)
    except UnsafeFolder as error:
        err.write(f"error: {error}\n")
        return 1
    return _each(folder, args.verb, out)


def _each(folder: str, verb: str, out: TextIO) -> int:
    from lsp_agent.daemon.client import request

    found = 0
    for name in sorted(os.listdir(folder)):
        if not name.endswith(".sock"):
            continue
        reply = request(os.path.join(folder, name), {"op": verb})
        if reply is None:
            continue
        found += 1
        if verb == "stop":
            runs = int(reply.get("runs", 0))
            after = f" after its {runs} run(s) in progress" if runs else ""
            out.write(f"stopping pid {reply.get('pid')}{after}\n")
            continue
        exits = reply.get("exits_in")
        state = (
            f"{reply.get('runs')} run(s) in progress"
            if exits is None
            else (f"idle, exits in {exits}s")
        )
        out.write(
            f"pid {reply.get('pid')} · version {reply.get('version')} · {state}\n"
            f"  socket {reply.get('socket')}\n  log    {reply.get('log')}\n"
        )
    if not found:
        out.write("no warm lsp-agent process is running\n")
    return 0
