"""Protocol v1's custom methods as typed models: the one machine-readable source.

Every ``agent/*`` method the server registers is listed in :data:`METHODS` with its direction,
kind (request or notification) and the pydantic models of its params and result. The server
validates incoming params with these models (a failure is ``-32602`` naming the field), and
``python -m lsp_agent.lsp.schema`` turns them into the JSON Schema the TypeScript and Lua
front-ends are checked against (``docs/protocol.schema.json``).

JSON keys are camelCase (the models use snake_case attributes with camelCase aliases);
unknown keys are ignored so a newer client can talk to an older server.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import attrs
from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictInt, StrictStr
from pydantic.alias_generators import to_camel

from lsp_agent.search.editor_queries import QueryKind

PROTOCOL_VERSION = 1


class Model(BaseModel):
    model_config = ConfigDict(
        alias_generator=to_camel,
        populate_by_name=True,
        extra="ignore",
        frozen=True,
        # Each model's validator is built on its first use, not at import: building them all
        # was most of what `serve` added to a bare pygls server before answering initialize.
        defer_build=True,
    )

    def dump(self) -> dict[str, Any]:
        """The JSON object sent on the wire (camelCase keys, absent optionals left out)."""
        return self.model_dump(by_alias=True, exclude_none=True, mode="json")


Uri = Annotated[StrictStr, Field(min_length=1, max_length=4096)]
SessionId = Annotated[StrictStr, Field(min_length=1, max_length=200)]
Count = Annotated[StrictInt, Field(ge=0, le=2**53)]


class Position(Model):
    line: Annotated[StrictInt, Field(ge=0, le=2**31)]
    character: Annotated[StrictInt, Field(ge=0, le=2**31)]


class Range(Model):
    start: Position
    end: Position


# -- content -------------------------------------------------------------------------------


class TextBlock(Model):
    type: Literal["text"]
    text: Annotated[StrictStr, Field(max_length=1_000_000)]


class ResourceLinkBlock(Model):
    type: Literal["resource_link"]
    uri: Uri
    range: Range | None = None


class ResourceBlock(Model):
    type: Literal["resource"]
    uri: Uri
    text: Annotated[StrictStr, Field(max_length=1_000_000)]


MentionName = Literal["diagnostics", "selection", "buffers", "diff"]
MENTIONS: tuple[MentionName, ...] = ("diagnostics", "selection", "buffers", "diff")


class MentionBlock(Model):
    """``#diagnostics``, ``#selection``, ``#buffers``, ``#diff`` in a prompt: expanded by the
    server when the prompt is admitted (protocol.md "Mentions")."""

    type: Literal["mention"]
    name: MentionName
    uri: Uri | None = None
    """For ``diagnostics``: only this file's (absent: the workspace's)."""


class ImageBlock(Model):
    """An image in a prompt (protocol.md "Images"): base64 ``data`` of ``mimeType``; ``name``
    (its file's) for the placeholder the transcript shows. Its bytes are checked against the
    type at admission, and refused for a model that takes no images."""

    type: Literal["image"]
    mime_type: Literal["image/png", "image/jpeg", "image/gif", "image/webp"]
    data: Annotated[StrictStr, Field(min_length=1, max_length=(5 * 1024 * 1024 + 2) // 3 * 4)]
    name: Annotated[StrictStr, Field(max_length=500)] | None = None


ContentBlock = Annotated[
    TextBlock | ResourceLinkBlock | ResourceBlock | MentionBlock | ImageBlock,
    Field(discriminator="type"),
]


class Diagnostic(Model):
    """An LSP diagnostic, as much of it as the agent reads."""

    range: Range
    message: StrictStr
    severity: Annotated[StrictInt, Field(ge=1, le=4)] | None = None
    source: StrictStr | None = None
    code: StrictStr | StrictInt | None = None


# -- initialize ----------------------------------------------------------------------------


class UiCapabilities(Model):
    chat: StrictBool = False
    diff: StrictBool = False
    permissions: StrictBool = False
    questions: StrictBool = False
    plan: StrictBool = False


class ClientInfo(Model):
    name: StrictStr = ""
    version: StrictStr = ""


class ClientConfig(Model):
    """Settings a front-end forwards; the config file's snake_case keys, passed as given."""

    model_config = ConfigDict(extra="allow", frozen=True)
    model: StrictStr | None = None
    mode: StrictStr | None = None


QueryKindWord = Annotated[StrictStr, Field(max_length=100)]


class AgentClientOptions(Model):
    """``initializationOptions.agent``; absent: a plain LSP client (protocol.md §9)."""

    protocol_version: Literal[1]
    ui: UiCapabilities = UiCapabilities()
    forwards_diagnostics: StrictBool = False
    client_info: ClientInfo = ClientInfo()
    config: ClientConfig | None = None
    """The user's settings (trusted: the user's config layer). A client sends here only what
    the user set for themselves, never what a workspace set."""
    workspace_config: ClientConfig | None = None
    """Settings a workspace set (its editor settings file): untrusted, checked like the
    project file (docs/configuration.md)."""
    editor_queries: Annotated[list[QueryKindWord], Field(max_length=50)] = []
    """The ``agent/editor/query`` kinds the client answers; unknown kinds are ignored."""
    saves_documents: StrictBool = False
    """The client answers ``agent/documents/save`` (protocol.md §6): the server asks it to
    save the buffers the agent edited instead of writing the disk itself."""


class AgentServerCapabilities(Model):
    """``capabilities.experimental.agent`` in the ``initialize`` result."""

    protocol_version: int = PROTOCOL_VERSION
    sessions: dict[str, bool]
    revert: bool
    commands: list[str]
    review: bool = True
    """``agent/review/list|resolve`` and ``review_update`` (protocol.md "Review")."""
    review_comments: bool = True
    """``agent/review/comment|sendComments`` and ``resolve``'s ``reason`` (protocol.md
    "Comments on hunks")."""
    commit_message: bool = True
    """``agent/commitMessage`` (protocol.md "Commit messages")."""
    mentions: list[str] = list(MENTIONS)
    """The ``mention`` block names the server expands."""


# -- §1 sessions ---------------------------------------------------------------------------

ConfigId = Literal["mode", "model", "thought_level"]


class ConfigChoice(Model):
    value: str
    name: str
    description: str | None = None


class ConfigOption(Model):
    config_id: ConfigId
    name: str
    category: Literal["mode", "model", "thought_level"]
    type: Literal["select"] = "select"
    current_value: str
    options: list[ConfigChoice]


class SessionNewParams(Model):
    workspace_folder: Uri | None = None
    title: Annotated[StrictStr, Field(max_length=500)] | None = None
    mode: StrictStr | None = None
    model: StrictStr | None = None


class SessionNewResult(Model):
    session_id: str
    config_options: list[ConfigOption]


class ConfigOptionsParams(Model):
    """``agent/config/options``: nothing to name; the server's configuration decides."""


class SessionListParams(Model):
    workspace_folder: Uri | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=1000)] | None = None
    cursor: Annotated[StrictStr, Field(max_length=200)] | None = None


class SessionSummary(Model):
    session_id: str
    title: str
    workspace_folder: str
    created_at: str
    updated_at: str
    state: Literal["idle", "running", "requires_action"]
    usage: dict[str, Any]


class SessionListResult(Model):
    sessions: list[SessionSummary]
    next_cursor: str | None = None


class SessionSearchParams(Model):
    query: Annotated[StrictStr, Field(min_length=1, max_length=1000)]
    workspace_folder: Uri | None = None
    """Only this folder's sessions; absent: every workspace's."""
    limit: Annotated[StrictInt, Field(ge=1, le=200)] | None = None


class SessionSearchHit(Model):
    session_id: str
    title: str
    message_id: str
    snippet: str
    updated_at: str
    """When the session was last updated."""
    time: str
    """When the matching message was written."""
    kind: Literal["user", "assistant", "reasoning", "tool_input", "tool_output"]


class SessionSearchResult(Model):
    hits: list[SessionSearchHit]


class FromSeq(Model):
    from_seq: Count


class SessionLoadParams(Model):
    session_id: SessionId
    replay: Literal["none", "full"] | FromSeq = "none"


class SessionLoadResult(Model):
    state: Literal["idle", "running", "requires_action"]
    last_seq: int
    config_options: list[ConfigOption]


class SessionHistoryParams(Model):
    session_id: SessionId
    after_seq: Count | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=100_000)] | None = None


class HistoryEvent(Model):
    seq: int
    type: str
    time: str
    data: dict[str, Any]


class SessionHistoryResult(Model):
    events: list[HistoryEvent]


class SessionExportParams(Model):
    session_id: SessionId
    format: Literal["markdown", "json"] = "markdown"


class SessionExportResult(Model):
    text: str


class SessionIdParams(Model):
    """Params of the methods that only name a session (delete, compact, cancel)."""

    session_id: SessionId


class SetConfigOptionParams(Model):
    session_id: SessionId
    config_id: ConfigId
    value: Annotated[StrictStr, Field(min_length=1, max_length=500)]


class ConfigOptionsResult(Model):
    config_options: list[ConfigOption]


class EmptyResult(Model):
    pass


# -- §2 prompt, cancel, diagnostics --------------------------------------------------------


class PromptContext(Model):
    """The user's focus when the prompt was sent; rendered into the prompt's own message."""

    active_document: ResourceLinkBlock | dict[str, Any] | None = None
    cursor: Position | None = None
    selection: Range | None = None
    selected_text: Annotated[StrictStr, Field(max_length=100_000)] | None = None
    diagnostics: Annotated[list[Diagnostic], Field(max_length=1000)] | None = None


class UntilParams(Model):
    """ "Until green": after each turn ``command`` runs; while it fails, the agent goes on
    (protocol.md "Until green")."""

    command: Annotated[StrictStr, Field(min_length=1, max_length=10_000, pattern=r"\S")]
    max_attempts: Annotated[StrictInt, Field(ge=1, le=100)] = 5
    max_cost: Annotated[float, Field(gt=0)] | None = None


class PromptParams(Model):
    session_id: SessionId
    prompt: Annotated[list[ContentBlock], Field(min_length=1, max_length=1000)]
    client_message_id: Annotated[StrictStr, Field(min_length=1, max_length=200)] | None = None
    context: PromptContext | None = None
    until: UntilParams | None = None


class PromptResult(Model):
    user_message_id: str
    queued: bool


class DocumentDiagnostics(Model):
    uri: Uri
    version: StrictInt | None = None
    diagnostics: Annotated[list[Diagnostic], Field(max_length=10_000)]


class DiagnosticsParams(Model):
    items: Annotated[list[DocumentDiagnostics], Field(max_length=10_000)]


# -- editor queries ------------------------------------------------------------------------


class EditorQueryParams(Model):
    """``agent/editor/query`` (server → client): what the editor's language servers know."""

    session_id: str
    kind: QueryKind
    uri: str | None = None
    position: Position | None = None
    query: str | None = None


class EditorQueryResult(Model):
    """LSP's own shapes, one list: Location | LocationLink, Hover, DocumentSymbol |
    SymbolInformation, SymbolInformation | WorkspaceSymbol; ``[]``: no answer."""

    items: Annotated[list[dict[str, Any]], Field(max_length=100_000)]


# -- §6 saving the agent's edits -----------------------------------------------------------


class DocumentToSave(Model):
    uri: Uri
    version: StrictInt
    """The buffer's version right after the agent's edit: save only at this version."""


class SaveDocumentsParams(Model):
    """``agent/documents/save`` (server → client): save these buffers, as the agent left them."""

    documents: Annotated[list[DocumentToSave], Field(max_length=1000)]


class SavedDocument(Model):
    uri: Uri
    saved: StrictBool
    version: StrictInt | None = None
    """The buffer's version after saving (a format-on-save changes it)."""
    reason: StrictStr | None = None
    """Why it was not saved (the buffer changed since, read-only, a write error…)."""


class SaveDocumentsResult(Model):
    documents: Annotated[list[SavedDocument], Field(max_length=1000)]


# -- §3 streaming --------------------------------------------------------------------------


class SessionUpdateParams(Model):
    """``agent/session/update``: one per committed event (see ``wire/updates.py``)."""

    session_id: str
    seq: int
    update: dict[str, Any]


# -- §4 permission, diff -------------------------------------------------------------------

OptionKind = Literal["allow_once", "allow_session", "allow_always", "reject_once"]


class PermissionOptionModel(Model):
    option_id: str
    name: str
    kind: OptionKind


class FileDiffStat(Model):
    """One file of an edit ask: its lines added and deleted."""

    uri: str
    additions: int
    deletions: int


class EditSubject(Model):
    type: Literal["edit"] = "edit"
    change_set_id: str
    patch: str
    files: list[FileDiffStat]


class CommandSubject(Model):
    type: Literal["command"] = "command"
    command: str
    cwd: str


class FetchSubject(Model):
    type: Literal["fetch"] = "fetch"
    url: str


class RequestPermissionParams(Model):
    session_id: str
    tool_call_id: str
    title: str
    description: str | None = None
    permission: str
    patterns: list[str]
    always: list[str] = Field(default_factory=list)
    """The exact patterns "allow for session" / "always allow" save (empty: nothing)."""
    subject: EditSubject | CommandSubject | FetchSubject | None = None
    options: list[PermissionOptionModel]


class SelectedOutcome(Model):
    outcome: Literal["selected"]
    option_id: StrictStr
    reason: StrictStr | None = None
    modified_content: dict[Uri, StrictStr] | None = None
    """With an allow of an ``edit`` ask: uri → the whole text the user made of the proposal;
    the server applies it instead of the model's (files not of the ask are ignored)."""


class CancelledOutcome(Model):
    outcome: Literal["cancelled"]


class RequestPermissionResult(Model):
    outcome: Annotated[SelectedOutcome | CancelledOutcome, Field(discriminator="outcome")]


class DiffGetParams(Model):
    session_id: SessionId
    change_set_id: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    uri: Uri


class DiffGetResult(Model):
    uri: str
    base_text: str
    proposed_text: str
    patch: str


# -- §5 questions --------------------------------------------------------------------------


class QuestionOptionModel(Model):
    label: str
    description: str | None = None


class QuestionModel(Model):
    question_id: str
    header: str
    question: str
    options: list[QuestionOptionModel]
    multiple: bool = False
    custom: bool = True


class AskQuestionParams(Model):
    session_id: str
    tool_call_id: str
    questions: list[QuestionModel]


class AnswerModel(Model):
    selected: list[StrictStr] = []
    custom: StrictStr | None = None


class AnsweredOutcome(Model):
    outcome: Literal["answered"]
    answers: dict[str, AnswerModel]


class DeclinedOutcome(Model):
    outcome: Literal["declined"]


class AskQuestionResult(Model):
    result: Annotated[
        AnsweredOutcome | DeclinedOutcome | CancelledOutcome, Field(discriminator="outcome")
    ]


# -- §7 revert -----------------------------------------------------------------------------


class CheckpointFile(Model):
    uri: str
    path: str
    status: str
    additions: int
    deletions: int


class CheckpointModel(Model):
    checkpoint_id: str
    message_id: str
    created_at: str
    files: list[CheckpointFile]


class CheckpointListResult(Model):
    checkpoints: list[CheckpointModel]


class RevertStageParams(Model):
    session_id: SessionId
    message_id: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    force: StrictBool = False
    scope: Literal["both", "code", "conversation"] = "both"
    """``code``: restore the files, hide no message; ``conversation``: hide the messages,
    touch no file."""


class RevertStageResult(Model):
    files: list[str]
    """The uris the agent changed since the message (restored, unless also a conflict)."""
    conflicts: list[str]
    """The uris left alone because the user changed them since (use ``force``)."""


class RevertCommitResult(Model):
    dropped: list[str]


# -- review ------------------------------------------------------------------------------

HunkId = Annotated[StrictStr, Field(min_length=1, max_length=200)]


class ReviewListParams(Model):
    session_id: SessionId


CommentText = Annotated[StrictStr, Field(min_length=1, max_length=20_000)]


class ReviewComment(Model):
    """The user's comment on a hunk, or the reason they kept or undid it (``action``)."""

    comment_id: str
    text: str
    action: Literal["comment", "keep", "undo"]
    sent: bool
    """It went to the model with a user message already."""


class ReviewHunk(Model):
    hunk_id: str
    status: Literal["pending", "kept", "undone"]
    message_id: str
    range: Range | None
    """Its newText (undone: its oldText) in the file's current text; null: not found."""
    old_text: str
    new_text: str
    comments: list[ReviewComment] = []


class ReviewFile(Model):
    uri: str
    status: Literal["pending", "kept", "undone", "mixed"]
    hunks: list[ReviewHunk]


class ReviewListResult(Model):
    files: list[ReviewFile]
    unsent_comments: Count = 0
    """Comments (and reasons) the next prompt, or ``agent/review/sendComments``, carries."""

    def dump(self) -> dict[str, Any]:
        """Every key, ``range: null`` included (a hunk not found has a null range)."""
        return self.model_dump(by_alias=True, mode="json")


class ReviewResolveParams(Model):
    session_id: SessionId
    action: Literal["keep", "undo"]
    hunk_ids: Annotated[list[HunkId], Field(max_length=10_000)] | None = None
    uris: Annotated[list[Uri], Field(max_length=10_000)] | None = None
    """With ``hunkIds``: the union; neither: every pending hunk of the session."""
    reason: CommentText | None = None
    """Why: recorded as a comment on the hunks resolved, sent with the next prompt."""


class ReviewConflict(Model):
    hunk_id: str
    reason: str


class ReviewResolveResult(Model):
    resolved: list[str]
    conflicts: list[ReviewConflict]


class ReviewCommentParams(Model):
    session_id: SessionId
    hunk_id: HunkId
    """Any hunk the review lists: pending, kept or undone."""
    text: CommentText


class ReviewCommentResult(Model):
    comment_id: str


class ReviewSendCommentsResult(Model):
    user_message_id: str | None
    """The prompt made of the comments; null when there was none to send."""
    queued: bool = False
    """A turn is running: the prompt runs right after it."""
    sent: Count = 0

    def dump(self) -> dict[str, Any]:
        """Every key, ``userMessageId: null`` included."""
        return self.model_dump(by_alias=True, mode="json")


class CommitMessageParams(Model):
    uri: Uri | None = None
    """A folder in the repository (a workspace folder or one inside one); default: the
    first workspace folder."""


class CommitMessageResult(Model):
    message: str
    """The whole message: subject, then a blank line and a body when there is one."""


# -- §12a next-edit suggestions -------------------------------------------------------------

SuggestionId = Annotated[StrictStr, Field(min_length=1, max_length=200)]


class VersionedDocument(Model):
    uri: Uri
    version: StrictInt


class NextEditParams(Model):
    text_document: VersionedDocument
    position: Position
    """The cursor: the model is told where the user is."""


class NextEditResult(Model):
    """One suggested edit in that document, its range in the version asked about (``null``
    when nothing is worth suggesting)."""

    id: SuggestionId
    uri: Uri
    range: Range
    new_text: str
    reason: str


class NextEditFeedbackParams(Model):
    id: SuggestionId
    """A ``nextEdit`` result's id, or an inline completion item's (its command's argument)."""
    accepted: StrictBool


# -- §8 commands ---------------------------------------------------------------------------


class CommandTarget(Model):
    """The argument of ``lspAgent.fix|ask|explain``: where, and in which session."""

    uri: Uri
    range: Range
    diagnostics: Annotated[list[Diagnostic], Field(max_length=100)] | None = None
    session_id: SessionId | None = None
    prompt: Annotated[StrictStr, Field(max_length=100_000)] | None = None
    """The user's question (``lspAgent.ask``); without it the agent reviews the selection."""


class CommandSession(Model):
    """The argument of ``lspAgent.cancel|undo|redo``."""

    session_id: SessionId


class CommandStarted(Model):
    session_id: str


class UndoResult(Model):
    session_id: str
    message_id: str
    prompt: list[dict[str, Any]]


# -- the agent's review of the person's changes (docs/review.md) ---------------------------


class CodeReviewRunParams(Model):
    """``agent/codeReview/run`` and ``lspAgent.review``: which changes to review."""

    workspace_folder: Uri | None = None
    """The repository's folder (default: the first workspace folder)."""
    staged: StrictBool | None = None
    """The staged changes (the index against HEAD) instead of the work tree."""
    base: Annotated[StrictStr, Field(min_length=1, max_length=1000)] | None = None
    """Compare the work tree with this revision instead of HEAD."""


class RelatedLocation(Model):
    uri: str
    range: Range
    message: str


class CodeReviewFinding(Model):
    id: str
    uri: str
    range: Range
    """Whole lines: from the finding's line to the start of the line after its last."""
    severity: int
    """LSP's: 1 error, 2 warning, 3 information, 4 hint."""
    message: str
    related: list[RelatedLocation] = Field(default_factory=list)


class CodeReviewRunResult(Model):
    findings: list[CodeReviewFinding]
    """Also published as diagnostics (``source: "lsp-agent"``, ``code: "review"``)."""
    summary: str
    """The model's closing words (or why there was nothing to review)."""


class FindingTarget(Model):
    """The argument of ``lspAgent.fixFinding`` and ``lspAgent.dismissFinding``."""

    finding_id: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    session_id: SessionId | None = None
    """``fixFinding``: the session to prompt (default: the folder's latest, else a new one)."""


# -- the method table ----------------------------------------------------------------------

# -- MCP servers -----------------------------------------------------------------------


class McpListParams(Model):
    """No parameters."""


class McpServerModel(Model):
    name: str
    status: Literal["disabled", "starting", "connected", "failed", "crashed"]
    tools: list[str]
    """The names the model is offered (``<server>_<tool>``)."""
    error: str | None = None


class McpListResult(Model):
    servers: list[McpServerModel]


# -- saved approvals -----------------------------------------------------------------------


class PermissionsListParams(Model):
    workspace_folder: Uri | None = None
    """The project whose approvals (its own and its sessions') are listed; none: every one."""


class SavedApprovalModel(Model):
    scope: Literal["session", "project"]
    scope_id: str
    """The workspace folder uri (``project``) or the session id (``session``)."""
    permission: str
    pattern: str
    """Exactly as saved (``[*]`` is a literal ``*``); give it back to revoke it."""
    session_id: str
    """The session that gave it (it may have been deleted since)."""
    created_at: str


class PermissionsListResult(Model):
    approvals: list[SavedApprovalModel]


class PermissionsRevokeParams(Model):
    scope: Literal["session", "project"]
    scope_id: Annotated[StrictStr, Field(min_length=1, max_length=4096)]
    permission: Annotated[StrictStr, Field(min_length=1, max_length=200)]
    pattern: Annotated[StrictStr, Field(min_length=1, max_length=100_000)]


class PermissionsRevokeResult(Model):
    revoked: bool
    """False: no such approval was in force."""


Direction = Literal["client_to_server", "server_to_client"]
Kind = Literal["request", "notification"]


@attrs.frozen(kw_only=True)
class Method:
    name: str
    direction: Direction
    kind: Kind
    params: type[Model]
    result: type[Model] | None = None
    """None for notifications, and for requests whose result is ``null``."""

    @staticmethod
    def for_command(command: Command) -> Method:
        """A command's argument validated like a request's params."""
        return Method(
            name=command.name,
            direction="client_to_server",
            kind="request",
            params=command.argument,
            result=command.result,
        )


def _c2s(name: str, params: type[Model], result: type[Model] | None) -> Method:
    return Method(
        name=name, direction="client_to_server", kind="request", params=params, result=result
    )


METHODS: dict[str, Method] = {
    m.name: m
    for m in (
        _c2s("agent/session/new", SessionNewParams, SessionNewResult),
        _c2s("agent/session/list", SessionListParams, SessionListResult),
        _c2s("agent/session/search", SessionSearchParams, SessionSearchResult),
        _c2s("agent/session/load", SessionLoadParams, SessionLoadResult),
        _c2s("agent/session/history", SessionHistoryParams, SessionHistoryResult),
        _c2s("agent/session/export", SessionExportParams, SessionExportResult),
        _c2s("agent/session/delete", SessionIdParams, None),
        _c2s("agent/session/setConfigOption", SetConfigOptionParams, ConfigOptionsResult),
        _c2s("agent/config/options", ConfigOptionsParams, ConfigOptionsResult),
        _c2s("agent/session/compact", SessionIdParams, EmptyResult),
        _c2s("agent/session/prompt", PromptParams, PromptResult),
        Method(
            name="agent/session/cancel",
            direction="client_to_server",
            kind="notification",
            params=SessionIdParams,
        ),
        Method(
            name="agent/diagnostics",
            direction="client_to_server",
            kind="notification",
            params=DiagnosticsParams,
        ),
        _c2s("agent/diff/get", DiffGetParams, DiffGetResult),
        _c2s("agent/checkpoint/list", SessionIdParams, CheckpointListResult),
        _c2s("agent/revert/stage", RevertStageParams, RevertStageResult),
        _c2s("agent/revert/clear", SessionIdParams, EmptyResult),
        _c2s("agent/revert/commit", SessionIdParams, RevertCommitResult),
        _c2s("agent/mcp/list", McpListParams, McpListResult),
        _c2s("agent/permissions/list", PermissionsListParams, PermissionsListResult),
        _c2s("agent/permissions/revoke", PermissionsRevokeParams, PermissionsRevokeResult),
        _c2s("agent/review/list", ReviewListParams, ReviewListResult),
        _c2s("agent/review/resolve", ReviewResolveParams, ReviewResolveResult),
        _c2s("agent/codeReview/run", CodeReviewRunParams, CodeReviewRunResult),
        _c2s("agent/review/comment", ReviewCommentParams, ReviewCommentResult),
        _c2s("agent/review/sendComments", SessionIdParams, ReviewSendCommentsResult),
        _c2s("agent/commitMessage", CommitMessageParams, CommitMessageResult),
        _c2s("agent/nextEdit", NextEditParams, NextEditResult),
        Method(
            name="agent/nextEdit/feedback",
            direction="client_to_server",
            kind="notification",
            params=NextEditFeedbackParams,
        ),
        Method(
            name="agent/session/update",
            direction="server_to_client",
            kind="notification",
            params=SessionUpdateParams,
        ),
        Method(
            name="agent/session/requestPermission",
            direction="server_to_client",
            kind="request",
            params=RequestPermissionParams,
            result=RequestPermissionResult,
        ),
        Method(
            name="agent/editor/query",
            direction="server_to_client",
            kind="request",
            params=EditorQueryParams,
            result=EditorQueryResult,
        ),
        Method(
            name="agent/documents/save",
            direction="server_to_client",
            kind="request",
            params=SaveDocumentsParams,
            result=SaveDocumentsResult,
        ),
        Method(
            name="agent/session/askQuestion",
            direction="server_to_client",
            kind="request",
            params=AskQuestionParams,
            result=None,  # validated by the server with ``parse_question_result``
        ),
    )
}
"""Every custom method of protocol v1 that this server implements."""


@attrs.frozen(kw_only=True)
class Command:
    """A ``workspace/executeCommand`` id with its one argument and its result."""

    name: str
    argument: type[Model]
    result: type[Model]


COMMAND_TYPES: dict[str, Command] = {
    c.name: c
    for c in (
        Command(name="lspAgent.fix", argument=CommandTarget, result=CommandStarted),
        Command(name="lspAgent.explain", argument=CommandTarget, result=CommandStarted),
        Command(name="lspAgent.ask", argument=CommandTarget, result=CommandStarted),
        Command(name="lspAgent.cancel", argument=CommandSession, result=EmptyResult),
        Command(name="lspAgent.undo", argument=CommandSession, result=UndoResult),
        Command(name="lspAgent.redo", argument=CommandSession, result=EmptyResult),
        Command(name="lspAgent.review", argument=CodeReviewRunParams, result=CodeReviewRunResult),
        Command(name="lspAgent.fixFinding", argument=FindingTarget, result=CommandStarted),
        Command(name="lspAgent.dismissFinding", argument=FindingTarget, result=EmptyResult),
    )
}
"""The server's commands (protocol.md §8), in the order of ``COMMANDS``."""

QUESTION_RESULT = AskQuestionResult
"""``agent/session/askQuestion`` answers are a union at the top level; validated as
``{"result": answer}`` through this wrapper."""


class ErrorCodes:
    """JSON-RPC error codes (protocol.md "Errors")."""

    INVALID_PARAMS = -32602
    SESSION_NOT_FOUND = -33001
    SESSION_BUSY = -33002
    VERSION_CONFLICT = -33003
    REVERT_BLOCKED = -33004
