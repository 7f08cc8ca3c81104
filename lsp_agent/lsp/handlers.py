"""One small handler per ``agent/*`` method (protocol.md §1, §2, §4).

Each takes the host and its validated params model and returns the result model (or None);
errors are raised and mapped to JSON-RPC codes in one place (``errors.py``).
"""

from __future__ import annotations

import os
from collections.abc import Awaitable, Callable
from typing import Any

from lsp_agent.core.attachments import PromptFocus
from lsp_agent.core.errors import InvalidParams, SessionBusy, SessionNotFound
from lsp_agent.core.events import ChangedFile, CheckpointRecorded
from lsp_agent.core.session.config_options import ConfigChoices
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.core.uris import file_uri, path_of_uri
from lsp_agent.lsp import code_review
from lsp_agent.lsp import protocol as p
from lsp_agent.lsp.focus import context_blocks, prompt_focus
from lsp_agent.lsp.host import AgentHost
from lsp_agent.lsp.review_comments import COMMENT_HANDLERS
from lsp_agent.lsp.until import work_until


async def require_session(host: AgentHost, session_id: str) -> SessionInfo:
    return await host.sessions.require(session_id)


async def _config_options(host: AgentHost, session_id: str) -> list[p.ConfigOption]:
    """The session's options; none while the agent is unavailable (no model configured)."""
    if not host.agent_available:
        return []
    return _wire_options(await host.app.sessions.config_options(session_id))


def _wire_options(choices: ConfigChoices) -> list[p.ConfigOption]:
    """The protocol's ``configOptions``: the form a ``config_changed`` event records, so a
    result and the update after a change carry the same bytes."""
    return [p.ConfigOption.model_validate(option) for option in choices.to_json()]


# -- §1 sessions -------------------------------------------------------------------------------


async def session_new(host: AgentHost, params: p.SessionNewParams) -> p.SessionNewResult:
    folder = host.folder_for(params.workspace_folder)
    session_id = await host.create_session(
        folder, title=params.title or "", mode=params.mode, model=params.model
    )
    return p.SessionNewResult(
        session_id=session_id, config_options=await _config_options(host, session_id)
    )


async def session_list(host: AgentHost, params: p.SessionListParams) -> p.SessionListResult:
    page = await host.sessions.page(params.workspace_folder, params.cursor, params.limit)
    return p.SessionListResult(
        sessions=[p.SessionSummary.model_validate(info.to_json()) for info in page.sessions],
        next_cursor=page.next_cursor,
    )


async def session_search(host: AgentHost, params: p.SessionSearchParams) -> p.SessionSearchResult:
    hits = await host.sessions.search(params.query, params.workspace_folder, params.limit)
    return p.SessionSearchResult(
        hits=[p.SessionSearchHit.model_validate(hit.to_json()) for hit in hits]
    )


async def session_load(host: AgentHost, params: p.SessionLoadParams) -> p.SessionLoadResult:
    await require_session(host, params.session_id)
    replay = params.replay
    if replay == "none":
        last = await host.stream.skip_to_end(params.session_id)
    elif replay == "full":
        last = await host.stream.replay(params.session_id, 1)
    else:
        assert isinstance(replay, p.FromSeq)
        last = await host.stream.replay(params.session_id, max(replay.from_seq, 1))
    info = await require_session(host, params.session_id)
    return p.SessionLoadResult(
        state=info.state,
        last_seq=max(last, await host.sessions.last_seq(params.session_id)),
        config_options=await _config_options(host, params.session_id),
    )


async def session_history(
    host: AgentHost, params: p.SessionHistoryParams
) -> p.SessionHistoryResult:
    await require_session(host, params.session_id)
    events = await host.sessions.events(
        params.session_id, after_seq=params.after_seq or 0, limit=params.limit
    )
    return p.SessionHistoryResult(
        events=[p.HistoryEvent.model_validate(e.to_json()) for e in events]
    )


async def session_export(host: AgentHost, params: p.SessionExportParams) -> p.SessionExportResult:
    return p.SessionExportResult(text=await host.sessions.export(params.session_id, params.format))


async def session_delete(host: AgentHost, params: p.SessionIdParams) -> None:
    await require_session(host, params.session_id)
    outcome = await host.sessions.delete(params.session_id)
    if outcome == "unknown":
        raise SessionNotFound(params.session_id)
    if outcome == "busy":  # another process runs a turn of it
        raise SessionBusy(params.session_id, "a turn is running")
    host.stream.forget(params.session_id)


async def session_set_config_option(
    host: AgentHost, params: p.SetConfigOptionParams
) -> p.ConfigOptionsResult:
    await require_session(host, params.session_id)
    choices = await host.app.sessions.set_config(params.session_id, params.config_id, params.value)
    return p.ConfigOptionsResult(config_options=_wire_options(choices))


async def config_options(host: AgentHost, params: p.ConfigOptionsParams) -> p.ConfigOptionsResult:
    """What a new session would start with, for the pickers before there is a session; none
    while the agent is unavailable (no model configured)."""
    if not host.agent_available:
        return p.ConfigOptionsResult(config_options=[])
    return p.ConfigOptionsResult(
        config_options=_wire_options(host.app.sessions.new_session_options())
    )


async def session_compact(host: AgentHost, params: p.SessionIdParams) -> p.EmptyResult:
    await require_session(host, params.session_id)
    async with host.turns.exclusive(params.session_id, "compacting"):
        await host.app.sessions.compact(params.session_id)
    return p.EmptyResult()


# -- §2 prompt, cancel, diagnostics -----------------------------------------------------------


async def session_prompt(host: AgentHost, params: p.PromptParams) -> p.PromptResult:
    info = await require_session(host, params.session_id)
    blocks = [block.dump() for block in params.prompt]
    blocks += context_blocks(params.context, host.workspace_folders(), host.app.secrets)
    if params.until is not None:
        work_until(host.runtime, info, params.until)
    return await submit_prompt(
        host,
        info,
        blocks,
        client_message_id=params.client_message_id,
        focus=prompt_focus(params.context),
    )


async def submit_prompt(
    host: AgentHost,
    info: SessionInfo,
    blocks: list[dict[str, Any]],
    *,
    client_message_id: str | None,
    focus: PromptFocus | None = None,
) -> p.PromptResult:
    """Admit the input (durable before anything else) and run it now, or right after the
    running turn (``runtime/prompts.py``; a repeated ``clientMessageId`` gets its first
    answer); ``focus``: the editor context it came with (for its mentions)."""
    session_id = info.session_id
    host.stream.follow(session_id, await host.sessions.last_seq(session_id))
    admitted = await host.runtime.prompts.submit(
        info, blocks, client_message_id=client_message_id, focus=focus
    )
    return p.PromptResult(user_message_id=admitted.message_id, queued=admitted.queued)


async def session_cancel(host: AgentHost, params: p.SessionIdParams) -> None:
    await host.turns.cancel(params.session_id)


async def diagnostics(host: AgentHost, params: p.DiagnosticsParams) -> None:
    for item in params.items:
        host.editor.replace_diagnostics(item.uri, item.diagnostics, item.version)


async def diff_get(host: AgentHost, params: p.DiffGetParams) -> p.DiffGetResult:
    await require_session(host, params.session_id)
    found = host.editor.change_sets.get(params.session_id, params.change_set_id, params.uri)
    if found is None:
        raise InvalidParams(
            f"changeSetId: no change set {params.change_set_id!r} with {params.uri} in this "
            "session (it may have expired)"
        )
    return found


# -- §7 revert ---------------------------------------------------------------------------------


async def checkpoint_list(host: AgentHost, params: p.SessionIdParams) -> p.CheckpointListResult:
    info = await require_session(host, params.session_id)
    folder = path_of_uri(info.workspace_folder) or ""
    events = await host.sessions.events(params.session_id)
    return p.CheckpointListResult(
        checkpoints=[
            p.CheckpointModel(
                checkpoint_id=recorded.checkpoint_id,
                message_id=recorded.message_id,
                created_at=e.time,
                files=[_checkpoint_file(folder, f) for f in recorded.files],
            )
            for e in events
            if e.type == "checkpoint_recorded"
            and isinstance(recorded := e.event, CheckpointRecorded)
        ]
    )


async def revert_stage(host: AgentHost, params: p.RevertStageParams) -> p.RevertStageResult:
    info = await require_session(host, params.session_id)
    folder = path_of_uri(info.workspace_folder) or ""
    async with host.turns.exclusive(params.session_id, "reverting"):
        result = await host.app.sessions.revert_stage(
            params.session_id, params.message_id, force=params.force, scope=params.scope
        )
    return p.RevertStageResult(
        files=[_uri_in(folder, path) for path in result.files],
        conflicts=[_uri_in(folder, path) for path in result.conflicts],
    )


async def revert_clear(host: AgentHost, params: p.SessionIdParams) -> p.EmptyResult:
    await require_session(host, params.session_id)
    async with host.turns.exclusive(params.session_id, "reverting"):
        await host.app.sessions.revert_clear(params.session_id)
    return p.EmptyResult()


async def revert_commit(host: AgentHost, params: p.SessionIdParams) -> p.RevertCommitResult:
    await require_session(host, params.session_id)
    async with host.turns.exclusive(params.session_id, "reverting"):
        dropped = await host.app.sessions.revert_commit(params.session_id)
    return p.RevertCommitResult(dropped=list(dropped))


def _checkpoint_file(folder: str, entry: ChangedFile) -> p.CheckpointFile:
    path = str(entry.get("path", ""))
    return p.CheckpointFile(
        uri=_uri_in(folder, path),
        path=path,
        status=str(entry.get("status", "modified")),
        additions=int(entry.get("additions", 0)),
        deletions=int(entry.get("deletions", 0)),
    )


def _uri_in(folder: str, path: str) -> str:
    """The uri of ``path`` (relative to the session's folder, or absolute)."""
    return file_uri(os.path.join(folder, path) if folder else path)


async def mcp_list(host: AgentHost, params: p.McpListParams) -> p.McpListResult:
    mcp = host.app.mcp
    statuses = mcp.statuses() if mcp is not None else ()
    return p.McpListResult(
        servers=[
            p.McpServerModel(name=s.name, status=s.status, tools=list(s.tools), error=s.error)
            for s in statuses
        ]
    )


# -- saved approvals ---------------------------------------------------------------------


async def permissions_list(
    host: AgentHost, params: p.PermissionsListParams
) -> p.PermissionsListResult:
    saved = await host.sessions.approvals(params.workspace_folder)
    return p.PermissionsListResult(
        approvals=[
            p.SavedApprovalModel(
                scope=a.scope,
                scope_id=a.scope_id,
                permission=a.permission,
                pattern=a.pattern,
                session_id=a.session_id,
                created_at=a.created_at,
            )
            for a in saved
        ]
    )


async def permissions_revoke(
    host: AgentHost, params: p.PermissionsRevokeParams
) -> p.PermissionsRevokeResult:
    revoked = await host.sessions.revoke(
        scope=params.scope,
        scope_id=params.scope_id,
        permission=params.permission,
        pattern=params.pattern,
    )
    return p.PermissionsRevokeResult(revoked=revoked)


# -- review ------------------------------------------------------------------------------


async def review_list(host: AgentHost, params: p.ReviewListParams) -> p.ReviewListResult:
    await require_session(host, params.session_id)
    files = await host.app.sessions.review_list(params.session_id)
    return p.ReviewListResult(
        files=[
            p.ReviewFile(
                uri=file_uri(f.path),
                status=f.status,
                hunks=[
                    p.ReviewHunk(
                        hunk_id=h.hunk_id,
                        status=h.status,
                        message_id=h.message_id,
                        range=None if h.place is None else _lines(h.place.start, h.place.end),
                        old_text=h.old_text,
                        new_text=h.new_text,
                        comments=[
                            p.ReviewComment(
                                comment_id=c.comment_id, text=c.text, action=c.action, sent=sent
                            )
                            for c, sent in h.comments
                        ],
                    )
                    for h in f.hunks
                ],
            )
            for f in files
        ],
        unsent_comments=await host.app.sessions.review_unsent_comments(params.session_id),
    )


async def review_resolve(host: AgentHost, params: p.ReviewResolveParams) -> p.ReviewResolveResult:
    await require_session(host, params.session_id)
    paths = None
    if params.uris is not None:
        paths = [os.path.realpath(path) for path in map(path_of_uri, params.uris) if path]
    async with host.turns.exclusive(params.session_id, "resolving review hunks"):
        result = await host.app.sessions.review_resolve(
            params.session_id,
            params.action,
            hunk_ids=params.hunk_ids,
            paths=paths,
            reason=params.reason,
        )
    return p.ReviewResolveResult(
        resolved=list(result.resolved),
        conflicts=[p.ReviewConflict(hunk_id=c.hunk_id, reason=c.reason) for c in result.conflicts],
    )


def _lines(start: int, end: int) -> p.Range:
    """Whole lines ``start`` .. ``end`` (exclusive) as an LSP range."""
    return p.Range(start=p.Position(line=start, character=0), end=p.Position(line=end, character=0))


Handler = Callable[[AgentHost, Any], Awaitable[Any]]

# -- §12a next-edit suggestions (lsp/completion.py) -----------------------------------------


async def next_edit(host: AgentHost, params: p.NextEditParams) -> p.NextEditResult | None:
    completion = host.completion
    return None if completion is None else await completion.next_edit(params)


async def next_edit_feedback(host: AgentHost, params: p.NextEditFeedbackParams) -> None:
    if host.completion is not None:
        await host.completion.feedback(params)


HANDLERS: dict[str, Handler] = {
    "agent/session/new": session_new,
    "agent/session/list": session_list,
    "agent/session/search": session_search,
    "agent/session/load": session_load,
    "agent/session/history": session_history,
    "agent/session/export": session_export,
    "agent/session/delete": session_delete,
    "agent/session/setConfigOption": session_set_config_option,
    "agent/config/options": config_options,
    "agent/session/compact": session_compact,
    "agent/session/prompt": session_prompt,
    "agent/session/cancel": session_cancel,
    "agent/diagnostics": diagnostics,
    "agent/diff/get": diff_get,
    "agent/checkpoint/list": checkpoint_list,
    "agent/revert/stage": revert_stage,
    "agent/revert/clear": revert_clear,
    "agent/revert/commit": revert_commit,
    "agent/mcp/list": mcp_list,
    "agent/permissions/list": permissions_list,
    "agent/permissions/revoke": permissions_revoke,
    "agent/review/list": review_list,
    "agent/review/resolve": review_resolve,
    "agent/codeReview/run": code_review.run_review,
    **COMMENT_HANDLERS,
    "agent/nextEdit": next_edit,
    "agent/nextEdit/feedback": next_edit_feedback,
}
