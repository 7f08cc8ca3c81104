"""A prompt's ``until`` (protocol.md "Until green"): the session works until a command passes."""

from __future__ import annotations

from lsp_agent.core.transcript import SessionInfo
from lsp_agent.lsp import protocol as p
from lsp_agent.runtime.host import Runtime
from lsp_agent.runtime.until import UntilGoal


def work_until(runtime: Runtime, info: SessionInfo, until: p.UntilParams) -> None:
    """From the turn this prompt runs in: after each, ``until.command`` runs (``until_update``
    tells each result); while it fails and the bounds allow, its output is the next prompt."""
    goal = UntilGoal(
        command=until.command, max_attempts=until.max_attempts, max_cost=until.max_cost
    )
    runtime.work_until(info, goal)
