"""A turn's configuration from its session's mode and model: prompt, rules, roots, limits.

``TurnSetup`` builds the ``TurnConfig`` for a mode and a model, and picks the model of a side
request (``side_model``: a title, a summary); ``LiveConfig`` is a running turn's view of its
session, re-read at every step so a ``set_config`` applies from the next.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence

from lsp_agent.core import prompts
from lsp_agent.core.commit_message import COMMIT_MAX_TOKENS
from lsp_agent.core.compaction.summary import SUMMARY_MAX_TOKENS
from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.interfaces import EventStore, Provider
from lsp_agent.core.models import ModelCatalog, ModelInfo, SideModel
from lsp_agent.core.modes import MODES, SubagentScope, agent_of, prompt_of
from lsp_agent.core.options import AgentOptions
from lsp_agent.core.session.config_options import ConfigChanges
from lsp_agent.core.session.title import TITLE_MAX_TOKENS
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.core.turn.loop import TurnConfig

_log = logging.getLogger(__name__)


class TurnSetup:
    def __init__(
        self,
        *,
        options: AgentOptions,
        catalog: ModelCatalog,
        provider: Provider,
        roots: Callable[[str], Sequence[str]] | None,
    ) -> None:
        """``provider`` serves ``options.model``, the fallback for a model the catalog
        cannot resolve; ``roots``: see ``SessionService``."""
        self._options = options
        self._catalog = catalog
        self._provider = provider
        self._roots = roots

    def workspace_roots(self, folder: str) -> tuple[str, ...]:
        """The session's boundary: its own folder first, then the other workspace folders."""
        if self._roots is None:
            return (folder,)
        others = [root for root in self._roots(folder) if root != folder]
        return (folder, *others)

    def session_model(self, ref: str) -> tuple[Provider, ModelInfo]:
        """The provider and model of the session's ``ref``; the configured model when the
        catalog cannot resolve it (a session from another configuration)."""
        configured = self._options.model
        try:
            return self._catalog.resolve(ref)
        except InvalidConfigValue as error:
            if ref != configured.ref:
                _log.warning(
                    "session model %s unavailable (%s); using %s", ref, error, configured.ref
                )
            return self._provider, configured

    def side_model(self, agent: str, provider: Provider, model: ModelInfo) -> SideModel:
        """The model of a ``title`` or ``summary`` request in a session on ``model``:
        ``agents.<agent>.model`` (or ``small_model``), else the cheapest model of the same
        provider the catalog prices (for a summary, one whose context is at least as large),
        else ``model`` itself. The session's model switch changes only ``model``."""
        settings = self._options.agent(agent)
        default = {"title": TITLE_MAX_TOKENS, "commit": COMMIT_MAX_TOKENS}.get(
            agent, SUMMARY_MAX_TOKENS
        )
        ref = settings.model
        if ref is None:
            least = model.context_window if agent == "summary" else 0
            ref = self._catalog.cheapest(model.ref, min_context_window=least)
        chosen_provider, chosen = provider, model
        if ref is not None and ref != model.ref:
            try:
                chosen_provider, chosen = self._catalog.resolve(ref)
            except InvalidConfigValue as error:
                _log.warning("%s model %s unavailable (%s); using %s", agent, ref, error, model.ref)
        return SideModel(
            provider=chosen_provider,
            info=chosen,
            max_output_tokens=settings.output_tokens(chosen, default),
            thinking=settings.thinking,
        )

    def config(
        self,
        folder: str,
        max_steps: int | None,
        mode: str,
        model: ModelInfo,
        scope: SubagentScope | None = None,
        *,
        provider: Provider | None = None,
        thought_level: str = "default",
    ) -> TurnConfig:
        """``scope``: a subagent's turn, with its own prompt and its parent's limits.
        ``provider`` serves ``model`` (default: the configured model's); the turn's answers
        follow the agent's settings (``task`` for a subagent, else the mode's) and the
        session's ``thought_level``."""
        options = self._options
        prompt = prompt_of(mode)
        rules = options.rules
        agent = agent_of(mode)
        if scope is not None:
            prompt = MODES[scope.agent].prompt
            rules = (*rules, *scope.limits)
            agent = MODES[scope.agent].agent
        settings = options.agent(agent)
        return TurnConfig(
            model=model,
            system_prompt=prompts.system(prompt),
            workspace_roots=self.workspace_roots(folder),
            max_steps=max_steps if max_steps is not None else options.max_steps,
            retry=options.retry,
            thinking=options.thinking_for(agent, thought_level),
            mode=mode,
            rules=rules,
            read_only_mcp=options.read_only_mcp,
            secrets=options.secrets,
            compaction=options.compaction_of(model),
            max_output_tokens=settings.output_tokens(model),
            summary=self.side_model("summary", provider or self._provider, model),
        )


class LiveConfig:
    """A turn's view of its session's mode, model and thought level, re-read at every step.

    An explicit override (the CLI's ``--mode``/``--model``, a subagent's scope) wins for the
    whole turn. The config and provider are rebuilt only when the mode, the model, the thought
    level or the workspace folders changed.
    """

    def __init__(
        self,
        *,
        setup: TurnSetup,
        store: EventStore,
        changes: ConfigChanges,
        session_id: str,
        folder: str,
        max_steps: int | None,
        mode_override: str | None,
        model_override: str | None,
        scope: SubagentScope | None = None,
    ) -> None:
        self._setup = setup
        self._store = store
        self._changes = changes
        self._scope = scope
        self._session_id = session_id
        self._folder = folder
        self._max_steps = max_steps
        self._mode_override = mode_override
        self._model_override = model_override
        self._key: tuple[str, str, str, tuple[str, ...]] | None = None
        self._info: SessionInfo | None = None
        self._seen_changes = -1
        self._config: TurnConfig | None = None
        self._provider: Provider | None = None

    @property
    def config(self) -> TurnConfig:
        assert self._config is not None, "apply() first"
        return self._config

    def start(self, info: SessionInfo, seen_changes: int) -> tuple[TurnConfig, Provider]:
        """The turn's first config, from the row the turn read (``seen_changes``: the count
        of changes before that read), so the first step reads it only if it changed since."""
        self._info, self._seen_changes = info, seen_changes
        return self.apply(info)

    def apply(self, info: SessionInfo) -> tuple[TurnConfig, Provider]:
        mode = self._mode_override or info.mode
        ref = self._model_override or info.model
        roots = self._setup.workspace_roots(self._folder)
        key = (mode, ref, info.thought_level, roots)
        if self._key != key or self._config is None or self._provider is None:
            self._provider, model = self._setup.session_model(ref)
            self._config = self._setup.config(
                self._folder,
                self._max_steps,
                mode,
                model,
                self._scope,
                provider=self._provider,
                thought_level=info.thought_level,
            )
            self._key = key
        return self._config, self._provider

    async def refresh(self) -> tuple[TurnConfig, Provider]:
        changes = self._changes.count(self._session_id)
        if self._info is None or changes != self._seen_changes:
            info = await self._store.session(self._session_id)
            if info is None:  # deleted under the turn: keep going as configured
                return self.config, self._provider_now()
            self._info, self._seen_changes = info, changes
        return self.apply(self._info)

    def _provider_now(self) -> Provider:
        assert self._provider is not None, "apply() first"
        return self._provider
