"""A commit message for what is staged in a folder's repository: every front door's one path
(``lsp-agent commit-message``, ``agent/commitMessage``).

The staged diff and the recent subjects are read through the safe git helper
(``snapshots/staged.py``), masked by the agent's secret filter like anything else it sends,
then written by the ``commit`` side model (``core/commit_message.py``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence

from lsp_agent.app import App
from lsp_agent.core.commit_message import (
    CommitMessage,
    CommitMessageFailure,
    write_commit_message,
)
from lsp_agent.snapshots.staged import NoStagedChanges, staged_changes

__all__ = ["GIT_TIMEOUT", "commit_message"]

GIT_TIMEOUT = 30.0
"""Seconds each git command may take."""


async def commit_message(
    agent: Callable[[], Awaitable[App]], folder: str, *, avoid: Sequence[str] = ()
) -> CommitMessage | CommitMessageFailure:
    """The message for the changes staged in the repository ``folder`` is in; ``agent``
    gives the agent (asked only once something is staged: "nothing staged" needs no model;
    it may raise ``ConfigError``); ``avoid``: the workspace folders besides ``folder`` (git
    is never run from one)."""
    staged = await asyncio.to_thread(
        staged_changes, folder, avoid=(*avoid, folder), timeout=GIT_TIMEOUT
    )
    if isinstance(staged, NoStagedChanges):
        return CommitMessageFailure(staged.reason, nothing_to_commit=staged.nothing_to_commit)
    app = await agent()
    redact = app.secrets.redact
    return await write_commit_message(
        app.sessions.side_model("commit"),
        diff=redact(staged.diff),
        stat=redact(staged.stat),
        subjects=[redact(s) for s in staged.subjects],
    )
