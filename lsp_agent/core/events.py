"""Domain events: the event log is the truth; everything else is derived from it.

One frozen dataclass per event type (below), each naming its ``type``; :data:`Event` is
their union, discriminated by that ``type``. Writers build these; :func:`encode` turns one
into the JSON ``data`` object stored in the log (camelCase keys, as ``sessions history`` and
``agent/session/history`` show it), and :func:`decode` reads one back (a
:class:`StoredEvent`'s :attr:`~StoredEvent.event`). Readers use the fields, so mypy checks
them. docs/events.md's catalogue is rendered from these definitions
(``python -m lsp_agent.core.event_catalogue``) and a test fails when it drifts.

The stored shape is the contract with every database already written: a field's JSON key is
its name in camelCase; a field defaulting to ``None`` is left out when it is ``None`` (an
optional key); a key a reader may find missing in old events has a default. Every event also
carries a schema ``version`` so it can be upgraded later.

Dataclasses (slots, no validation) rather than pydantic: a long session decodes thousands of
events per load, and a turn encodes one per batch of streamed text.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar, Final, Literal, NotRequired, TypedDict, TypeVar

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
    "review_commented",
    "review_comments_sent",
    "until_checked",
    "suggestion_feedback",
]

JsonObject = dict[str, Any]
"""A JSON object this module passes through as it is (content blocks, tool input, …)."""

ToolCallStatus = Literal[
    "pending", "in_progress", "completed", "failed", "cancelled", "interrupted"
]
MessageStatus = Literal["completed", "interrupted", "failed"]
SessionState = Literal["running", "requires_action", "idle"]


# -- nested shapes (plain JSON objects, typed for mypy) -----------------------------------------


class StateError(TypedDict):
    """Why a turn stopped or waits: ``retryAt`` (ISO 8601) while a retry waits."""

    message: str
    retryable: bool
    retryAt: NotRequired[str]


class TurnOwner(TypedDict):
    """The process that runs a turn (recovery checks whether it still lives)."""

    pid: int
    startTicks: int | None


class ChangedFile(TypedDict):
    """One file a step changed on disk."""

    path: str
    status: str
    additions: int
    deletions: int


class HunkRecord(TypedDict):
    """One change of a step, to keep or undo (``core/review``)."""

    hunkId: str
    path: str
    kind: NotRequired[Literal["created", "deleted", "modified"]]
    oldStart: NotRequired[int]
    newStart: NotRequired[int]
    oldText: NotRequired[str]
    newText: NotRequired[str]


class HunkConflict(TypedDict):
    """A hunk that could not be undone, and why."""

    hunkId: str
    reason: str


class ReviewFile(TypedDict):
    """The review list's counts of one file."""

    uri: str
    status: str
    pending: int
    kept: int
    undone: int


# -- the events ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class SessionCreated:
    """A new session (``workspaceFolder`` is a ``file://`` URI; ``parentSessionId``: the
    session whose ``task`` tool started this one)."""

    TYPE: ClassVar[Literal["session_created"]] = "session_created"
    session_id: str
    workspace_folder: str
    title: str = ""
    model: str
    mode: str
    parent_session_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessageAdmitted:
    """User input made durable, before anything else happens (the inbox), not yet in the
    conversation; ``attachments``: ``[{text, source, image?}]``, what the content's links and
    mentions named, read at admission (the model is sent them after the content; ``image``:
    a linked image file's ``image`` block). An ``image`` block of ``content`` holds its
    bytes (core/images.py)."""

    TYPE: ClassVar[Literal["user_message_admitted"]] = "user_message_admitted"
    message_id: str
    content: list[JsonObject]
    client_message_id: str | None = None
    attachments: list[JsonObject] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessagePromoted:
    """The input joins the conversation at a safe point (the start of a turn)."""

    TYPE: ClassVar[Literal["user_message_promoted"]] = "user_message_promoted"
    message_id: str
    content: list[JsonObject] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessageStarted:
    """A model call begins."""

    TYPE: ClassVar[Literal["assistant_message_started"]] = "assistant_message_started"
    message_id: str
    model: str | None = None
    step: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta:
    """Streamed text, committed in batches of at most 8 ms (the first delta after a quiet
    window at once)."""

    TYPE: ClassVar[Literal["text_delta"]] = "text_delta"
    message_id: str
    part_id: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta:
    """Streamed thinking, batched like ``text_delta``."""

    TYPE: ClassVar[Literal["reasoning_delta"]] = "reasoning_delta"
    message_id: str
    part_id: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningEnded:
    """A thinking block closed (Anthropic signatures are kept and sent back)."""

    TYPE: ClassVar[Literal["reasoning_ended"]] = "reasoning_ended"
    message_id: str
    part_id: str
    signature: str | None = None
    redacted_data: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallUpdated:
    """An upsert of a tool call; ``title``: the tool's own words for the call (every update
    carries it); ``exitCode``: a finished command's exit status (``bash``); ``refused``: a
    ``failed`` call the permission gate did not allow (a person or a rule said no)."""

    TYPE: ClassVar[Literal["tool_call_updated"]] = "tool_call_updated"
    tool_call_id: str
    message_id: str
    tool_name: str
    status: ToolCallStatus
    kind: str | None = None
    title: str | None = None
    input: JsonObject | None = None
    output: str | None = None
    error: str | None = None
    exit_code: int | None = None
    refused: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessageEnded:
    """A model call ended."""

    TYPE: ClassVar[Literal["assistant_message_ended"]] = "assistant_message_ended"
    message_id: str
    status: MessageStatus
    finish_reason: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdated:
    """Session totals as the provider reported them; ``contextUsed`` is the last call's."""

    TYPE: ClassVar[Literal["usage_updated"]] = "usage_updated"
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    context_used: int = 0
    context_size: int = 0
    cost: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class StateChanged:
    """The session's state; a retry wait carries ``error.retryAt``; a turn's first
    ``running`` names the process that owns it (``owner``) and carries ``notes``, problems
    (an MCP server that could not start) not yet told in this session."""

    TYPE: ClassVar[Literal["state_changed"]] = "state_changed"
    state: SessionState
    stop_reason: str | None = None
    error: StateError | None = None
    owner: TurnOwner | None = None
    notes: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TitleSet:
    """The side request for a title answered."""

    TYPE: ClassVar[Literal["title_set"]] = "title_set"
    title: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionAsked:
    """The user is asked (the session is ``requires_action``; see permissions.md)."""

    TYPE: ClassVar[Literal["permission_asked"]] = "permission_asked"
    tool_call_id: str
    message_id: str
    permission: str
    patterns: list[str]
    always: list[str]
    title: str
    description: str | None = None
    subject: JsonObject | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PermissionResolved:
    """The answer to an ask; with ``allow_session``/``allow_always``, ``always`` holds the
    patterns now approved for the session / the project; ``modified``: the user edited the
    proposed text."""

    TYPE: ClassVar[Literal["permission_resolved"]] = "permission_resolved"
    tool_call_id: str
    message_id: str | None = None
    permission: str
    state: Literal["allowed", "rejected", "cancelled"]
    option_kind: str | None = None
    reason: str | None = None
    always: list[str] | None = None
    modified: bool | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionAsked:
    """The ``question`` tool asks: ``[{questionId, header, question, options, multiple,
    custom}]``."""

    TYPE: ClassVar[Literal["question_asked"]] = "question_asked"
    tool_call_id: str
    questions: list[JsonObject]


@dataclass(frozen=True, slots=True, kw_only=True)
class QuestionResolved:
    """The answer to the ``question`` tool."""

    TYPE: ClassVar[Literal["question_resolved"]] = "question_resolved"
    tool_call_id: str
    state: Literal["answered", "declined", "cancelled"]
    answers: JsonObject | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanUpdated:
    """The ``todowrite`` list: ``[{content, status, priority}]``."""

    TYPE: ClassVar[Literal["plan_updated"]] = "plan_updated"
    tool_call_id: str
    entries: list[JsonObject]


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessStarted:
    """A command's process group, recorded before the command runs, so a later process can
    tell whether the group is still ours to clean up."""

    TYPE: ClassVar[Literal["process_started"]] = "process_started"
    tool_call_id: str
    pgid: int
    start_ticks: int
    owner_pid: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ProcessEnded:
    """A command's process group ended."""

    TYPE: ClassVar[Literal["process_ended"]] = "process_ended"
    tool_call_id: str
    pgid: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolWithheld:
    """The circuit breaker took a tool away for the rest of the turn."""

    TYPE: ClassVar[Literal["tool_withheld"]] = "tool_withheld"
    tool_name: str
    error: str
    failures: int


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextBuilt:
    """The baseline note of a context epoch (``instructions``: path → text), built right
    before the session's first model call; every request of the epoch's system prompt ends
    with ``baseline`` (context.md)."""

    TYPE: ClassVar[Literal["context_built"]] = "context_built"
    epoch: int
    baseline: str
    date: str
    instructions: dict[str, str] = field(default_factory=dict)
    skills: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextNoted:
    """What changed since: ``text`` joins the history as a user-role message; ``date``,
    ``instructions`` and ``skills`` are the new snapshot; a hunk undone is named once
    (``reviewHunks``), and a committed ``code``-scope revert likewise (``codeRewinds``: the
    ``revert_committed`` seqs)."""

    TYPE: ClassVar[Literal["context_noted"]] = "context_noted"
    message_id: str
    text: str
    date: str | None = None
    instructions: dict[str, str] | None = None
    skills: str | None = None
    review_hunks: list[str] | None = None
    code_rewinds: list[int] | None = None
    suggestion_feedback: list[int] | None = None
    """The ``suggestion_feedback`` seqs this note told the model about."""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionStarted:
    """Compaction began (compaction.md)."""

    TYPE: ClassVar[Literal["compaction_started"]] = "compaction_started"
    auto: bool = True
    reason: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class CompactionEnded:
    """With ``summary``, the model from now on sees a checkpoint with it instead of the
    messages before ``firstKeptMessageId`` (absent: all messages before this event); nothing
    is deleted."""

    TYPE: ClassVar[Literal["compaction_ended"]] = "compaction_ended"
    auto: bool = True
    summary: str | None = None
    first_kept_message_id: str | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class CheckpointRecorded:
    """What a step changed on disk (``before``/``after``: trees of the hidden snapshot
    repository)."""

    TYPE: ClassVar[Literal["checkpoint_recorded"]] = "checkpoint_recorded"
    checkpoint_id: str
    message_id: str
    step_message_id: str
    before: str
    after: str
    files: list[ChangedFile] = field(default_factory=list)
    patch: str = ""


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertStaged:
    """A revert to before ``messageId`` staged (``hidden``: the messages it hides;
    ``scope``: ``both``, ``conversation`` or ``code``; absent in old events: ``both``)."""

    TYPE: ClassVar[Literal["revert_staged"]] = "revert_staged"
    message_id: str
    restore_tree: str
    undo_tree: str
    files: list[str] = field(default_factory=list)
    conflicts: list[str] = field(default_factory=list)
    hidden: list[str] = field(default_factory=list)
    scope: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertCleared:
    """A staged revert taken back (its files restored)."""

    TYPE: ClassVar[Literal["revert_cleared"]] = "revert_cleared"
    message_id: str | None = None
    files: list[str] = field(default_factory=list)
    scope: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class RevertCommitted:
    """A staged revert made final: ``dropped`` messages leave the session."""

    TYPE: ClassVar[Literal["revert_committed"]] = "revert_committed"
    message_id: str | None = None
    dropped: list[str] = field(default_factory=list)
    scope: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConfigChanged:
    """The session's ``mode``, ``model`` or ``thought_level`` (``configId``) was set to
    ``value`` (``agent/session/setConfigOption``); ``configOptions`` is the whole list after
    the change. A running turn takes it up at its next step, never during a tool call.
    Setting the current value again records nothing; a mode change that moves a session on
    its mode's model to the new mode's (``agents.<mode>.model``, configuration.md) records a
    second ``config_changed`` for the model."""

    TYPE: ClassVar[Literal["config_changed"]] = "config_changed"
    config_id: str
    value: str
    config_options: list[JsonObject] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewRecorded:
    """A step's changes as hunks to keep or undo (review.md); ``files`` is the whole review
    list's counts afterwards."""

    TYPE: ClassVar[Literal["review_recorded"]] = "review_recorded"
    checkpoint_id: str
    message_id: str
    step_message_id: str
    before: str
    after: str
    hunks: list[HunkRecord] = field(default_factory=list)
    files: list[ReviewFile] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewResolved:
    """Hunks kept or undone (``agent/review/resolve``); ``lines``: where each undone hunk's
    old text now starts; ``files``: the review list's counts afterwards."""

    TYPE: ClassVar[Literal["review_resolved"]] = "review_resolved"
    action: Literal["keep", "undo"]
    resolved: list[str] = field(default_factory=list)
    conflicts: list[HunkConflict] = field(default_factory=list)
    files: list[ReviewFile] = field(default_factory=list)
    lines: dict[str, int] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewCommented:
    """The user's comment on hunks (``agent/review/comment``), or the reason they gave for
    keeping or undoing them (``agent/review/resolve`` with a ``reason``: ``action``);
    ``lines``: each hunk's 0-based line in its file when commented; ``files``: the review
    list's counts (unchanged: the editors list the hunks again to show the comment). It goes
    to the model with the next prompt (review.md "Comments")."""

    TYPE: ClassVar[Literal["review_commented"]] = "review_commented"
    comment_id: str
    hunk_ids: list[str]
    text: str
    action: Literal["comment", "keep", "undo"] = "comment"
    lines: dict[str, int] | None = None
    files: list[ReviewFile] = field(default_factory=list)


@dataclass(frozen=True, slots=True, kw_only=True)
class ReviewCommentsSent:
    """These comments went to the model as part of the user message ``messageId`` (the next
    prompt, or ``agent/review/sendComments``); ``files``: the review list's counts."""

    TYPE: ClassVar[Literal["review_comments_sent"]] = "review_comments_sent"
    comment_ids: list[str]
    message_id: str
    files: list[ReviewFile] = field(default_factory=list)


UntilVerdict = Literal["passed", "retry", "attempts", "cost", "stopped"]


@dataclass(frozen=True, slots=True, kw_only=True)
class UntilChecked:
    """ "Until green" (``run --until``, a prompt's ``until``): the person's ``command`` was
    run after turn ``attempt`` of at most ``maxAttempts``. ``exitCode``: how it ended (none
    when it timed out or could not start: ``error`` says why); ``verdict``: ``passed`` (it
    exited 0: done), ``retry`` (its failure is the next prompt), ``attempts`` or ``cost``
    (that bound was reached, it still fails), ``stopped`` (the turn ended otherwise, e.g.
    cancelled or failed: the command was not run)."""

    TYPE: ClassVar[Literal["until_checked"]] = "until_checked"
    command: str
    attempt: int
    max_attempts: int
    verdict: UntilVerdict
    exit_code: int | None = None
    error: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SuggestionFeedback:
    """The user took (``accepted``) or dismissed an editor suggestion the completion model
    made in this session's folder: an inline completion or a next edit (protocol.md §12a).
    The model hears of it once, in a note at its next turn."""

    TYPE: ClassVar[Literal["suggestion_feedback"]] = "suggestion_feedback"
    suggestion_id: str
    kind: Literal["inline", "next_edit"]
    accepted: bool
    uri: str
    line: int
    """0-based, where the suggestion was."""
    summary: str
    """What it suggested, in a few words (``rename x → y``)."""


Event = (
    SessionCreated
    | UserMessageAdmitted
    | UserMessagePromoted
    | AssistantMessageStarted
    | TextDelta
    | ReasoningDelta
    | ReasoningEnded
    | ToolCallUpdated
    | AssistantMessageEnded
    | UsageUpdated
    | StateChanged
    | TitleSet
    | PermissionAsked
    | PermissionResolved
    | QuestionAsked
    | QuestionResolved
    | PlanUpdated
    | ProcessStarted
    | ProcessEnded
    | ToolWithheld
    | ContextBuilt
    | ContextNoted
    | CompactionStarted
    | CompactionEnded
    | CheckpointRecorded
    | RevertStaged
    | RevertCleared
    | RevertCommitted
    | ConfigChanged
    | ReviewRecorded
    | ReviewResolved
    | ReviewCommented
    | ReviewCommentsSent
    | UntilChecked
    | SuggestionFeedback
)
"""Every event, discriminated by its class's ``TYPE``."""

EVENT_CLASSES: Final[Mapping[EventType, type[Event]]] = {
    cls.TYPE: cls
    for cls in (
        SessionCreated,
        UserMessageAdmitted,
        UserMessagePromoted,
        AssistantMessageStarted,
        TextDelta,
        ReasoningDelta,
        ReasoningEnded,
        ToolCallUpdated,
        AssistantMessageEnded,
        UsageUpdated,
        StateChanged,
        TitleSet,
        PermissionAsked,
        PermissionResolved,
        QuestionAsked,
        QuestionResolved,
        PlanUpdated,
        ProcessStarted,
        ProcessEnded,
        ToolWithheld,
        ContextBuilt,
        ContextNoted,
        CompactionStarted,
        CompactionEnded,
        CheckpointRecorded,
        RevertStaged,
        RevertCleared,
        RevertCommitted,
        ConfigChanged,
        ReviewRecorded,
        ReviewResolved,
        ReviewCommented,
        ReviewCommentsSent,
        UntilChecked,
        SuggestionFeedback,
    )
}
"""``type`` → its definition, in catalogue order."""


# -- the codec -----------------------------------------------------------------------------------


class EventDataError(ValueError):
    """A stored ``data`` object that is not the shape of its ``type``."""


@attrs.frozen
class FieldShape:
    """How one field is stored: its JSON key, and whether the key may be absent."""

    name: str
    key: str
    required: bool
    omit_none: bool
    """A field defaulting to ``None``: left out of the JSON when it is ``None``."""


def json_key(name: str) -> str:
    """``tool_call_id`` → ``toolCallId``."""
    head, *rest = name.split("_")
    return head + "".join(word.capitalize() for word in rest)


def field_shapes(cls: type[Event]) -> tuple[FieldShape, ...]:
    """The stored shape of an event class, in field order."""
    return _SHAPES[cls.TYPE]


def _shapes(cls: type[Any]) -> tuple[FieldShape, ...]:
    shapes = []
    for one in dataclasses.fields(cls):
        no_default = (
            one.default is dataclasses.MISSING and one.default_factory is dataclasses.MISSING
        )
        shapes.append(
            FieldShape(
                name=one.name,
                key=json_key(one.name),
                required=no_default,
                omit_none=not no_default and one.default is None,
            )
        )
    return tuple(shapes)


_SHAPES: Final[Mapping[str, tuple[FieldShape, ...]]] = {
    type_: _shapes(cls) for type_, cls in EVENT_CLASSES.items()
}


def encode(event: Event) -> JsonObject:
    """The ``data`` object stored for ``event``."""
    data: JsonObject = {}
    for shape in _SHAPES[event.TYPE]:
        value = getattr(event, shape.name)
        if value is None and shape.omit_none:
            continue
        data[shape.key] = value
    return data


def decode(type_: str, data: Mapping[str, Any]) -> Event:
    """The event a stored ``type`` and ``data`` object are; keys this version does not know
    are ignored. Raises :class:`EventDataError` for an unknown type or a missing key."""
    decoder = _DECODERS.get(type_)
    if decoder is None:
        raise EventDataError(f"unknown event type {type_!r}")
    if not isinstance(data, Mapping):
        raise EventDataError(f"the data of a {type_} event must be an object")
    return decoder(data)


def _decoder(cls: type[Any]) -> Callable[[Mapping[str, Any]], Event]:
    """One class's decoder, its key lists computed once (it runs for every event loaded)."""
    shapes = _SHAPES[cls.TYPE]
    pairs = tuple((s.key, s.name) for s in shapes)
    required = frozenset(s.key for s in shapes if s.required)

    def decode_one(data: Mapping[str, Any]) -> Event:
        if not required <= data.keys():
            missing = sorted(required - data.keys())[0]
            raise EventDataError(f"data.{missing} is missing from a {cls.TYPE} event")
        event: Event = cls(**{name: data[key] for key, name in pairs if key in data})
        return event

    return decode_one


_DECODERS: Final[Mapping[str, Callable[[Mapping[str, Any]], Event]]] = {
    type_: _decoder(cls) for type_, cls in EVENT_CLASSES.items()
}


E = TypeVar("E", bound=Event)


def message_id_of(event: Event) -> str | None:
    """The message an event belongs to, for the types that name one."""
    message_id = getattr(event, "message_id", None)
    return message_id if isinstance(message_id, str) else None


def of_type(events: Iterable[StoredEvent], kind: type[E]) -> list[E]:
    """The events of one type, decoded (the others are not: most of a log is streamed text)."""
    found: list[E] = []
    for stored in events:
        if stored.type == kind.TYPE:
            event = stored.event
            if isinstance(event, kind):
                found.append(event)
    return found


@attrs.frozen(kw_only=True)
class NewEvent:
    """An event about to be appended: the stored form (``type``, the JSON ``data``).
    ``time`` is ISO 8601 UTC (set by the caller's clock)."""

    type: EventType
    data: JsonObject
    time: str
    version: int = EVENT_VERSION

    @classmethod
    def of(cls, event: Event, time: str) -> NewEvent:
        """``event`` encoded for the log."""
        return cls(type=event.TYPE, data=encode(event), time=time)


@attrs.frozen(kw_only=True)
class StoredEvent:
    """An event as committed: ``seq`` increases by one per session, with no gaps.

    ``data`` is the JSON object as stored (shown as it is by the history); readers use
    :attr:`event`, decoded from it when first asked for."""

    session_id: str
    seq: int
    type: EventType
    data: JsonObject
    time: str
    version: int = EVENT_VERSION

    @functools.cached_property
    def event(self) -> Event:
        """The typed event (raises :class:`EventDataError` if ``data`` is not its shape)."""
        return decode(self.type, self.data)

    def to_json(self) -> JsonObject:
        """The shape of ``agent/session/history`` entries."""
        return {"seq": self.seq, "type": self.type, "time": self.time, "data": self.data}
