"""The ``lsp-agent`` command line (contract.md "Command line").

Exit status: 0 ok; 1 failed (one line on stderr says why); 2 bad usage, invalid config or
unknown session; 3 the step limit ended the turn; 130 interrupted.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, TextIO

from lsp_agent import __version__
from lsp_agent.core.errors import ConfigError, LspAgentError, SessionNotFound

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MAX_STEPS, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="lsp-agent", description=__doc__.splitlines()[0])
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="one headless turn in the current directory")
    run.add_argument("prompt", metavar="PROMPT")
    run.add_argument("--model", help="PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5")
    run.add_argument("--mode", choices=("build", "plan"))
    run.add_argument("--cwd", help="the workspace folder (default: the current directory)")
    run.add_argument("--session", metavar="ID", help="continue this session")
    run.add_argument("--yes", action="store_true", help='approve "ask" decisions')
    run.add_argument("--json", action="store_true", help="session updates as JSON lines")
    run.add_argument("--max-steps", type=int, metavar="N")

    sessions = commands.add_parser("sessions", help="list and inspect sessions")
    verbs = sessions.add_subparsers(dest="verb", metavar="VERB", required=True)
    listing = verbs.add_parser("list", help="this workspace's sessions")
    listing.add_argument("--all", action="store_true", help="every workspace")
    listing.add_argument("--json", action="store_true")
    show = verbs.add_parser("show", help="one session's messages")
    show.add_argument("id", metavar="ID")
    show.add_argument("--json", action="store_true")
    history = verbs.add_parser("history", help="the raw event log")
    history.add_argument("id", metavar="ID")
    history.add_argument("--json", action="store_true")
    export = verbs.add_parser("export", help="the session as Markdown or JSON")
    export.add_argument("id", metavar="ID")
    export.add_argument("--format", choices=("markdown", "json"), default="markdown")
    compact = verbs.add_parser("compact", help="summarize the older part of a session now")
    compact.add_argument("id", metavar="ID")
    revert = verbs.add_parser("revert", help="take files (and messages) back to before a message")
    revert.add_argument("id", metavar="ID")
    what = revert.add_mutually_exclusive_group(required=True)
    what.add_argument("--message", metavar="MID", help="stage a revert to before this message")
    what.add_argument("--clear", action="store_true", help="undo the staged revert")
    what.add_argument("--commit", action="store_true", help="make the staged revert final")
    revert.add_argument("--force", action="store_true", help="also restore files you changed")

    serve = commands.add_parser("serve", help="the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen for one client on TCP")

    commands.add_parser("doctor", help="what is installed and configured, what is missing")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_:
        return int(exit_.code or 0)
    env = dict(os.environ)
    if args.command is None:
        parser.print_help(sys.stderr)
        return EXIT_USAGE
    if args.command == "run":
        return _run_with_interrupt(args, env)
    if args.command == "serve":
        return _serve(args, env)
    if args.command == "sessions" and args.verb in ("compact", "revert"):
        return asyncio.run(_with_agent(args, env, sys.stdout, sys.stderr))
    if args.command == "sessions":
        return asyncio.run(_sessions(args, env, sys.stdout, sys.stderr))
    from lsp_agent.doctor import run_doctor

    return asyncio.run(run_doctor(env=env, cwd=Path.cwd(), out=sys.stdout))


# -- run ------------------------------------------------------------------------------


def _run_with_interrupt(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Run the turn; SIGINT cancels it so the log ends consistently, then exit 130."""

    async def runner() -> int:
        task = asyncio.ensure_future(_run(args, env, sys.stdout, sys.stderr))
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            sys.stderr.write("interrupted\n")
            return EXIT_INTERRUPTED
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            # The turn is over and recorded; a late second Ctrl-C must not kill the exit.
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    return asyncio.run(runner())


async def _run(args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO) -> int:
    from lsp_agent.app import build_app, open_data_store
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.settings import load_settings, resolve_model

    workspace = Path(os.path.realpath(args.cwd or os.getcwd()))
    if not workspace.is_dir():
        return _fail(err, f"not a folder: {workspace}", EXIT_USAGE)
    if args.max_steps is not None and args.max_steps < 1:
        return _fail(err, "--max-steps must be at least 1", EXIT_USAGE)
    overrides = {
        k: v
        for k, v in {"model": args.model, "mode": args.mode, "max_steps": args.max_steps}.items()
        if v is not None
    }
    try:
        settings = load_settings(workspace=workspace, env=env, cli_overrides=overrides)
        model = resolve_model(settings)
    except ConfigError as error:
        return _fail(err, str(error), _config_exit(error))
    store = await open_data_store(env)
    try:
        if args.session is not None and await store.session(args.session) is None:
            return _fail(err, f"unknown session: {args.session}", EXIT_USAGE)
        editor = TerminalEditor(
            stdout=out,
            stderr=err,
            json_lines=args.json,
            approve_asks=args.yes,
            read_line=sys.stdin.readline if _interactive() else None,
        )
        app = await build_app(
            settings=settings, model=model, env=env, editor=editor, workspace=workspace, store=store
        )
        session_id = args.session or await app.sessions.create(workspace_folder=str(workspace))
        editor.focus(session_id)
        await app.sessions.admit(session_id, [{"type": "text", "text": args.prompt}])
        try:
            outcome = await app.sessions.run_turn(session_id, mode=args.mode, model=args.model)
        finally:
            await app.sessions.drain(timeout=2.0)
    finally:
        await store.close()
    if outcome.stop_reason == "error":
        return _fail(err, f"error: {outcome.error}", EXIT_FAILED)
    if outcome.stop_reason == "max_steps":
        err.write(f"stopped: the step limit ({outcome.steps}) was reached\n")
        return EXIT_MAX_STEPS
    if outcome.stop_reason == "refusal":
        return _fail(err, "the model refused to answer", EXIT_FAILED)
    if outcome.stop_reason == "cancelled":
        err.write("stopped: a tool call was rejected\n")
    return EXIT_OK


def _serve(args: argparse.Namespace, env: dict[str, str]) -> int:
    """The language server. stdout carries LSP, so logs go to stderr (``LSP_AGENT_LOG``
    sets the level, default WARNING)."""
    import logging

    tcp = None
    if args.tcp:
        host, sep, port = args.tcp.rpartition(":")
        if not sep or not host or not port.isdigit() or not 0 < int(port) < 65536:
            return _fail(sys.stderr, f"--tcp expects HOST:PORT, got {args.tcp!r}", EXIT_USAGE)
        tcp = (host.strip("[]"), int(port))
    level = env.get("LSP_AGENT_LOG", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from lsp_agent.lsp import serve

    return serve(env, tcp=tcp)


def _interactive() -> bool:
    """Asks go to a person only when stdin is a terminal (never in CI or a pipe)."""
    try:
        return sys.stdin is not None and sys.stdin.isatty()
    except (AttributeError, ValueError):
        return False


async def _with_agent(
    args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    """``sessions compact|revert ID``: commands that need the whole agent (model, snapshots)."""
    from lsp_agent.app import build_app, open_data_store
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.settings import load_settings, resolve_model

    workspace = Path(os.path.realpath(os.getcwd()))
    store = await open_data_store(env)
    try:
        info = await store.session(args.id)
        if info is None:
            return _fail(err, f"unknown session: {args.id}", EXIT_USAGE)
        try:
            settings = load_settings(workspace=workspace, env=env)
            model = resolve_model(settings, info.model)
        except ConfigError as error:
            return _fail(err, str(error), _config_exit(error))
        editor = TerminalEditor(stdout=out, stderr=err)
        app = await build_app(
            settings=settings, model=model, env=env, editor=editor, workspace=workspace, store=store
        )
        if info.state != "idle":
            return _fail(err, f"session {args.id} is {info.state}; try again when idle", 1)
        if args.verb == "compact":
            done = await app.sessions.compact(args.id)
            out.write("compacted\n" if done else "nothing old enough to compact\n")
            return EXIT_OK
        return await _revert(app.sessions, args, out, err)
    finally:
        await store.close()


async def _revert(sessions: Any, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    if args.clear:
        await sessions.revert_clear(args.id)
        out.write("revert cleared\n")
        return EXIT_OK
    if args.commit:
        dropped = await sessions.revert_commit(args.id)
        out.write(f"revert committed; {len(dropped)} messages dropped\n")
        return EXIT_OK
    try:
        result = await sessions.revert_stage(args.id, args.message, force=args.force)
    except LspAgentError as error:
        return _fail(err, str(error), EXIT_FAILED)
    for path in result.files:
        mark = "conflict (left as you changed it)" if path in result.conflicts else "restored"
        out.write(f"{mark}: {path}\n")
    out.write("revert staged (undo with --clear, make final with --commit)\n")
    if result.conflicts:
        err.write(
            f"{len(result.conflicts)} file(s) changed since the agent's step were left alone; "
            "use --force to restore them too\n"
        )
    return EXIT_OK


def _config_exit(error: ConfigError) -> int:
    """A missing model is a failed run (set a variable); a broken config is bad usage."""
    from lsp_agent.settings import ModelNotConfigured

    return EXIT_FAILED if isinstance(error, ModelNotConfigured) else EXIT_USAGE


def _fail(err: TextIO, message: str, code: int) -> int:
    err.write(message.rstrip() + "\n")
    return code


# -- sessions -------------------------------------------------------------------------


async def _sessions(
    args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    from lsp_agent.app import open_data_store

    store = await open_data_store(env)
    try:
        if args.verb == "list":
            return await _list(store, args, out)
        if args.verb == "history":
            return await _history(store, args, out)
        if args.verb == "export":
            return await _export(store, args, out)
        return await _show(store, args, out)
    except SessionNotFound as error:
        return _fail(err, str(error), EXIT_USAGE)
    except LspAgentError as error:
        return _fail(err, str(error), EXIT_FAILED)
    finally:
        await store.close()


async def _list(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    folder = None if args.all else Path(os.path.realpath(os.getcwd())).as_uri()
    infos = await store.list_sessions(workspace_folder=folder)
    if args.json:
        _print_json(out, {"sessions": [info.to_json() for info in infos]})
        return EXIT_OK
    for info in infos:
        title = info.title or "(untitled)"
        out.write(f"{info.session_id}  {info.updated_at}  {info.state:<8}  {title}\n")
    return EXIT_OK


async def _show(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    info = await store.session(args.id)
    if info is None:
        raise SessionNotFound(args.id)
    from lsp_agent.core.checkpoints import hidden_messages

    hidden = hidden_messages(await store.events(args.id))
    transcript = [m for m in await store.transcript(args.id) if m.message_id not in hidden]
    if args.json:
        messages = [message.to_json() for message in transcript]
        _print_json(out, {"session": info.to_json(), "messages": messages})
        return EXIT_OK
    out.write(f"# {info.title or '(untitled)'}\n{info.session_id} · {info.workspace_folder}\n")
    for message in transcript:
        out.write(f"\n## {message.role} ({message.status})\n")
        for part in message.to_json()["parts"]:
            if part["type"] == "tool_call":
                out.write(f"[{part['toolName']} {part['status']}] {json.dumps(part['input'])}\n")
            elif part["type"] == "reasoning":
                out.write(f"(thinking) {part['text'].rstrip()}\n")
            else:
                out.write(part["text"].rstrip() + "\n")
    return EXIT_OK


async def _history(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    if await store.session(args.id) is None:
        raise SessionNotFound(args.id)
    events = await store.events(args.id)
    if args.json:
        _print_json(out, {"events": [event.to_json() for event in events]})
        return EXIT_OK
    for event in events:
        data = json.dumps(event.data, ensure_ascii=False)
        out.write(f"{event.seq:>6}  {event.time}  {event.type:<26} {data}\n")
    return EXIT_OK


async def _export(store: Any, args: argparse.Namespace, out: TextIO) -> int:
    from lsp_agent.core.export import export_session

    info = await store.session(args.id)
    if info is None:
        raise SessionNotFound(args.id)
    transcript = await store.transcript(args.id)
    events = await store.events(args.id) if args.format == "json" else []
    out.write(export_session(info, transcript, events, args.format).rstrip("\n") + "\n")
    return EXIT_OK


def _print_json(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
