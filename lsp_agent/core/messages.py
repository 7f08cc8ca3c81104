"""The provider-neutral conversation: what the model sees and what it sends back.

Providers translate these into their wire formats; nothing here knows about any SDK.
Tool results travel in a ``user`` message (the Anthropic shape); the OpenAI provider
splits them into ``tool`` role messages.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Literal, get_args

import attrs

from lsp_agent.core.permission_kinds import PermissionKind

Role = Literal["user", "assistant"]


@attrs.frozen(kw_only=True)
class TextPart:
    text: str


@attrs.frozen(kw_only=True)
class ReasoningPart:
    """Model thinking. ``signature`` (Anthropic) must be sent back unchanged across tool turns."""

    text: str
    signature: str | None = None
    redacted_data: str | None = None


@attrs.frozen(kw_only=True)
class ToolCallPart:
    tool_call_id: str
    name: str
    input: dict[str, Any]


@attrs.frozen(kw_only=True)
class ToolResultPart:
    tool_call_id: str
    output: str
    is_error: bool = False


@attrs.frozen(kw_only=True)
class ImagePart:
    """An image the user attached (``core/images.py``): sent to a model that takes images."""

    media_type: str
    data: str = attrs.field(repr=False)
    """Base64."""


Part = TextPart | ReasoningPart | ToolCallPart | ToolResultPart | ImagePart


@attrs.frozen(kw_only=True)
class Message:
    role: Role
    parts: tuple[Part, ...]


@attrs.frozen(kw_only=True)
class Usage:
    """Token counts as the provider reported them (never estimated).

    ``input_tokens`` excludes cached tokens; the context in use is the sum of the three
    input counts plus the output.
    """

    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    reasoning_tokens: int = 0

    @property
    def context_tokens(self) -> int:
        return (
            self.input_tokens
            + self.cache_read_tokens
            + self.cache_write_tokens
            + self.output_tokens
        )

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            input_tokens=self.input_tokens + other.input_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
            cache_read_tokens=self.cache_read_tokens + other.cache_read_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            reasoning_tokens=self.reasoning_tokens + other.reasoning_tokens,
        )


@attrs.frozen(kw_only=True)
class SystemBlock:
    """One block of the system prompt. ``cache`` marks the end of a stable prefix."""

    text: str
    cache: bool = False


ToolKind = Literal["read", "edit", "delete", "move", "search", "execute", "think", "fetch", "other"]
"""What a tool does, as an editor shows its calls (the protocol's tool call ``kind``; ACP's
list less its ``switch_mode``, which no tool is)."""

TOOL_KINDS: Final[tuple[ToolKind, ...]] = get_args(ToolKind)
"""Every :data:`ToolKind`, in order: the one list the protocol schema exports
(``toolKinds`` in docs/protocol.schema.json) and the front-ends are checked against."""


CallDescriber = Callable[[Mapping[str, Any], Sequence[str]], "str | None"]
"""(a call's input, the workspace folders) → the call's title, or None."""


@attrs.frozen(kw_only=True)
class ToolSpec:
    """A tool as the core knows it. The model is sent only ``name``, ``description`` and
    ``input_schema``; ``kind`` (how its calls are shown), ``mutates`` (whether it may change
    files, so its step is snapshotted) and ``permission`` (what its asks use, the rules and
    a mode's limits match: the tool declares it) are for the turn."""

    name: str
    description: str
    input_schema: dict[str, Any]
    kind: ToolKind
    mutates: bool
    permission: PermissionKind
    describe: CallDescriber | None = attrs.field(default=None, eq=False, repr=False)
    """The tool's own words for a call of it, from its input and the workspace folders
    ("Run python3 hello.py"); None when the input does not fit (still streaming): the title
    every update of the call carries (the tool's name without one)."""


@attrs.frozen(kw_only=True)
class ThinkingConfig:
    budget_tokens: int = 4000


REASONING_BUDGETS: Final[Mapping[str, int]] = {"low": 1024, "medium": 4000, "high": 16_000}
"""A reasoning effort (``agents.<name>.reasoning_effort``, a session's thought level) as the
thinking budget the providers take (OpenAI maps a budget back to the same effort: under 2000
low, under 8000 medium, else high)."""

THOUGHT_LEVELS: Final = ("default", "off", *REASONING_BUDGETS)
"""A session's ``thought_level`` option: ``default`` follows the configuration, ``off``
sends no thinking, the others their budget."""


ToolChoice = Literal["auto", "none"]


@attrs.frozen(kw_only=True)
class ModelRequest:
    """Everything one model call needs, in provider-neutral form.

    ``model`` is the provider's own model id (without the ``provider/`` prefix).
    """

    model: str
    system: tuple[SystemBlock, ...]
    messages: tuple[Message, ...]
    tools: tuple[ToolSpec, ...] = ()
    tool_choice: ToolChoice = "auto"
    max_output_tokens: int = 8192
    thinking: ThinkingConfig | None = None
    cache_conversation: bool = True
    """Mark the end of the conversation for prompt caching. Off for a one-off request whose
    text differs every time (an inline completion): it would write a cache nobody reads, at
    1.25× the input price."""
