"""Domain events: the event log is the truth; everything else is derived from it.

Each event has a ``type`` (below) and a JSON ``data`` object with camelCase keys (it is
shown as-is by ``sessions history`` and ``agent/session/history``). Every event carries a
schema ``version`` so it can be upgraded later.

Catalogue (type → data):

- ``session_created``   {sessionId, workspaceFolder (file URI), title, model, mode}
- ``user_message_admitted`` {messageId, content: ContentBlock[], clientMessageId?}
  — durable input, not yet in the conversation (the inbox)
- ``user_message_promoted`` {messageId} — the input joins the conversation
- ``assistant_message_started`` {messageId, model, step}
- ``text_delta``        {messageId, partId, text} — a batch of streamed text
- ``reasoning_delta``   {messageId, partId, text}
- ``reasoning_ended``   {messageId, partId, signature?, redactedData?}
- ``tool_call_updated`` {toolCallId, messageId, toolName, status, input?, output?, error?,
  title?, kind?, exitCode?} — an upsert; status pending|in_progress|completed|failed|cancelled|
  interrupted; ``exitCode``: a finished command's exit status (bash)
- ``assistant_message_ended`` {messageId, status: completed|interrupted|failed,
  finishReason?, error?}
- ``usage_updated``     {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens,
  contextUsed, contextSize, cost?} — session totals; contextUsed is the last call's
- ``state_changed``     {state: running|requires_action|idle, stopReason?, error?:
  {message, retryable, retryAt?}, owner?: {pid, startTicks}} — a turn's first ``running``
  names the process that owns it (recovery checks whether it still lives)
- ``title_set``         {title}
- ``permission_asked``  {toolCallId, messageId, permission, patterns, always, title,
  description?, subject?} — the user is asked (the session is ``requires_action``)
- ``permission_resolved`` {toolCallId, messageId, permission, state: allowed|rejected|
  cancelled, optionKind?, reason?, always?} — with ``allow_session``/``allow_always``,
  ``always`` holds the patterns now approved for the session / the project
- ``question_asked``    {toolCallId, questions: [{questionId, header, question, options,
  multiple, custom}]}
- ``question_resolved`` {toolCallId, state: answered|declined|cancelled, answers?}
- ``plan_updated``      {toolCallId, entries: [{content, status, priority}]}
- ``process_started``   {toolCallId, pgid, startTicks, ownerPid} — recorded before the
  command runs, so a later process can tell whether the group is still ours to clean up
- ``process_ended``     {toolCallId, pgid}
- ``tool_withheld``     {toolName, error, failures} — the circuit breaker took a tool away
  for the rest of the turn
- ``context_built``     {epoch, baseline, date, instructions: {path: text}, skills} — the
  baseline note of a context epoch, built right before the session's first model call; the
  system prompt of every request of the epoch ends with ``baseline``
- ``context_noted``     {messageId, text, date, instructions, skills} — what changed since:
  ``text`` joins the history as a user-role message; the other fields are the new snapshot
- ``compaction_started`` {auto, reason}
- ``compaction_ended``  {auto, summary?, firstKeptMessageId?, error?} — with ``summary``, the
  model from now on sees a checkpoint with it instead of the messages before
  ``firstKeptMessageId`` (null: all messages before this event); nothing is deleted
- ``checkpoint_recorded`` {checkpointId, messageId, stepMessageId, before, after, files:
  [{path, status, additions, deletions}], patch} — what a step changed on disk (trees of
  the hidden snapshot repository)
- ``revert_staged``     {messageId, restoreTree, undoTree, files, conflicts, hidden}
- ``revert_cleared``    {messageId, files}
- ``revert_committed``  {messageId, dropped}
- ``config_changed``    {configId: mode|model|thought_level, value, configOptions} — a session
  option was set (``agent/session/setConfigOption``); the session's ``mode``/``model``/
  ``thought_level`` become ``value``
  and a running turn picks it up at its next step. ``configOptions`` is the whole list after
  the change, as the client shows it
- ``review_recorded``   {checkpointId, messageId, stepMessageId, after, hunks: [{hunkId, path,
  kind: created|deleted|modified, oldStart, newStart, oldText, newText}], files} — a step's
  changes as hunks to keep or undo (``core/review``); ``files`` is the whole review list's
  counts afterwards, ``[{uri, status, pending, kept, undone}]``
- ``review_resolved``   {action: keep|undo, resolved, conflicts: [{hunkId, reason}], lines?,
  files} — hunks kept or undone (``lines``: where each undone hunk's old text now starts)
"""

from __future__ import annotations

from typing import Any, Final, Literal

import attrs

EVENT_VERSION: Final = 1

EventType = Literal[
    "session_created",
    "user_message_admitted",
    "user_message_promoted",
    "assistant_message_started",
    "text_delta",
    "reasoning_delta",
    "reasoning_ended",
    "tool_call_updated",
    "assistant_message_ended",
    "usage_updated",
    "state_changed",
    "title_set",
    "permission_asked",
    "permission_resolved",
    "question_asked",
    "question_resolved",
    "plan_updated",
    "process_started",
    "process_ended",
    "tool_withheld",
    "context_built",
    "context_noted",
    "compaction_started",
    "compaction_ended",
    "checkpoint_recorded",
    "revert_staged",
    "revert_cleared",
    "revert_committed",
    "config_changed",
    "review_recorded",
    "review_resolved",
]


@attrs.frozen(kw_only=True)
class NewEvent:
    """An event about to be appended. ``time`` is ISO 8601 UTC (set by the caller's clock)."""

    type: EventType
    data: dict[str, Any]
    time: str
    version: int = EVENT_VERSION


@attrs.frozen(kw_only=True)
class StoredEvent:
    """An event as committed: ``seq`` increases by one per session, with no gaps."""

    session_id: str
    seq: int
    type: EventType
    data: dict[str, Any]
    time: str
    version: int = EVENT_VERSION

    def to_json(self) -> dict[str, Any]:
        """The shape of ``agent/session/history`` entries."""
        return {"seq": self.seq, "type": self.type, "time": self.time, "data": self.data}
