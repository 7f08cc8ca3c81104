"""The script: what the fake model answers, turn by turn (docs/fake-llm.md), parsed and checked."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Literal, Self

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

DEFAULT_SIDE_TEXT = "Test title"

AnthropicStopReason = Literal[
    "end_turn",
    "max_tokens",
    "stop_sequence",
    "tool_use",
    "pause_turn",
    "refusal",
    "model_context_window_exceeded",
]
OpenAIFinishReason = Literal["stop", "length", "tool_calls", "content_filter"]
ErrorPreset = Literal[
    "context_overflow",
    "rate_limit",
    "overloaded",
    "auth",
    "server_error",
    "invalid_request",
]


class _StrictModel(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class ToolCall(_StrictModel):
    """One tool call made by the model.

    ``input`` is serialised to JSON and streamed in several fragments. ``arguments_raw``
    streams a literal string instead (e.g. deliberately malformed JSON). ``id`` overrides
    the generated ``toolu_…``/``call_…`` id.
    """

    name: str = Field(min_length=1)
    input: dict[str, Any] = Field(default_factory=dict)
    arguments_raw: str | None = None
    id: str | None = Field(default=None, min_length=1)


class TurnUsage(_StrictModel):
    """Usage numbers to report; ``None`` fields get the deterministic defaults."""

    input_tokens: int | None = Field(default=None, ge=0)
    output_tokens: int | None = Field(default=None, ge=0)
    cache_read_input_tokens: int | None = Field(default=None, ge=0)
    cache_creation_input_tokens: int | None = Field(default=None, ge=0)


class StreamError(_StrictModel):
    """An error event sent in the middle of a 200 stream, after ``after`` SSE events."""

    after: int = Field(default=0, ge=0)
    type: str = "overloaded_error"
    message: str = "Overloaded"


class Inject(_StrictModel):
    """Raw bytes written into a stream before event ``before`` (malformed-SSE tests)."""

    before: int = Field(ge=0)
    raw: str


_SUCCESS_FIELDS = frozenset(
    {"text", "thinking", "signature", "tool_calls", "stop_reason", "usage", "stream_error"}
)
_STREAM_FAULT_FIELDS = frozenset({"drop_after", "stall_after", "event_order", "inject"})
_ERROR_ONLY_FIELDS = frozenset(
    {
        "error_type",
        "error_message",
        "error_code",
        "times",
        "retry_after",
        "retry_after_ms",
        "should_retry",
        "then",
    }
)


class Turn(_StrictModel):
    """One scripted model response (or a run of HTTP errors followed by ``then``)."""

    # success part
    text: str | list[str] | None = None
    thinking: str | list[str] | None = None
    signature: str | None = None
    tool_calls: list[ToolCall] = Field(default_factory=list)
    stop_reason: AnthropicStopReason | OpenAIFinishReason | None = None
    usage: TurnUsage | None = None
    stream_error: StreamError | None = None
    # error part
    status: int | None = Field(default=None, ge=400, le=599)
    error: ErrorPreset | None = None
    error_type: str | None = None
    error_message: str | None = None
    error_code: str | None = None
    times: int = Field(default=1, ge=1, le=1000)
    retry_after: float | None = Field(default=None, ge=0)
    retry_after_ms: float | None = Field(default=None, ge=0)
    should_retry: bool | None = None
    then: Turn | None = None
    # faults and timing
    drop_after: int | None = Field(default=None, ge=0)
    stall_after: int | None = Field(default=None, ge=0)
    hold_after: int | None = Field(default=None, ge=0)
    event_order: list[int] | None = None
    inject: list[Inject] = Field(default_factory=list)
    delay: float = Field(default=0.0, ge=0, le=600)
    chunk_delay: float = Field(default=0.0, ge=0, le=60)
    paced: bool = False

    @property
    def is_error(self) -> bool:
        return self.status is not None or self.error is not None

    @model_validator(mode="after")
    def _check_consistency(self) -> Self:
        given = self.model_fields_set
        if self.is_error:
            clash = sorted(given & _SUCCESS_FIELDS)
            if clash:
                raise ValueError(
                    f"an error turn (`status`/`error`) cannot also set {clash}; "
                    "put the response served after the errors in `then`"
                )
            faults = sorted(given & (_STREAM_FAULT_FIELDS | {"hold_after"}))
            if faults:
                raise ValueError(f"{faults} apply to success turns, not error turns")
        else:
            misplaced = sorted(given & _ERROR_ONLY_FIELDS)
            if misplaced:
                raise ValueError(
                    f"{misplaced} only apply to error turns; set `status` or `error` too"
                )
            if not given & (_SUCCESS_FIELDS | _STREAM_FAULT_FIELDS):
                raise ValueError(
                    "empty turn: give `text`, `thinking`, `tool_calls`, `stream_error`, "
                    '`drop_after`, or an error `status`/`error` (use "text": "" for an '
                    "empty answer)"
                )
        if "signature" in given and self.thinking is None:
            raise ValueError("`signature` needs `thinking`")
        return self


class FimAnswer(_StrictModel):
    """One answer of ``POST /v1/completions`` (the legacy completions a fill-in-the-middle
    model serves with ``prompt`` + ``suffix``)."""

    text: str | list[str] = ""
    """The completion; a list gives the exact streamed pieces."""
    delay: float = Field(default=0.0, ge=0, le=600)
    """Seconds before the response headers (the model's own time)."""
    prompt_tokens: int | None = Field(default=None, ge=0)
    completion_tokens: int | None = Field(default=None, ge=0)
    status: int | None = Field(default=None, ge=400, le=599)
    """An HTTP error instead of the answer."""
    prompt_contains: str | None = Field(default=None, min_length=1)
    """Served to every request whose ``prompt`` holds this text, outside the order (e.g. the
    next-edit question apart from the inline completions a test cannot count)."""


class Script(_StrictModel):
    """A whole script. A bare JSON list is accepted as ``{"turns": [...]}``."""

    turns: list[Turn] = Field(default_factory=list)
    side_requests_use_script: bool = False
    side_text: str = DEFAULT_SIDE_TEXT
    side_turn: Turn | None = None
    """Served to every side request instead of ``side_text`` (e.g. a stalled summary)."""
    completions: list[FimAnswer] = Field(default_factory=list)
    """The answers to ``/v1/completions``, in order, the last one repeated (none: an empty
    completion); they never use or advance ``turns``."""
    by_history: bool = False
    """Serve turn *k* to a request whose conversation holds *k* assistant messages, instead
    of the turns in arrival order: concurrent conversations each walk the script."""

    @model_validator(mode="after")
    def _history_turns_are_answers(self) -> Self:
        if self.by_history and any(turn.is_error for turn in self.turns):
            raise ValueError("`by_history` scripts take success turns only")
        if self.side_turn is not None and self.side_turn.is_error:
            raise ValueError("`side_turn` must be a success turn")
        return self

    @model_validator(mode="before")
    @classmethod
    def _accept_bare_list(cls, data: Any) -> Any:
        if isinstance(data, list):
            return {"turns": data}
        return data


class ScriptError(ValueError):
    """The script is not valid; the message lists every problem with its location."""


def _format_validation_error(err: ValidationError, source: str) -> str:
    lines = [f"invalid fake LLM script ({source}):"]
    for item in err.errors():
        loc = ".".join(str(part) for part in item["loc"]) or "<root>"
        lines.append(f"  {loc}: {item['msg']}")
    return "\n".join(lines)


ScriptLike = Script | Mapping[str, Any] | Sequence[Any]


def parse_script(data: ScriptLike | None, *, source: str = "<data>") -> Script:
    """Validate ``data`` (a ``Script``, a mapping or a list of turns) into a ``Script``."""
    if data is None:
        return Script()
    if isinstance(data, Script):
        return data
    if isinstance(data, str | bytes):
        raise ScriptError(f"invalid fake LLM script ({source}): expected an object or a list")
    try:
        return Script.model_validate(data)
    except ValidationError as err:
        raise ScriptError(_format_validation_error(err, source)) from None


def load_script(path: str | os.PathLike[str]) -> Script:
    """Read and validate a JSON script file."""
    p = Path(path)
    try:
        raw = json.loads(p.read_text(encoding="utf-8"))
    except OSError as err:
        raise ScriptError(f"cannot read fake LLM script {p}: {err}") from err
    except json.JSONDecodeError as err:
        raise ScriptError(f"fake LLM script {p} is not valid JSON: {err}") from err
    return parse_script(raw, source=str(p))
