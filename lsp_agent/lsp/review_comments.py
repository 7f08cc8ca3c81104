"""``agent/review/comment``, ``agent/review/sendComments`` and ``agent/commitMessage``
(protocol.md "Comments on hunks", "Commit messages").

A comment is recorded at once (no turn needs to be idle: it changes no file); the comments
go to the model with the session's next prompt, or alone as a prompt of their own when the
user says "Send comments". A commit message is a side request outside any session.
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from lsp_agent.app import App
from lsp_agent.core.commit_message import CommitMessageFailure
from lsp_agent.core.errors import InvalidParams, LspAgentError
from lsp_agent.core.uris import path_of_uri
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.host import AgentHost
from lsp_agent.runtime.commit_message import commit_message


async def review_comment(host: AgentHost, params: p.ReviewCommentParams) -> p.ReviewCommentResult:
    await host.sessions.require(params.session_id)
    comment_id = await host.app.sessions.review_comment(
        params.session_id, [params.hunk_id], params.text
    )
    return p.ReviewCommentResult(comment_id=comment_id)


async def review_send_comments(
    host: AgentHost, params: p.SessionIdParams
) -> p.ReviewSendCommentsResult:
    """The unsent comments as a prompt of their own (``SessionService.admit`` writes it)."""
    info = await host.sessions.require(params.session_id)
    count = await host.app.sessions.review_unsent_comments(params.session_id)
    if not count:
        return p.ReviewSendCommentsResult(user_message_id=None)
    host.stream.follow(params.session_id, await host.sessions.last_seq(params.session_id))
    admitted = await host.runtime.prompts.submit(info, [])
    return p.ReviewSendCommentsResult(
        user_message_id=admitted.message_id, queued=admitted.queued, sent=count
    )


async def commit_message_request(
    host: AgentHost, params: p.CommitMessageParams
) -> p.CommitMessageResult:
    folders = host.workspace_folders()
    folder = _repository_folder(params.uri, folders)

    async def agent() -> App:
        return host.app

    result = await commit_message(agent, folder, avoid=folders)
    if isinstance(result, CommitMessageFailure):
        raise (
            InvalidParams(result.reason)
            if result.nothing_to_commit
            else LspAgentError(result.reason)
        )
    return p.CommitMessageResult(message=result.text)


def _repository_folder(uri: str | None, folders: list[str]) -> str:
    """``uri``'s folder when it is a workspace folder or inside one; else the first one."""
    if uri is None:
        if not folders:
            raise InvalidParams("uri: the client opened no workspace folder")
        return folders[0]
    path = path_of_uri(uri)
    real = os.path.realpath(path) if path is not None else None
    if real is None or not any(real == f or real.startswith(f + os.sep) for f in folders):
        raise InvalidParams(f"uri: {uri} is not in a workspace folder")
    if not os.path.isdir(real):
        raise InvalidParams(f"uri: {uri} is not a folder")
    return real


COMMENT_HANDLERS: dict[str, Callable[[AgentHost, Any], Awaitable[Any]]] = {
    "agent/review/comment": review_comment,
    "agent/review/sendComments": review_send_comments,
    "agent/commitMessage": commit_message_request,
}
"""Merged into ``handlers.HANDLERS``."""
