"""``lsp-agent run --until CMD``'s flags, the goal they make, its lines and its exit status.

The loop itself is the runtime's (``runtime/until.py``), shared with the language server; this
is the terminal's side of it. Imported when the parser is built, so the runtime waits until a
run needs it.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from lsp_agent.display import block

if TYPE_CHECKING:
    from lsp_agent.headless import TerminalEditor
    from lsp_agent.runtime.until import UntilCheck, UntilGoal

__all__ = ["EXIT_UNTIL_BOUND", "add_until_arguments", "until_goal", "until_report", "until_status"]

EXIT_UNTIL_BOUND = 5
"""``--until``'s command still failed when a bound (attempts, cost) was reached."""


def add_until_arguments(run: argparse.ArgumentParser) -> None:
    until = run.add_argument_group("until green")
    until.add_argument(
        "--until", metavar="CMD", help="after each turn run CMD; while it fails, keep working"
    )
    until.add_argument("--max-attempts", type=int, metavar="N", help="--until: at most N turns (5)")
    until.add_argument(
        "--max-cost", type=float, metavar="USD", help="--until: stop once this much is spent"
    )


def until_goal(args: argparse.Namespace) -> UntilGoal | str | None:
    """``--until``'s goal (None without it), or the usage error."""
    if args.until is None:
        if args.max_attempts is not None or args.max_cost is not None:
            return "--max-attempts and --max-cost go with --until"
        return None
    from lsp_agent.runtime.until import DEFAULT_MAX_ATTEMPTS, UntilGoal

    if not args.until.strip():
        return "--until needs a command"
    attempts = DEFAULT_MAX_ATTEMPTS if args.max_attempts is None else args.max_attempts
    if attempts < 1:
        return "--max-attempts must be at least 1"
    if args.max_cost is not None and not args.max_cost > 0:
        return "--max-cost must be more than 0"
    return UntilGoal(command=args.until, max_attempts=attempts, max_cost=args.max_cost)


def until_report(editor: TerminalEditor, err: TextIO) -> Callable[[UntilCheck], None]:
    """Each check's line on stderr (``attempt 2/5: CMD exited 1``), on a line of its own."""

    def report(check: UntilCheck) -> None:
        editor.end_line()
        err.write(block(check.line()) + "\n")
        err.flush()

    return report


def until_status(check: UntilCheck, code: int, message: str) -> tuple[int, str]:
    """The exit status when ``--until`` ended: 0 once its command passed,
    :data:`EXIT_UNTIL_BOUND` at a bound, else the last turn's own (``code``, ``message``)."""
    if check.verdict == "passed":
        return 0, ""
    if check.verdict == "attempts":
        return (
            EXIT_UNTIL_BOUND,
            f"stopped: {check.command} still fails after {check.attempt} attempts",
        )
    if check.verdict == "cost":
        return EXIT_UNTIL_BOUND, f"stopped: {check.command} still fails; the cost bound was reached"
    return code, message
