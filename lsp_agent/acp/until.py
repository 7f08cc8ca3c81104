"""ACP's ``/until COMMAND`` (the task on the lines after it): work until the person's command
passes (docs/protocol.md "Until green"), the same loop as ``lsp-agent run --until``. ACP's
prompt has no field for it, so it is a slash command; the prompt request ends when the
command passes or a bound is reached, and each check is a line of the agent's answer."""

from __future__ import annotations

from typing import Any

from lsp_agent.runtime.until import UntilGoal

__all__ = ["UNTIL_COMMAND", "UNTIL_ENTRY", "until_goal"]

UNTIL_COMMAND = "until"
UNTIL_ENTRY: dict[str, Any] = {
    "name": UNTIL_COMMAND,
    "description": "Work until a command passes (/until make test), the task on the next lines",
    "input": {"hint": "COMMAND, then the task on the next lines"},
}


def until_goal(text: str) -> tuple[UntilGoal, str] | str:
    """The goal and the task ``/until``'s text names (``text``: the whole prompt), or what is
    wrong with it. Without a task the agent is asked to make the command pass."""
    first, _, rest = text.strip().partition("\n")
    command = first.strip()[len("/" + UNTIL_COMMAND) :].strip()
    if not command:
        return (
            "/until takes the command that must pass, then the task on the next lines, e.g.\n"
            "/until pytest -q\nfix the failing parser test"
        )
    task = rest.strip() or f"Make `{command}` pass."
    return UntilGoal(command=command), task
