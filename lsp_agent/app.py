"""The composition root: the one place that picks concrete classes and wires them up.

Every front door gets its agent from :func:`load_agent` (settings → model → app), passing
what it knows (:class:`AgentInputs`) and its editor adapter: ``run`` and
``sessions compact|revert`` in ``cli.py``, ``serve`` in ``lsp/host.py``. ``doctor`` checks
the same steps one by one, without building the agent.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from lsp_agent.auth.keyring_index import FILE_NAME as KEYRING_INDEX
from lsp_agent.auth.keyring_index import KeyringIndex
from lsp_agent.auth.keys import ProviderKeys, preload
from lsp_agent.config.load import load_settings, user_config_file
from lsp_agent.config.models import ConfiguredModels
from lsp_agent.config.resolve import (
    DEFAULT_API_KEY_ENV,
    ResolvedModel,
    agent_model_ref,
    check_agent_models,
    resolve_model,
)
from lsp_agent.config.settings import AGENT_NAMES, REASONING_BUDGETS, Settings
from lsp_agent.context_sources import FileContextSources
from lsp_agent.core.clock import SystemClock, UlidIds
from lsp_agent.core.compaction.policy import CompactionPolicy
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.messages import ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.options import AgentOptions, AgentSettings
from lsp_agent.core.permission.rules import Rule
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.secrets.filter import SecretFilter
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.turn.loop import no_notices
from lsp_agent.mentions import PromptExpansion
from lsp_agent.providers import make_provider
from lsp_agent.sandbox import CommandLimits, CommandSandbox
from lsp_agent.search.editor_queries import EditorQueries
from lsp_agent.shell.runner import CommandRunner
from lsp_agent.skills.catalog import discover_skills
from lsp_agent.snapshots import GitShadowSnapshots
from lsp_agent.storage.event_log import SqliteEventStore, open_store
from lsp_agent.storage.recovery import RecoveryReport, recover
from lsp_agent.tools.registry import ToolRegistry, default_registry
from lsp_agent.workspace.boundary import data_folder_path
from lsp_agent.workspace.disk_texts import DiskTexts
from lsp_agent.workspace.spill import prune_spill_files
from lsp_agent.workspace.truncation import OutputLimits

if TYPE_CHECKING:
    from lsp_agent.mcp.manager import McpManager

_log = logging.getLogger(__name__)


def data_dir(env: Mapping[str, str]) -> Path:
    """``LSP_AGENT_DATA_DIR``, else the platform's user data folder."""
    return data_folder_path(env)


async def open_data_store(env: Mapping[str, str]) -> SqliteEventStore:
    """Open the database (a corrupt one is moved aside) and recover dead owners' turns.

    Every process that opens the database comes through here before doing anything else.
    """
    store, _report = await open_and_recover(env)
    return store


async def open_and_recover(env: Mapping[str, str]) -> tuple[SqliteEventStore, RecoveryReport]:
    """``open_data_store``, also saying what recovery did (``doctor`` reports it)."""
    store = await open_store(data_dir(env))
    try:
        report = await recover(store)
    except BaseException:
        await store.close()
        raise
    return store, report


async def prune_spill_folder(spill_root: Path, now: float) -> None:
    """Start-up cleanup of week-old spill files, in a thread; a failure is only logged."""
    try:
        removed = await asyncio.to_thread(prune_spill_files, spill_root, now=now)
    except Exception:
        _log.warning("could not prune old tool outputs in %s", spill_root, exc_info=True)
    else:
        if removed:
            _log.info("removed %d old tool output files from %s", removed, spill_root)


@attrs.define
class App:
    settings: Settings
    store: SqliteEventStore
    sessions: SessionService
    secrets: SecretFilter
    """What the sessions mask (the provider keys, the environment's and the keyring's);
    ``run`` masks attached files with it too."""
    mcp: McpManager | None = None
    """The configured MCP servers (docs/mcp.md), started in the background."""
    tools: ToolRegistry | None = None
    """The registry the sessions run tools from (``acp`` adds each session's MCP servers)."""

    async def aclose(self) -> None:
        if self.mcp is not None:
            await self.mcp.aclose()
        await self.store.close()


@attrs.frozen(kw_only=True)
class AgentInputs:
    """What a front door knows before the agent exists; the settings layers come from it.

    ``cli_overrides``: ``run``'s flags (config keys → values, ``None`` skipped);
    ``init_options``: an editor's ``initializationOptions.agent.config``;
    ``session_model``: the model of the session a command continues (default: the
    configured one); ``command_runner``: where ``bash`` commands run (an ACP client's
    terminal; default: spawned here); ``editor_queries``: the editor's language servers,
    behind ``definition``, ``references``… (default: none, and no such tool).
    """

    workspace: Path
    env: Mapping[str, str]
    cli_overrides: Mapping[str, Any] | None = None
    init_options: Mapping[str, Any] | None = None
    workspace_options: Mapping[str, Any] | None = None
    """The editor's settings that a workspace set (untrusted, like the project file)."""
    folders: tuple[Path, ...] = ()
    """The other workspace folders."""
    session_model: str | None = None
    command_runner: CommandRunner | None = None
    editor_queries: EditorQueries | None = None

    def settings(self) -> Settings:
        """Raises :class:`~lsp_agent.config.settings.InvalidConfig`."""
        return load_settings(
            workspace=self.workspace,
            env=self.env,
            cli_overrides=self.cli_overrides,
            init_options=self.init_options,
            workspace_options=self.workspace_options,
            folders=self.folders,
        )

    def model(self, settings: Settings) -> ResolvedModel:
        """Raises :class:`~lsp_agent.config.settings.ModelNotConfigured` (no model at all)
        or another :class:`ConfigError` (a bad reference)."""
        return resolve_model(settings, self.session_model)


async def load_agent(
    inputs: AgentInputs,
    *,
    editor: Editor,
    store: SqliteEventStore | None = None,
    roots: Callable[[str], Sequence[str]] | None = None,
    editor_diagnostics: bool = False,
    mcp_servers: bool = True,
) -> App:
    """Settings → model → app, for one front door.

    A :class:`ConfigError` comes before anything is opened. Without ``store`` the data store
    is opened here and belongs to the app (``App.aclose``); a given one stays the caller's.
    ``roots``, ``editor_diagnostics`` and ``mcp_servers``: see :func:`build_app`.
    """
    settings = inputs.settings()
    model = inputs.model(settings)
    check_agent_models(settings)
    opened = store is None
    store = store or await open_data_store(inputs.env)
    try:
        return await build_app(
            settings=settings,
            model=model,
            env=inputs.env,
            editor=editor,
            workspace=inputs.workspace,
            store=store,
            roots=roots,
            editor_diagnostics=editor_diagnostics,
            mcp_servers=mcp_servers,
            command_runner=inputs.command_runner,
            editor_queries=inputs.editor_queries,
        )
    except BaseException:
        if opened:
            await store.close()
        raise


def key_variables(settings: Settings) -> tuple[str, ...]:
    """The names of every variable that holds one of the agent's own provider keys."""
    names = {name for name in DEFAULT_API_KEY_ENV.values() if name}
    names |= {p.api_key_env for p in settings.providers.values() if p.api_key_env}
    return tuple(sorted(names))


def agent_settings(settings: Settings) -> dict[str, AgentSettings]:
    """``agents`` for the core: ``small_model`` folded into title and summary, each
    ``reasoning_effort`` as the thinking budget the providers take."""
    agents: dict[str, AgentSettings] = {}
    for name in AGENT_NAMES:
        config = settings.agents.of(name)
        effort = config.reasoning_effort
        agents[name] = AgentSettings(
            model=agent_model_ref(settings, name),
            max_tokens=config.max_tokens,
            thinking=ThinkingConfig(budget_tokens=REASONING_BUDGETS[effort]) if effort else None,
        )
    return agents


def agent_options(settings: Settings, model: ResolvedModel) -> AgentOptions:
    thinking = None
    if settings.thinking.enabled:
        thinking = ThinkingConfig(budget_tokens=settings.thinking.budget_tokens)
    rules = tuple(
        Rule(
            permission=r.permission,
            pattern=r.pattern,
            action=r.action,
            source=r.source,
            below_user=r.below_user,
        )
        for r in settings.permission_rules
    )

    def compaction(info: ModelInfo) -> CompactionPolicy:
        return CompactionPolicy(
            auto=settings.compaction.auto,
            reserve_tokens=settings.compaction.reserve_tokens_for(info),
            keep_recent_tokens=settings.compaction.keep_recent_tokens_for(info),
        )

    return AgentOptions(
        compaction=compaction(model.info),
        compaction_for=compaction,
        rules=rules,
        read_only_mcp=tuple(settings.read_only_mcp),
        model=model.info,
        mode=settings.mode,
        max_steps=settings.max_steps,
        retry=RetryPolicy(
            max_retries=settings.retry.max_retries,
            initial_delay=settings.retry.initial_delay,
            stream_idle_timeout=settings.retry.stream_idle_timeout,
        ),
        thinking=thinking,
        titles=settings.title.enabled,
        agents=agent_settings(settings),
    )


async def build_app(
    *,
    settings: Settings,
    model: ResolvedModel,
    env: Mapping[str, str],
    editor: Editor,
    workspace: Path,
    store: SqliteEventStore,
    roots: Callable[[str], Sequence[str]] | None = None,
    editor_diagnostics: bool = False,
    mcp_servers: bool = True,
    command_runner: CommandRunner | None = None,
    editor_queries: EditorQueries | None = None,
) -> App:
    """The agent from loaded settings and model (front doors use :func:`load_agent`).

    ``roots``: the folders a session may touch (an editor's workspace folders); default
    the session's own folder. ``editor_diagnostics``: the editor reports its language
    servers' diagnostics (``editor.diagnostics``), so the ``diagnostics`` tool is offered.
    ``mcp_servers``: start the configured MCP servers (off for commands that run no turn);
    ``App.aclose`` stops them. ``command_runner``, ``editor_queries``: see
    :class:`AgentInputs`."""
    keys = key_variables(settings)
    secrets = SecretFilter.from_env(env, keys)
    provider_keys = ProviderKeys(env, secrets=secrets)  # the environment, then the keyring
    # Keyring keys are registered with the filter before any session runs; the first
    # keyring access costs ~0.2 s, so it overlaps the rest of the start-up.
    index = KeyringIndex(data_dir(env) / KEYRING_INDEX)  # auth/keyring_index.py: usually none
    preloading = asyncio.ensure_future(asyncio.to_thread(preload, provider_keys, settings, index))
    provider = make_provider(
        model.provider_type,
        name=model.info.provider,
        base_url=model.base_url,
        api_key_env=model.api_key_env,
        env=env,
        stored_key=provider_keys.stored,
    )
    clock = SystemClock()
    spill_root = data_dir(env) / "tool-output"
    await prune_spill_folder(spill_root, clock.now())
    limits = OutputLimits(
        max_lines=settings.tool_output.max_lines, max_bytes=settings.tool_output.max_bytes
    )
    user_dir = user_config_file(env).parent
    skills = await asyncio.to_thread(discover_skills, [str(workspace)], str(user_dir))
    tools = default_registry(
        editor,
        limits=limits,
        spill_root=spill_root,
        secrets=secrets,
        hidden_env=keys,
        allow_hosts=settings.webfetch.allow_hosts,
        skills=skills,
        editor_diagnostics=editor_diagnostics,
        sandbox=CommandSandbox(
            settings.sandbox.mode,
            allow_read=settings.sandbox.allow_read,
            hidden=(str(data_dir(env)),),
            limits=CommandLimits.configured(**settings.sandbox.limits.model_dump()),
        ),
        command_runner=command_runner,
        editor_queries=editor_queries,
    )
    options = attrs.evolve(agent_options(settings, model), secrets=secrets)
    mcp: McpManager | None = None
    if mcp_servers and settings.mcp:
        from lsp_agent.mcp.manager import McpManager  # the SDK costs ~0.5 s to import

        mcp = McpManager(
            settings.mcp,
            env=env,
            hidden_env=keys,
            reserved_names=tools.names,
            avoid=(str(workspace),),
        )
        tools.add_source(mcp)
        mcp.start()  # in the background: a server's tools are offered once it is up
    sources = FileContextSources(
        user_config_dir=user_dir,
        configured=settings.instructions,
        skills=lambda roots: discover_skills(list(roots), str(user_dir)),
        secrets=secrets,
    )
    snapshots = None
    if settings.snapshots:
        snapshots = GitShadowSnapshots(data_dir(env))
        try:
            await snapshots.prune()
        except Exception:  # housekeeping never blocks start-up
            _log.warning("could not prune old snapshots", exc_info=True)
    await preloading
    sessions = SessionService(
        snapshots=snapshots,
        sources=sources,
        store=store,
        provider=provider,
        tools=tools,
        editor=editor,
        clock=clock,
        ids=UlidIds(),
        options=options,
        models=ConfiguredModels(settings, env, model, provider, provider_keys.stored),
        roots=roots,
        notices=mcp.notices if mcp is not None else no_notices,
        files=DiskTexts(),
        attachments=PromptExpansion(editor, secrets=secrets),
    )
    return App(
        settings=settings, store=store, sessions=sessions, secrets=secrets, mcp=mcp, tools=tools
    )
