"""lsp-agent: a coding agent inside a language server, and in the terminal with "run".

Exit status (README "Exit status"): 0 ok; 1 failed (one line on stderr says why); 2 bad
usage, invalid config or unknown session; 3 the step limit ended the turn; 4 a permission
ask was refused, so what it asked for was not done; 5 ``--until``'s command still failed
when its bound was reached; 130 interrupted; 141 the reader of the output went away
(``closed_pipe``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn, TextIO, cast

from lsp_agent import __version__
from lsp_agent.auth.command import add_auth_parser, run_auth
from lsp_agent.commit_cli import add_commit_parser, run_commit_message
from lsp_agent.core.errors import ConfigError, InvalidParams, LspAgentError, SessionNotFound
from lsp_agent.daemon.command import add_daemon_parser, run_daemon
from lsp_agent.display import block, one_line
from lsp_agent.permissions_cli import add_permissions_parser, run_permissions
from lsp_agent.review_cli import add_review_parser, run_review
from lsp_agent.until_cli import add_until_arguments, until_goal, until_report, until_status

# Startup order (docs/architecture.md "Start and exit"): this module imports only what parsing the
# command line needs; asyncio, the runtime and the provider SDKs are imported by the command
# that uses them, so a command that ends early (or hands its work to another process) pays for
# none of them.
if TYPE_CHECKING:
    from lsp_agent.runtime.sessions import Sessions

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_MAX_STEPS, EXIT_REFUSED = 0, 1, 2, 3, 4
EXIT_INTERRUPTED = 130

_EPILOG = """exit status: 0 ok, 1 failed, 2 bad usage / invalid config / unknown session,
3 the step limit ended the turn, 4 a permission ask was refused, 5 --until's command
still failed at its bound, 130 interrupted,
141 the reader of the output went away (| head).
Sessions live in the data folder (`lsp-agent doctor` prints it; LSP_AGENT_DATA_DIR sets it)."""


def build_parser() -> argparse.ArgumentParser:
    from lsp_agent.core.modes import CLIENT_MODES  # here: the warm path never builds a parser

    parser = argparse.ArgumentParser(
        prog="lsp-agent",
        description=__doc__.splitlines()[0],
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument("--version", action="version", version=f"lsp-agent {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    run = commands.add_parser("run", help="one headless turn in the current directory")
    run.add_argument("prompt", metavar="PROMPT", help='the request; "-" reads it from stdin')
    run.add_argument(
        "--file",
        action="append",
        default=[],
        dest="files",
        metavar="PATH",
        help="attach a workspace file to the prompt (repeatable)",
    )
    run.add_argument("--model", help="PROVIDER/MODEL, e.g. anthropic/claude-sonnet-4-5")
    run.add_argument("--mode", choices=CLIENT_MODES)
    run.add_argument("--cwd", help="the workspace folder (default: the current directory)")
    which = run.add_mutually_exclusive_group()
    which.add_argument("--session", metavar="ID", help="continue this session")
    which.add_argument(
        "--continue",
        dest="continue_latest",
        action="store_true",
        help="continue the latest session in this folder",
    )
    run.add_argument("--yes", action="store_true", help='approve "ask" decisions')
    run.add_argument("--json", action="store_true", help="session updates as JSON lines")
    run.add_argument("--max-steps", type=int, metavar="N")
    add_until_arguments(run)
    run.add_argument(
        "--no-daemon", action="store_true", help="run in this process, not the warm one"
    )

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
    what.add_argument(
        "--message",
        metavar="MID",
        help="stage a revert to before this user message (an assistant message id: to"
        " before the user message it answered); ids are in `sessions show`",
    )
    what.add_argument(
        "--last", action="store_true", help="stage a revert to before the last prompt"
    )
    what.add_argument("--clear", action="store_true", help="undo the staged revert")
    what.add_argument("--commit", action="store_true", help="make the staged revert final")
    revert.add_argument("--force", action="store_true", help="also restore files you changed")
    revert.add_argument(
        "--scope",
        choices=("both", "code", "conversation"),
        default="both",
        help="with --message, what to take back: both (default) the files and the messages,"
        " code only the files (every message stays), conversation only the messages (no file"
        " is touched)",
    )
    delete = verbs.add_parser("delete", help="delete sessions for good (not one whose turn runs)")
    delete.add_argument("ids", nargs="+", metavar="ID")
    search = verbs.add_parser(
        "search",
        help="find messages: what was asked, answered, thought, or a tool's input or output",
        description='Every word must occur; "a phrase" in quotes; word* for a prefix.',
    )
    search.add_argument("query", metavar="TEXT")
    search.add_argument("--all", action="store_true", help="every workspace")
    search.add_argument("--limit", type=int, default=20, metavar="N", help="at most N hits (20)")
    search.add_argument("--json", action="store_true")

    serve = commands.add_parser("serve", help="the language server (stdio by default)")
    transport = serve.add_mutually_exclusive_group()
    transport.add_argument("--stdio", action="store_true", help="talk LSP on stdin/stdout")
    transport.add_argument("--tcp", metavar="HOST:PORT", help="listen for one client on TCP")

    commands.add_parser("acp", help="the Agent Client Protocol agent on stdio (docs/acp.md)")
    commands.add_parser("doctor", help="what is installed and configured, what is missing")
    add_permissions_parser(commands)
    add_review_parser(commands)
    add_commit_parser(commands)
    add_auth_parser(commands)
    add_daemon_parser(commands)
    return parser


def entry() -> NoReturn:
    """The ``lsp-agent`` program (the console script, ``python -m lsp_agent``): the command,
    then the process ends at once (``system.fast_exit``) — everything it opened is closed by
    then. An exception that escapes (Ctrl-C before the command handles it) ends it as usual."""
    code = main()
    from lsp_agent.system.fast_exit import exit_now

    exit_now(code)


def main(argv: Sequence[str] | None = None, *, warm: bool = True) -> int:
    """The command; a reader of its output that went away ends it quietly
    (``closed_pipe``), whichever command it was. ``run`` goes to the warm process when there
    is one (docs/configuration.md "Warm path"); ``warm=False`` is that process's own run."""
    if warm:
        from lsp_agent.daemon.client import run_warm

        code = run_warm(sys.argv[1:] if argv is None else argv)
        if code is not None:
            return code
    from lsp_agent.closed_pipe import EXIT_CLOSED_PIPE, silence_stdout

    try:
        code = _main(argv)
        if not sys.stdout.closed:  # serve and acp close it when their client goes
            sys.stdout.flush()
    except BrokenPipeError:
        silence_stdout(sys.stdout)
        silence_stdout(sys.stderr)
        return EXIT_CLOSED_PIPE
    return code


def _main(argv: Sequence[str] | None) -> int:
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
        return _run_command(args, env)
    _prepare_process()
    return _command(args, env)


def _prepare_process() -> None:
    """What every command that runs the agent's work needs first, before any event loop."""
    from lsp_agent.sandbox.undumpable import forbid_inspection
    from lsp_agent.system.child_watcher import use_pidfd_child_watcher

    forbid_inspection()  # commands must not read this process's environment (the keys)
    use_pidfd_child_watcher()  # before any event loop: subprocesses without a thread each


def _run_command(args: argparse.Namespace, env: dict[str, str]) -> int:
    """``lsp-agent run`` in this process. Reached with only the command line parsed: nothing
    heavy (asyncio, the runtime, a provider SDK) is imported yet. The warm process, which has
    them loaded, was asked even earlier, in :func:`main`, before the parser was built."""
    _prepare_process()
    return _run_with_interrupt(args, env)


def _command(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Every command but ``run``."""
    import asyncio

    if args.command == "serve":
        return _serve(args, env)
    if args.command == "acp":
        return _acp(env)
    if args.command == "daemon":
        cold = lambda argv: main(argv, warm=False)  # noqa: E731 - the warm process's runs
        return run_daemon(args, env=env, run_main=cold, out=sys.stdout, err=sys.stderr)
    if args.command == "sessions" and args.verb in ("compact", "revert"):
        return asyncio.run(_with_agent(args, env, sys.stdout, sys.stderr))
    if args.command == "sessions":
        return asyncio.run(_sessions(args, env, sys.stdout, sys.stderr))
    if args.command == "permissions":
        return asyncio.run(
            run_permissions(args, env=env, cwd=Path.cwd(), out=sys.stdout, err=sys.stderr)
        )
    if args.command == "review":
        return asyncio.run(
            run_review(args, env=env, cwd=Path.cwd(), out=sys.stdout, err=sys.stderr)
        )
    if args.command == "commit-message":
        return asyncio.run(run_commit_message(args, env=env, out=sys.stdout, err=sys.stderr))
    if args.command == "auth":
        return run_auth(
            args, env=env, cwd=Path.cwd(), stdin=sys.stdin, out=sys.stdout, err=sys.stderr
        )
    from lsp_agent.doctor import run_doctor

    return asyncio.run(run_doctor(env=env, cwd=Path.cwd(), out=sys.stdout))


# -- run ------------------------------------------------------------------------------


def _run_with_interrupt(args: argparse.Namespace, env: dict[str, str]) -> int:
    """Run the turn; SIGINT cancels it so the log ends consistently, then exit 130.

    ``run -`` reads the prompt before the event loop starts, so Ctrl-C while typing it
    interrupts the read (nothing has been recorded yet)."""
    import asyncio
    import signal

    prompt = args.prompt
    if prompt == "-":
        try:
            prompt = sys.stdin.read()
        except KeyboardInterrupt:
            sys.stderr.write("interrupted\n")
            return EXIT_INTERRUPTED

    async def runner() -> int:
        from lsp_agent.closed_pipe import PipeGuard
        from lsp_agent.runtime.host import StorageError

        def stop() -> None:
            task.cancel()

        # A reader that goes away stops the turn like Ctrl-C; main() then exits quietly.
        out, err = PipeGuard(sys.stdout, stop), PipeGuard(sys.stderr, stop)
        task = asyncio.ensure_future(
            _run(args, env, cast(TextIO, out), cast(TextIO, err), prompt=prompt)
        )
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGINT, task.cancel)
        try:
            return await task
        except asyncio.CancelledError:
            if out.closed_by_reader or err.closed_by_reader:
                raise BrokenPipeError from None
            sys.stderr.write("interrupted\n")
            return EXIT_INTERRUPTED
        except StorageError as error:  # e.g. the data disk is full before the turn starts
            return _fail(sys.stderr, f"error: {error}", EXIT_FAILED)
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            # The turn is over and recorded; a late second Ctrl-C must not kill the exit.
            signal.signal(signal.SIGINT, signal.SIG_IGN)

    return asyncio.run(runner())


async def _run(
    args: argparse.Namespace,
    env: Mapping[str, str],
    out: TextIO,
    err: TextIO,
    *,
    prompt: str,
    stdin: TextIO | None = None,
) -> int:
    """One turn of ``prompt`` (``args.prompt``, or what stdin held for ``run -``)."""
    import asyncio

    from lsp_agent.app import AgentInputs
    from lsp_agent.attachments import AttachmentError, attachment_blocks
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.runtime.host import AgentPlan, Runtime

    stdin = stdin if stdin is not None else sys.stdin
    workspace = Path(os.path.realpath(args.cwd or os.getcwd()))
    if not workspace.is_dir():
        return _fail(err, f"not a folder: {workspace}", EXIT_USAGE)
    if args.max_steps is not None and args.max_steps < 1:
        return _fail(err, "--max-steps must be at least 1", EXIT_USAGE)
    if not prompt.strip():
        return _fail(err, "the prompt is empty", EXIT_USAGE)
    goal = until_goal(args)
    if isinstance(goal, str):
        return _fail(err, goal, EXIT_USAGE)
    overrides = {"model": args.model, "mode": args.mode, "max_steps": args.max_steps}
    editor = TerminalEditor(
        stdout=out,
        stderr=err,
        json_lines=args.json,
        approve_asks=args.yes,
        # Asks go to a person only on a terminal, and never once stdin gave the prompt.
        read_line=stdin.readline if args.prompt != "-" and _interactive(stdin) else None,
        color=_colour(err, env),
    )
    inputs = AgentInputs(workspace=workspace, env=env, cli_overrides=overrides)
    runtime = await Runtime.open(env, plan=lambda _folder: AgentPlan(inputs=inputs, editor=editor))
    try:
        try:
            app = await runtime.agent(str(workspace))
        except ConfigError as error:
            return _fail(err, str(error), EXIT_USAGE)  # no model too
        sessions = runtime.sessions
        try:  # the app's filter also masks the keys kept in the keyring
            attached = await asyncio.to_thread(
                attachment_blocks, workspace, args.files, app.secrets
            )
        except AttachmentError as error:
            return _fail(err, str(error), EXIT_USAGE)
        continued = args.session
        if args.continue_latest:
            continued = await sessions.latest(workspace.as_uri())
            if continued is None:
                return _fail(err, f"no session to continue in {workspace}", EXIT_USAGE)
        elif continued is not None and await sessions.find(continued) is None:
            return _fail(err, f"unknown session: {continued}", EXIT_USAGE)
        session_id = continued or await runtime.create(str(workspace), model=args.model)
        editor.focus(session_id)
        info = await sessions.require(session_id)
        try:  # e.g. an image for a model that takes none: nothing was recorded
            prompt_id = await app.sessions.admit(
                session_id, [{"type": "text", "text": prompt}, *attached], info=info
            )
        except InvalidParams as error:
            if continued is None:
                await sessions.delete(session_id)
            return _fail(err, f"error: {error}", EXIT_USAGE)
        await _mcp_settled(app, err)
        check = None
        try:
            if goal is None:
                outcome = await runtime.run_turn(info, mode=args.mode, model=args.model)
            else:
                outcome, check = await runtime.run_until(
                    info, goal, until_report(editor, err), mode=args.mode, model=args.model
                )
        except asyncio.CancelledError:
            await app.sessions.drain(timeout=2.0)
            await _print_changes(app, session_id, prompt_id, err)
            await _print_summary(sessions, session_id, err)
            raise
        await app.sessions.drain(timeout=2.0)
        code, message = _run_status(outcome, editor.refused_asks)
        if check is not None:
            code, message = until_status(check, code, message)
        if message:
            err.write(block(message) + "\n")
        if (
            continued is None
            and code == EXIT_FAILED
            and not await _worth_keeping(sessions, session_id)
        ):
            await sessions.delete(session_id)
            err.write("nothing was answered, so no session was kept\n")
        else:
            await _print_changes(app, session_id, prompt_id, err)
            await _print_summary(sessions, session_id, err)
        return code
    finally:
        await runtime.aclose()


async def _print_changes(app: Any, session_id: str, prompt_id: str, err: TextIO) -> None:
    """The files the prompt changed, with their +/- lines (before the closing line)."""
    from lsp_agent.terminal_report import changed_files

    for line in changed_files(await app.sessions.changes(session_id, prompt_id)):
        err.write(line + "\n")
    err.flush()


async def _mcp_settled(app: Any, err: TextIO) -> None:
    """One request fixes the tools a turn is offered: ``run`` waits for its MCP servers to be up
    (each bounded by its ``timeout_ms``); one line names each server that could not start or
    stops."""
    if app.mcp is None:
        return
    app.mcp.watch(lambda line: err.write(f"lsp-agent: {line}\n"))
    await app.mcp.settled()


def _run_status(outcome: Any, refused: int) -> tuple[int, str]:
    """The exit status of a finished turn and the line that explains it ("" for none)."""
    if outcome.stop_reason == "error":
        return EXIT_FAILED, f"error: {outcome.error}"
    if outcome.stop_reason == "max_steps":
        return EXIT_MAX_STEPS, f"stopped: the step limit ({outcome.steps}) was reached"
    if outcome.stop_reason == "refusal":
        return EXIT_FAILED, "the model refused to answer"
    if refused:
        asks = "ask was" if refused == 1 else "asks were"
        stopped = "stopped: " if outcome.stop_reason == "cancelled" else ""
        return EXIT_REFUSED, f"{stopped}{refused} permission {asks} refused; that was not done"
    if outcome.stop_reason == "cancelled":
        return EXIT_OK, "stopped: a tool call was rejected"
    return EXIT_OK, ""


async def _worth_keeping(sessions: Sessions, session_id: str) -> bool:
    """Whether the session is worth keeping after a failed first turn: it holds a reply or a
    tool call, or input held back for the next attempt (e.g. unreadable instructions stopped
    the turn before anything was sent — ``--session`` then sends it)."""
    if await sessions.pending(session_id):
        return True
    transcript = await sessions.transcript(session_id)
    return any(m.role == "assistant" and m.parts for m in transcript)


async def _print_summary(sessions: Sessions, session_id: str, err: TextIO) -> None:
    from lsp_agent.headless import run_summary

    info = await sessions.find(session_id)
    if info is not None:
        err.write(run_summary(info) + "\n")
        err.flush()


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
    from lsp_agent.lsp.features import serve

    return serve(env, tcp=tcp)


def _acp(env: dict[str, str]) -> int:
    """The ACP agent (docs/acp.md). stdout carries ACP, so logs go to stderr
    (``LSP_AGENT_LOG`` sets the level, default WARNING)."""
    import logging

    level = env.get("LSP_AGENT_LOG", "WARNING").upper()
    logging.basicConfig(
        stream=sys.stderr,
        level=getattr(logging, level, logging.WARNING),
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    from lsp_agent.acp.server import serve

    return serve(env)


def _interactive(stdin: TextIO | None) -> bool:
    """Asks go to a person only when stdin is a terminal (never in CI or a pipe)."""
    try:
        return stdin is not None and stdin.isatty()
    except (AttributeError, ValueError):
        return False


def _colour(stream: TextIO, env: Mapping[str, str]) -> bool:
    """Dim command output only on a terminal, and never with ``NO_COLOR`` set."""
    try:
        return stream.isatty() and not env.get("NO_COLOR") and env.get("TERM") != "dumb"
    except (AttributeError, ValueError):
        return False


async def _with_agent(
    args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    """``sessions compact|revert ID``: commands that need the whole agent (model, snapshots)."""
    from lsp_agent.app import AgentInputs
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.runtime.host import AgentPlan, Runtime

    workspace = Path(os.path.realpath(os.getcwd()))
    editor = TerminalEditor(stdout=out, stderr=err)
    model: list[str] = []  # the session's, once read

    def plan(_folder: str) -> AgentPlan:
        inputs = AgentInputs(workspace=workspace, env=env, session_model=model[0])
        return AgentPlan(inputs=inputs, editor=editor, mcp_servers=False)

    runtime = await Runtime.open(env, plan=plan, one_agent=True)
    try:
        info = await runtime.sessions.find(args.id)
        if info is None:
            return _fail(err, f"unknown session: {args.id}", EXIT_USAGE)
        model.append(info.model)
        try:
            app = await runtime.agent(str(workspace))
        except ConfigError as error:
            return _fail(err, str(error), EXIT_USAGE)  # no model too
        if info.state != "idle":
            return _fail(err, f"session {args.id} is {info.state}; try again when idle", 1)
        if args.verb == "compact":
            done = await app.sessions.compact(args.id)
            out.write("compacted\n" if done else "nothing old enough to compact\n")
            return EXIT_OK
        return await _revert(app.sessions, runtime.sessions, args, out, err)
    finally:
        await runtime.aclose()


async def _revert(
    service: Any, sessions: Sessions, args: argparse.Namespace, out: TextIO, err: TextIO
) -> int:
    """``--clear`` / ``--commit`` with nothing staged fail (exit 1): nothing was done."""
    from lsp_agent.core.checkpoints import staged_revert

    if (args.clear or args.commit) and staged_revert(await sessions.events(args.id)) is None:
        verb = "clear" if args.clear else "commit"
        return _fail(err, f"nothing to {verb}: session {args.id} has no staged revert", 1)
    if args.clear:
        await service.revert_clear(args.id)
        out.write("revert cleared\n")
        return EXIT_OK
    if args.commit:
        dropped = await service.revert_commit(args.id)
        out.write(f"revert committed; {len(dropped)} messages dropped\n")
        return EXIT_OK
    if args.last:
        target = await _last_prompt(sessions, args.id)
        if target is None:
            return _fail(err, f"nothing to revert: session {args.id} has no prompt", 1)
    else:
        target = await _user_message_for(sessions, args.id, args.message)
    try:
        result = await service.revert_stage(args.id, target, force=args.force, scope=args.scope)
    except LspAgentError as error:
        return _fail(err, str(error), EXIT_FAILED)
    if args.last:
        said = await _prompt_text(sessions, args.id, target)
        out.write(f"reverting to before the last prompt, {one_line(target)}: {said}\n")
    elif target != args.message:
        mid, user = one_line(args.message), one_line(target)
        out.write(f"reverting to before {user}, the user message {mid} answered\n")
    for path in result.files:
        mark = "conflict (left as you changed it)" if path in result.conflicts else "restored"
        out.write(f"{mark}: {one_line(path)}\n")
    kept = {"code": ": the files only, every message kept", "conversation": ": the messages only"}
    out.write(
        f"revert staged{kept.get(args.scope, '')} (undo with --clear, make final with --commit)\n"
    )
    if result.conflicts:
        err.write(
            f"{len(result.conflicts)} file(s) changed since the agent's step were left alone; "
            "use --force to restore them too\n"
        )
    return EXIT_OK


async def _last_prompt(sessions: Sessions, session_id: str) -> str | None:
    """``revert --last``: the last prompt a staged revert has not hidden already."""
    from lsp_agent.core.checkpoints import hidden_messages, user_message_ids

    events = await sessions.events(session_id)
    hidden = hidden_messages(events)
    prompts = [m for m in user_message_ids(events) if m not in hidden]
    return prompts[-1] if prompts else None


async def _prompt_text(sessions: Sessions, session_id: str, message_id: str) -> str:
    """The start of a prompt's text, on one line, to say which one a revert goes back to."""
    from lsp_agent.core.transcript import TextPartView

    for message in await sessions.transcript(session_id):
        if message.message_id == message_id:
            said = [p for p in message.parts if isinstance(p, TextPartView) and p.type == "text"]
            text = " ".join(" ".join(p.text.split()) for p in said)
            return one_line(text if len(text) <= 80 else text[:80] + "…")
    return ""


async def _user_message_for(sessions: Sessions, session_id: str, message_id: str) -> str:
    """An assistant message id → the user message it answered; any other id as given."""
    transcript = await sessions.transcript(session_id)
    index = next((i for i, m in enumerate(transcript) if m.message_id == message_id), None)
    if index is None or transcript[index].role != "assistant":
        return message_id
    for message in reversed(transcript[:index]):
        if message.role == "user":
            return str(message.message_id)
    return message_id


def _fail(err: TextIO, message: str, code: int) -> int:
    """Print why (a provider's or a tool's words may be in it: escaped) and answer ``code``."""
    err.write(block(message.rstrip()) + "\n")
    return code


# -- sessions -------------------------------------------------------------------------


async def _sessions(
    args: argparse.Namespace, env: Mapping[str, str], out: TextIO, err: TextIO
) -> int:
    from lsp_agent.runtime.host import Runtime

    runtime = await Runtime.open(env)
    sessions = runtime.sessions
    try:
        if args.verb == "list":
            return await _list(sessions, args, out)
        if args.verb == "history":
            return await _history(sessions, args, out)
        if args.verb == "export":
            return await _export(sessions, args, out)
        if args.verb == "delete":
            return await _delete(sessions, args, out, err)
        if args.verb == "search":
            return await _search(sessions, args, out, err)
        return await _show(sessions, args, out)
    except SessionNotFound as error:
        return _fail(err, str(error), EXIT_USAGE)
    except LspAgentError as error:
        return _fail(err, str(error), EXIT_FAILED)
    finally:
        await runtime.aclose()


def _here(args: argparse.Namespace) -> str | None:
    """The workspace folder a command lists (the current directory's), None with ``--all``."""
    return None if args.all else Path(os.path.realpath(os.getcwd())).as_uri()


async def _list(sessions: Sessions, args: argparse.Namespace, out: TextIO) -> int:
    infos = await sessions.all(_here(args))
    if args.json:
        _print_json(out, {"sessions": [info.to_json() for info in infos]})
        return EXIT_OK
    for info in infos:
        title = one_line(info.title) or "(untitled)"
        out.write(f"{info.session_id}  {info.updated_at}  {info.state:<8}  {title}\n")
    return EXIT_OK


async def _search(sessions: Sessions, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """One hit per line, best first: session, message, when, title and the matching text."""
    from lsp_agent.runtime.sessions import MAX_SEARCH

    if not 1 <= args.limit <= MAX_SEARCH:
        return _fail(err, f"--limit must be between 1 and {MAX_SEARCH}", EXIT_USAGE)
    try:
        hits = await sessions.search(args.query, _here(args), args.limit)
    except InvalidParams as error:
        return _fail(err, str(error).removeprefix("query: "), EXIT_USAGE)
    if args.json:
        _print_json(out, {"hits": [hit.to_json() for hit in hits]})
        return EXIT_OK
    for hit in hits:
        title = one_line(hit.title) or "(untitled)"
        where = f"{hit.session_id}  {hit.message_id}  {hit.time}"
        snippet = " ".join(hit.snippet.split())  # the lines of a tool's output, as one
        out.write(one_line(f"{where}  {title}  [{hit.kind}] {snippet}") + "\n")
    if not hits:
        err.write("no matches" + ("" if args.all else " here (--all: in every workspace)") + "\n")
    return EXIT_OK


async def _delete(sessions: Sessions, args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Each id: deleted, unknown (exit 2) or refused while its turn runs (exit 1)."""
    code = EXIT_OK
    for session_id in dict.fromkeys(args.ids):
        outcome = await sessions.delete(session_id)
        if outcome == "deleted":
            out.write(f"deleted {one_line(session_id)}\n")
        elif outcome == "unknown":
            err.write(f"unknown session: {one_line(session_id)}\n")
            code = EXIT_USAGE
        else:
            busy = one_line(session_id)
            err.write(f"session {busy} has a turn running; stop it first, then delete\n")
            code = code or EXIT_FAILED
    return code


async def _show(sessions: Sessions, args: argparse.Namespace, out: TextIO) -> int:
    info = await sessions.require(args.id)
    from lsp_agent.core.checkpoints import hidden_messages

    hidden = hidden_messages(await sessions.events(args.id))
    transcript = [m for m in await sessions.transcript(args.id) if m.message_id not in hidden]
    if args.json:
        messages = [message.to_json() for message in transcript]
        _print_json(out, {"session": info.to_json(), "messages": messages})
        return EXIT_OK
    title = one_line(info.title) or "(untitled)"
    out.write(f"# {title}\n{info.session_id} · {one_line(info.workspace_folder)}\n")
    for message in transcript:
        # The id is what `sessions revert ID --message MID` takes.
        out.write(f"\n## {message.role} {message.message_id} ({message.status})\n")
        for part in message.to_json()["parts"]:
            if part["type"] == "tool_call":
                call = f"[{part['toolName']} {part['status']}] {json.dumps(part['input'])}"
                out.write(one_line(call) + "\n")
                _write_tool_result(out, part, info.session_id)
            elif part["type"] == "reasoning":
                out.write(f"(thinking) {block(part['text'].rstrip())}\n")
            else:
                out.write(block(part["text"].rstrip()) + "\n")
    return EXIT_OK


def _write_tool_result(out: TextIO, part: Mapping[str, Any], session_id: str) -> None:
    """A tool call's output (its last lines) and error under its line in ``sessions show``;
    ``sessions export`` has them whole."""
    from lsp_agent.terminal_report import output_tail

    more = f" (all of it: lsp-agent sessions export {one_line(session_id)})"
    output, error = part.get("output"), part.get("error")
    if isinstance(output, str):
        out.writelines(line + "\n" for line in output_tail(output, "    ", more=more))
    if isinstance(error, str) and error.strip():
        out.write("    error:\n")
        out.writelines(line + "\n" for line in output_tail(error, "      ", more=more))


async def _history(sessions: Sessions, args: argparse.Namespace, out: TextIO) -> int:
    await sessions.require(args.id)
    events = await sessions.events(args.id)
    if args.json:
        _print_json(out, {"events": [event.to_json() for event in events]})
        return EXIT_OK
    for event in events:
        data = one_line(json.dumps(event.data, ensure_ascii=False))
        out.write(f"{event.seq:>6}  {event.time}  {event.type:<26} {data}\n")
    return EXIT_OK


async def _export(sessions: Sessions, args: argparse.Namespace, out: TextIO) -> int:
    out.write((await sessions.export(args.id, args.format)).rstrip("\n") + "\n")
    return EXIT_OK


def _print_json(out: TextIO, value: Any) -> None:
    out.write(json.dumps(value, ensure_ascii=False, indent=2) + "\n")
