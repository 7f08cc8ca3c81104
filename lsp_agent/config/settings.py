"""Settings: what the configuration may say, as validated models (the sections, the permission
rules, the built-in defaults) and the errors a bad configuration gives.

Where the values come from and how the layers merge is ``config/load.py``; which model and
provider a reference means is ``config/resolve.py``. ``docs/configuration.md`` is the
user-facing description.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    ConfigDict,
    Field,
    NonNegativeFloat,
    NonNegativeInt,
    PlainValidator,
    PositiveInt,
    model_validator,
)

from lsp_agent.config.locations import APP_NAME, CONFIG_ENV, PROJECT_FILE_NAME
from lsp_agent.core.errors import ConfigError
from lsp_agent.core.messages import REASONING_BUDGETS as CORE_REASONING_BUDGETS
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import AGENT_NAMES as CORE_AGENT_NAMES
from lsp_agent.core.modes import CLIENT_MODES, DEFAULT_MODE
from lsp_agent.core.permission.rules import wildcard_match
from lsp_agent.core.permission_kinds import PermissionKind
from lsp_agent.providers import ProviderType

__all__ = [
    "ACTIONS",
    "AGENT_NAMES",
    "APP_NAME",
    "CONFIG_ENV",
    "DEFAULT_PERMISSION_RULES",
    "MODEL_ENV",
    "PROJECT_FILE_NAME",
    "REASONING_BUDGETS",
    "Action",
    "AgentConfig",
    "AgentsConfig",
    "CompactionConfig",
    "CompletionConfig",
    "ConfigKeys",
    "InvalidConfig",
    "McpLocalServer",
    "McpRemoteServer",
    "McpServerConfig",
    "Mode",
    "ModelNotConfigured",
    "ModelOverride",
    "PermissionRule",
    "ProviderConfig",
    "ReasoningEffort",
    "RetryConfig",
    "SandboxConfig",
    "Settings",
    "ThinkingSettings",
    "TitleConfig",
    "ToolOutputConfig",
    "WebfetchConfig",
    "check_permission_name",
    "sandbox_shorthand",
]


MODEL_ENV: Final = "LSP_AGENT_MODEL"

INIT_OPTIONS_SOURCE: Final = "initializationOptions"
WORKSPACE_OPTIONS_SOURCE: Final = "initializationOptions.agent.workspaceConfig"
"""The editor's settings that a workspace set: untrusted like the project file."""
CLI_SOURCE: Final = "command line"
BUILTIN_SOURCE: Final = "built-in"

Action = Literal["allow", "ask", "deny"]

ACTIONS: Final[tuple[Action, ...]] = ("allow", "ask", "deny")

# ---------------------------------------------------------------------------------------------
# Errors


class InvalidConfig(ConfigError):
    """A config layer is invalid. ``source`` is the file (or "initializationOptions",
    "command line", "LSP_AGENT_MODEL"); ``key`` the dotted key path, when there is one."""

    def __init__(self, source: str, reason: str, *, key: str | None = None) -> None:
        super().__init__(f"{source}: {reason}")
        self.source = source
        self.key = key
        self.reason = reason


class ModelNotConfigured(ConfigError):
    """No model was given anywhere. The CLI prints the message as is."""

    variable: Final = MODEL_ENV
    config_key: Final = "model"
    hint: Final = "lsp-agent doctor"

    def __init__(self) -> None:
        super().__init__(
            f"no model configured: set {MODEL_ENV} (e.g. anthropic/claude-sonnet-4-5, with its"
            " key in ANTHROPIC_API_KEY; or openai/MODEL with OPENAI_API_KEY) or"
            f' "model" in a config file; run `lsp-agent doctor` to check the setup'
        )


# ---------------------------------------------------------------------------------------------
# Config models


def _check_model_ref(value: str) -> str:
    provider, sep, model = value.partition("/")
    if not sep or not provider.strip() or not model.strip() or value != value.strip():
        raise ValueError("expected 'provider/model', e.g. 'anthropic/claude-sonnet-4-5'")
    return value


_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_env_name(value: str) -> str:
    if not _ENV_NAME.fullmatch(value):
        raise ValueError("expected the NAME of an environment variable (never the key itself)")
    return value


def _check_url(value: str) -> str:
    if not value.startswith(("http://", "https://")):
        raise ValueError("expected an http:// or https:// URL")
    return value


def _check_non_empty(value: str) -> str:
    if not value.strip():
        raise ValueError("must not be empty")
    return value


def _check_mode(value: object) -> str:
    """A mode a client may choose (``core/modes.py``); refused in pydantic's words for a choice."""
    if isinstance(value, str) and value in CLIENT_MODES:
        return value
    *rest, last = (repr(mode) for mode in CLIENT_MODES)
    choices = f"{', '.join(rest)} or {last}" if rest else last
    raise ValueError(f"Input should be {choices}")


Mode = Annotated[str, PlainValidator(_check_mode)]
ModelRef = Annotated[str, AfterValidator(_check_model_ref)]
EnvName = Annotated[str, AfterValidator(_check_env_name)]
Url = Annotated[str, AfterValidator(_check_url)]
NonEmptyStr = Annotated[str, AfterValidator(_check_non_empty)]


class _Config(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class ModelOverride(_Config):
    """``providers.<name>.models.<model>``: per-field overrides of the catalog entry."""

    context_window: PositiveInt | None = None
    max_output: PositiveInt | None = None
    input_price: NonNegativeFloat | None = None
    output_price: NonNegativeFloat | None = None
    cache_read_price: NonNegativeFloat | None = None
    cache_write_price: NonNegativeFloat | None = None
    image_input: bool | None = None


class ProviderConfig(_Config):
    """``providers.<name>``. ``type`` is required for names other than anthropic/openai."""

    type: ProviderType | None = None
    base_url: Url | None = None
    api_key_env: EnvName | None = None
    models: dict[NonEmptyStr, ModelOverride] = Field(default_factory=dict)


class RetryConfig(_Config):
    """Model calls: retries, their first backoff wait, and how long a silent stream may last."""

    max_retries: NonNegativeInt = 2
    initial_delay: NonNegativeFloat = 1.0
    stream_idle_timeout: Annotated[float, Field(gt=0)] = 300.0


class EditorConfig(_Config):
    """``editor``: how long the server waits for the editor's answers (seconds). Asks wait
    for a person; every other request (edits, saves, queries, progress) for the program."""

    ask_timeout: Annotated[float, Field(gt=0)] = 1800.0
    request_timeout: Annotated[float, Field(gt=0)] = 10.0


class TitleConfig(_Config):
    enabled: bool = True


class ThinkingSettings(_Config):
    """The ``thinking`` key; ``app`` turns it into the core's per-request ``ThinkingConfig``."""

    enabled: bool = False
    budget_tokens: Annotated[int, Field(ge=1024)] = 4000


ReasoningEffort = Literal["low", "medium", "high"]

#: ``agents.<name>.reasoning_effort`` as the thinking budget the providers take (the core's
#: table: a session's thought level uses the same).
REASONING_BUDGETS: Final[Mapping[str, int]] = CORE_REASONING_BUDGETS

#: The agents ``agents`` may configure: the core's table (``core.modes``: the two modes, the
#: ``task`` tool's subagents, the title and summary side requests). :class:`AgentsConfig`
#: has a field for each (a unit test holds them together).
AGENT_NAMES: Final = CORE_AGENT_NAMES


class AgentConfig(_Config):
    """``agents.<name>``: its model, a cap on its output, its reasoning effort; unset = the
    default (docs/configuration.md "A model per agent")."""

    model: ModelRef | None = None
    max_tokens: PositiveInt | None = None
    reasoning_effort: ReasoningEffort | None = None


class AgentsConfig(_Config):
    """``agents``: one :class:`AgentConfig` per name in :data:`AGENT_NAMES`."""

    build: AgentConfig = Field(default_factory=AgentConfig)
    plan: AgentConfig = Field(default_factory=AgentConfig)
    task: AgentConfig = Field(default_factory=AgentConfig)
    title: AgentConfig = Field(default_factory=AgentConfig)
    summary: AgentConfig = Field(default_factory=AgentConfig)
    completion: AgentConfig = Field(default_factory=AgentConfig)
    commit: AgentConfig = Field(default_factory=AgentConfig)

    @model_validator(mode="before")
    @classmethod
    def _known_agents(cls, data: object) -> object:
        """An unknown name says which names there are (not just "unknown key")."""
        if isinstance(data, dict):
            unknown = [name for name in data if name not in AGENT_NAMES]
            if unknown:
                *rest, last = AGENT_NAMES
                raise ValueError(
                    f"unknown agent {unknown[0]!r}: expected {', '.join(rest)} or {last}"
                )
        return data

    def of(self, name: str) -> AgentConfig:
        config: AgentConfig = getattr(self, name)
        return config


class CompactionConfig(_Config):
    """``None`` means "derived from the model" (docs/configuration.md); see the ``*_for``
    methods."""

    auto: bool = True
    reserve_tokens: NonNegativeInt | None = None
    keep_recent_tokens: NonNegativeInt | None = None

    def reserve_tokens_for(self, info: ModelInfo) -> int:
        if self.reserve_tokens is not None:
            return self.reserve_tokens
        return min(max(info.max_output, 20_000), info.context_window // 4)

    def keep_recent_tokens_for(self, info: ModelInfo) -> int:
        if self.keep_recent_tokens is not None:
            return self.keep_recent_tokens
        return min(8_000, info.context_window // 4)


class ToolOutputConfig(_Config):
    max_lines: PositiveInt = 2000
    max_bytes: PositiveInt = 51_200


class WebfetchConfig(_Config):
    """``allow_hosts``: ``host`` or ``host:port`` admitted even on private addresses."""

    allow_hosts: list[NonEmptyStr] = Field(default_factory=list)


class CompletionConfig(_Config):
    """``completion``: inline completion and next-edit suggestions (docs/configuration.md
    "Inline completion"); off by default, since every suggestion spends tokens."""

    enabled: bool = False
    exclude: list[NonEmptyStr] = Field(default_factory=list)
    """Globs (relative to the workspace folder) whose files are never sent."""
    debounce_ms: Annotated[int, Field(ge=0, le=5000)] = 150
    max_tokens_per_hour: Annotated[int, Field(ge=0)] = 200_000
    """The cap over the last hour (prompt + answer tokens); 0 = no cap."""
    fim: bool | None = None
    """Ask through ``/v1/completions`` with ``suffix`` (fill in the middle); unset: when the
    model's provider is ``openai-compatible`` (llama.cpp, Ollama, vLLM)."""


def _check_sandbox_path(value: str) -> str:
    if not (os.path.isabs(value) or value == "~" or value.startswith("~/")):
        raise ValueError("expected an absolute path or one starting with ~/")
    return value


DEFAULT_SANDBOX_READS: tuple[str, ...] = (
    "~/.gitconfig",
    # git's own files there, never its credential store (~/.config/git/credentials)
    "~/.config/git/config",
    "~/.config/git/ignore",
    "~/.config/git/attributes",
    # Toolchains commonly installed under $HOME (a workspace's .venv links into ~/.pyenv, say):
    # programs and libraries only, never the folders that hold credentials (~/.cargo itself
    # keeps credentials.toml, so only its bin/).
    "~/.local/bin",
    "~/.local/lib",
    "~/.local/share/uv",
    "~/.pyenv",
    "~/.nvm",
    "~/.volta",
    "~/.cargo/bin",
    "~/.rustup",
)
"""``sandbox.allow_read`` when no config sets it."""


class SandboxLimits(_Config):
    """``sandbox.limits``: what one command may take (docs/configuration.md); ``0``: not
    bounded. An untrusted project file may only lower them."""

    processes: NonNegativeInt = 1024
    """Processes and threads running at once."""
    memory_mb: NonNegativeInt = 8192
    """Writable memory of each process (``RLIMIT_DATA``)."""
    tmp_mb: NonNegativeInt = 1024
    """Size of each in-memory folder of the sandbox (``/tmp``, ``/run``, the empty ``$HOME``)."""
    output_mb: NonNegativeInt = 100
    """Output a command may write before it is stopped."""


class SandboxConfig(_Config):
    """``sandbox``: how ``bash`` commands are confined (docs/security.md). The string
    shorthand ``"sandbox": "off"`` sets ``mode`` only."""

    mode: Literal["auto", "required", "off"] = "auto"
    allow_read: list[Annotated[str, AfterValidator(_check_sandbox_path)]] = Field(
        default_factory=lambda: list(DEFAULT_SANDBOX_READS)
    )
    limits: SandboxLimits = Field(default_factory=SandboxLimits)


def sandbox_shorthand(data: dict[str, Any]) -> None:
    """``"sandbox": "off"`` → ``{"mode": "off"}`` in one layer, so layers merge per key."""
    if isinstance(data.get("sandbox"), str):
        data["sandbox"] = {"mode": data["sandbox"]}


class _McpServerBase(_Config):
    enabled: bool = True
    timeout_ms: PositiveInt = 30_000
    """How long starting the server, and each call, may take."""
    read_only_tools: list[NonEmptyStr] = Field(default_factory=list)
    """The server's tools (its own names) the user vouches are read-only: they run without
    asking and in plan mode (user file only; the server's ``readOnlyHint`` is not trusted)."""


class McpLocalServer(_McpServerBase):
    """``mcp.<name>`` with ``type: local``: a program spoken to over stdio (docs/mcp.md)."""

    type: Literal["local"]
    command: Annotated[list[NonEmptyStr], Field(min_length=1)]
    environment: dict[EnvName, str] = Field(default_factory=dict)
    """Variables the server gets besides PATH, HOME and LANG; values may say ``{env:VAR}``."""


class McpRemoteServer(_McpServerBase):
    """``mcp.<name>`` with ``type: remote``: streamable HTTP, or legacy SSE."""

    type: Literal["remote"]
    url: Url
    headers: dict[NonEmptyStr, str] = Field(default_factory=dict)
    """Sent with every request; values may say ``{env:VAR}``."""


McpServerConfig = Annotated[McpLocalServer | McpRemoteServer, Field(discriminator="type")]


class DaemonConfig(_Config):
    """The warm process ``run`` drives (docs/configuration.md "Warm path"). Read from your own
    files only (the user file, ``LSP_AGENT_CONFIG``) before the run starts."""

    enabled: bool = True
    idle_seconds: PositiveInt = 600


class ConfigKeys(_Config):
    """Every key a config layer may hold, except ``permission`` (parsed into rules)."""

    model: ModelRef | None = None
    small_model: ModelRef | None = None
    mode: Mode = DEFAULT_MODE
    max_steps: PositiveInt = 50
    snapshots: bool = True
    instructions: list[NonEmptyStr] = Field(default_factory=list)
    trusted_folders: list[NonEmptyStr] = Field(default_factory=list)
    providers: dict[NonEmptyStr, ProviderConfig] = Field(default_factory=dict)
    retry: RetryConfig = Field(default_factory=RetryConfig)
    editor: EditorConfig = Field(default_factory=EditorConfig)
    title: TitleConfig = Field(default_factory=TitleConfig)
    thinking: ThinkingSettings = Field(default_factory=ThinkingSettings)
    compaction: CompactionConfig = Field(default_factory=CompactionConfig)
    tool_output: ToolOutputConfig = Field(default_factory=ToolOutputConfig)
    webfetch: WebfetchConfig = Field(default_factory=WebfetchConfig)
    sandbox: SandboxConfig = Field(default_factory=SandboxConfig)
    agents: AgentsConfig = Field(default_factory=AgentsConfig)
    completion: CompletionConfig = Field(default_factory=CompletionConfig)
    mcp: dict[NonEmptyStr, McpServerConfig] = Field(default_factory=dict)
    daemon: DaemonConfig = Field(default_factory=DaemonConfig)


class PermissionRule(BaseModel):
    """One rule: for ``permission`` (a tool's permission key, ``*`` wildcards allowed) and
    ``pattern`` (what the tool touches), do ``action``. ``source`` is where it came from."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    permission: str
    pattern: str
    action: Action
    source: str = BUILTIN_SOURCE
    below_user: bool = False
    """From the project file or the editor's settings: it may tighten, never lift a deny of
    the user's own layers (docs/permissions.md)."""


def _defaults(actions: Mapping[PermissionKind, Action]) -> tuple[PermissionRule, ...]:
    missing = [kind.value for kind in PermissionKind if kind not in actions]
    if missing:  # every permission a tool may declare has a built-in rule
        raise ValueError(f"no built-in rule for {', '.join(missing)}")
    return tuple(
        PermissionRule(permission=kind.value, pattern="*", action=actions[kind])
        for kind in PermissionKind
    )


#: docs/permissions.md: the built-in layer, first in every rule list (one rule per
#: permission, in the order of :class:`PermissionKind`).
DEFAULT_PERMISSION_RULES: Final[tuple[PermissionRule, ...]] = _defaults(
    {
        PermissionKind.READ: "allow",
        PermissionKind.LIST: "allow",
        PermissionKind.GLOB: "allow",
        PermissionKind.GREP: "allow",
        PermissionKind.TODOWRITE: "allow",
        PermissionKind.QUESTION: "allow",
        PermissionKind.DIAGNOSTICS: "allow",
        PermissionKind.TASK: "allow",
        PermissionKind.SKILL: "allow",
        PermissionKind.EDIT: "ask",
        PermissionKind.BASH: "ask",
        PermissionKind.WEBFETCH: "ask",
        PermissionKind.EXTERNAL_DIRECTORY: "ask",
        PermissionKind.BASH_NETWORK: "ask",
        PermissionKind.MCP: "ask",
    }
)

PERMISSION_NAMES: Final[tuple[str, ...]] = tuple(kind.value for kind in PermissionKind)
"""Every permission a rule may name: the ones a tool may declare (``PermissionKind``)."""
_COVERED_BY_EDIT = ("write", "apply_patch")


def check_permission_name(name: str, source: str, key: str) -> None:
    """A name no permission answers to (``"bassh"``, ``"edits"``) would make a rule that never
    matches, silently: it is an error like an unknown key. ``*`` wildcards are fine when they
    match some permission (``"*"``, ``"bash*"``)."""
    if any(wildcard_match(known, name) for known in PERMISSION_NAMES):
        return
    if name in _COVERED_BY_EDIT:
        hint = " ('edit' covers write, edit and apply_patch)"
    else:
        close = difflib.get_close_matches(name, PERMISSION_NAMES, n=1, cutoff=0.6)
        hint = f" (did you mean {close[0]!r}?)" if close else ""
    names = ", ".join(PERMISSION_NAMES)
    raise InvalidConfig(
        source, f"key {key!r}: unknown permission {name!r}{hint}; one of {names}", key=key
    )


class Settings(ConfigKeys):
    """The merged configuration.

    ``trusted_folders`` holds the user file's list only. ``permission_rules`` starts with
    :data:`DEFAULT_PERMISSION_RULES`, then each layer's rules in layer order (last match wins).
    """

    permission_rules: list[PermissionRule] = Field(
        default_factory=lambda: list(DEFAULT_PERMISSION_RULES)
    )
    #: the config files that were read, in layer order (for ``doctor``)
    sources: list[str] = Field(default_factory=list)
    #: whether the workspace folder is listed in the user file's ``trusted_folders``
    project_trusted: bool = False
    #: things that were ignored on purpose (e.g. ``trusted_folders`` outside the user file)
    warnings: list[str] = Field(default_factory=list)
    #: ``<server>:<tool>`` patterns (literal) of the user file's ``mcp.*.read_only_tools``
    read_only_mcp: list[str] = Field(default_factory=list)
    #: ``ANTHROPIC_BASE_URL`` / ``OPENAI_BASE_URL`` as found in the environment
    env_base_urls: dict[str, str] = Field(default_factory=dict)
    #: every dotted key a layer set → the layer that set it last (a file's path,
    #: ``LSP_AGENT_MODEL``, ``initializationOptions``, ``command line``): a mistake found after
    #: the merge (an unknown provider in ``model``) names the file and key, and ``doctor``
    #: says where the model came from
    origins: dict[str, str] = Field(default_factory=dict)

    def origin(self, key: str) -> str:
        """The layer that set ``key`` (dotted) last; ``built-in`` when none did."""
        return self.origins.get(key, BUILTIN_SOURCE)
