"""Until green (``run --until CMD``, a prompt's ``until``): after each turn the person's
command runs; while it fails, its output's tail is the session's next prompt.

The command runs where the model's ``bash`` commands run (the same sandbox, in the session's
folder) without an ask: the person approved it by typing it. Each check is an
``until_checked`` event in the session (so every editor shows it) and a line for the door
(``attempt 2/5: make test exited 1``). The work ends when the command exits 0, when
``max_attempts`` turns have run, when the session's cost since the goal was set reaches
``max_cost`` (a model with no price is bounded by attempts only), or when a turn ends other
than by answering or by its step limit (cancelled, failed, refused): then the command is
not run.

Both ways a door runs turns use it: :meth:`UntilRun.after_turn` decides after any turn (a
door whose turns run in the background admits the next prompt and the scheduler runs it),
and :func:`run_until` is the loop for a door that awaits its turns (``lsp-agent run``).
"""

from __future__ import annotations

import signal
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.core.turn.loop import TurnOutcome
from lsp_agent.core.uris import local_path
from lsp_agent.shell.runner import CommandFailed
from lsp_agent.tools.bash import BashTool

if TYPE_CHECKING:
    from lsp_agent.app import App

__all__ = [
    "CHECK_TIMEOUT",
    "DEFAULT_MAX_ATTEMPTS",
    "TAIL_CHARS",
    "UntilCheck",
    "UntilGoal",
    "UntilRun",
    "check_line",
    "run_until",
]

DEFAULT_MAX_ATTEMPTS = 5
CHECK_TIMEOUT = 600.0
"""Seconds a check may run before it is stopped (and counts as failed)."""
TAIL_CHARS = 4000
"""How much of a failing check's output (its end) the next prompt carries."""
_RUNS_CHECK = frozenset({"end_turn", "max_steps"})


@attrs.frozen(kw_only=True)
class UntilGoal:
    """What the person asked for: ``command`` exits 0, within the bounds."""

    command: str
    max_attempts: int = DEFAULT_MAX_ATTEMPTS
    max_cost: float | None = None
    """Dollars this work may spend (the session's cost accounting); None: no bound."""
    timeout: float = CHECK_TIMEOUT


@attrs.frozen(kw_only=True)
class UntilCheck:
    """One check after a turn."""

    attempt: int
    max_attempts: int
    command: str
    verdict: ev.UntilVerdict
    exit_code: int | None = None
    error: str | None = None
    output: str = ""

    @property
    def done(self) -> bool:
        return self.verdict != "retry"

    def line(self) -> str:
        """``attempt 2/5: CMD exited 1``, and what happens next."""
        return check_line(self.event())

    def event(self) -> ev.UntilChecked:
        return ev.UntilChecked(
            command=self.command,
            attempt=self.attempt,
            max_attempts=self.max_attempts,
            verdict=self.verdict,
            exit_code=self.exit_code,
            error=self.error,
        )


def check_line(checked: ev.UntilChecked) -> str:
    """A check in words (``attempt 2/5: CMD exited 1; its output goes to the agent``): for
    the terminal now, and for a door that reads the ``until_checked`` event later."""
    head = f"attempt {checked.attempt}/{checked.max_attempts}: {checked.command}"
    if checked.verdict == "stopped":
        return f"{head} not run: the turn did not finish"
    ended = f"exited {checked.exit_code}" if checked.exit_code is not None else checked.error
    more = {
        "passed": "",
        "retry": "; its output goes to the agent",
        "attempts": "; no attempts left",
        "cost": "; the cost bound is reached",
    }[checked.verdict]
    return f"{head} {ended}{more}"


Report = Callable[[UntilCheck], None]


class UntilRun:
    """One goal being worked towards in one session: how many turns ran, what was spent."""

    def __init__(self, goal: UntilGoal, *, start_cost: float | None) -> None:
        self.goal = goal
        self.attempt = 0
        self._start_cost = start_cost or 0.0

    async def after_turn(self, app: App, info: SessionInfo, stop_reason: str) -> UntilCheck:
        """Check after a turn that ended with ``stop_reason`` (``info``: the session's row
        read after it); record the check; when it is to be retried, admit its failure as the
        session's next prompt."""
        self.attempt += 1
        goal = self.goal
        check = UntilCheck(
            attempt=self.attempt,
            max_attempts=goal.max_attempts,
            command=goal.command,
            verdict="stopped",
        )
        if stop_reason in _RUNS_CHECK:
            check = await self._run(app, info, check)
        await app.sessions.record(info.session_id, check.event())
        if check.verdict == "retry":
            prompt = failure_prompt(check, app.secrets.redact(check.output))
            await app.sessions.admit(info.session_id, [{"type": "text", "text": prompt}])
        return check

    async def _run(self, app: App, info: SessionInfo, check: UntilCheck) -> UntilCheck:
        goal = self.goal
        bash = app.tools.tool("bash") if app.tools is not None else None
        if not isinstance(bash, BashTool):
            return attrs.evolve(check, verdict="attempts", error="no bash tool to run it with")
        folder = local_path(info.workspace_folder)
        ran = await bash.run_typed(
            goal.command, session_id=info.session_id, roots=(folder,), timeout=goal.timeout
        )
        if isinstance(ran, CommandFailed):
            exit_code, error, output = None, ran.message, ""
        elif ran.timed_out or ran.limit is not None:
            what = ran.limit or f"timed out after {goal.timeout:g} s"
            exit_code, error, output = None, f"stopped: {what}", ran.output
        else:
            exit_code, error, output = _exit_code(ran.returncode), None, ran.output
        check = attrs.evolve(check, exit_code=exit_code, error=error, output=output)
        if exit_code == 0:
            return attrs.evolve(check, verdict="passed")
        if self.attempt >= goal.max_attempts:
            return attrs.evolve(check, verdict="attempts")
        spent = (info.usage.cost or 0.0) - self._start_cost
        if goal.max_cost is not None and info.usage.cost is not None and spent >= goal.max_cost:
            return attrs.evolve(check, verdict="cost")
        return attrs.evolve(check, verdict="retry")


def failure_prompt(check: UntilCheck, output: str) -> str:
    """The next prompt: what failed, the end of its output, what to do."""
    how = f"exited {check.exit_code}" if check.exit_code is not None else check.error
    tail = output[-TAIL_CHARS:]
    if len(output) > len(tail):
        tail = f"…({len(output) - len(tail):,} earlier characters left out)\n{tail}"
    body = tail.rstrip("\n") or "(no output)"
    return (
        f"The check `{check.command}` still fails after your turn (attempt {check.attempt} of "
        f"{check.max_attempts}): it {how}. The end of its output:\n"
        f"<check_output>\n{body}\n</check_output>\n"
        f"Find the cause and fix it so that `{check.command}` exits 0; it runs again when "
        "your turn ends."
    )


def _exit_code(returncode: int | None) -> int:
    """A shell's numbering: a signal's death is 128 + its number."""
    if returncode is None:
        return 128 + signal.SIGKILL
    return returncode if returncode >= 0 else 128 - returncode


TurnRunner = Callable[[SessionInfo], Awaitable[TurnOutcome]]
Reader = Callable[[str], Awaitable[SessionInfo]]


async def run_until(
    app: App,
    info: SessionInfo,
    goal: UntilGoal,
    *,
    run_turn: TurnRunner,
    read: Reader,
    report: Report,
) -> tuple[TurnOutcome, UntilCheck]:
    """Turns of ``info``'s session (its prompt already admitted) until the check is done:
    the last turn's outcome and the last check. ``read`` reads the session's row again."""
    until = UntilRun(goal, start_cost=info.usage.cost)
    while True:
        outcome = await run_turn(info)
        info = await read(info.session_id)
        check = await until.after_turn(app, info, outcome.stop_reason)
        report(check)
        if check.done:
            return outcome, check
