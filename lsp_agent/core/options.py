"""What the core reads from the configuration, already resolved by the composition root."""

from __future__ import annotations

from collections.abc import Callable, Mapping

import attrs

from lsp_agent.core.compaction.policy import CompactionPolicy
from lsp_agent.core.messages import REASONING_BUDGETS, ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import DEFAULT_MODE, agent_of
from lsp_agent.core.permission.rules import Rule
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter


@attrs.frozen(kw_only=True)
class AgentSettings:
    """One agent's configuration (``agents.<name>``); None = its default.

    ``model`` is a ``provider/model`` reference the session's ``ModelCatalog`` resolves;
    ``max_tokens`` caps each answer; ``thinking`` replaces the configured thinking."""

    model: str | None = None
    max_tokens: int | None = None
    thinking: ThinkingConfig | None = None

    def output_tokens(self, model: ModelInfo, default: int | None = None) -> int:
        """The answer's limit on ``model``: ``max_tokens``, else ``default``, else the
        model's own limit, and never more than the model's own limit."""
        wanted = self.max_tokens or default or model.max_output
        return min(wanted, model.max_output)


NO_AGENT_SETTINGS = AgentSettings()


@attrs.frozen(kw_only=True)
class AgentOptions:
    """The settings the core reads, already resolved by the composition root."""

    model: ModelInfo
    mode: str = DEFAULT_MODE
    max_steps: int = 50
    retry: RetryPolicy = RetryPolicy()
    thinking: ThinkingConfig | None = None
    titles: bool = True
    rules: tuple[Rule, ...] = ()
    """Configured permission rules, in order (the mode's rules are added per call)."""
    read_only_mcp: tuple[str, ...] = ()
    """``<server>:<tool>`` patterns of the MCP tools the user's config marks read-only."""
    secrets: SecretFilter = NO_SECRETS
    compaction: CompactionPolicy = CompactionPolicy()
    compaction_for: Callable[[ModelInfo], CompactionPolicy] | None = None
    """The policy for another model a session switches to (default: ``compaction``)."""
    agents: Mapping[str, AgentSettings] = attrs.field(factory=dict)
    """Each of ``core.modes.AGENT_NAMES``: what is configured for it."""

    def compaction_of(self, model: ModelInfo) -> CompactionPolicy:
        if self.compaction_for is None or model == self.model:
            return self.compaction
        return self.compaction_for(model)

    def agent(self, name: str) -> AgentSettings:
        return self.agents.get(name, NO_AGENT_SETTINGS)

    def model_for(self, mode: str) -> str:
        """The model a session in ``mode`` starts with: its agent's, else the configured."""
        return self.agent(agent_of(mode)).model or self.model.ref

    def thinking_for(self, agent: str, level: str = "default") -> ThinkingConfig | None:
        """An agent's thinking: the session's thought ``level`` when one is picked, else its
        ``reasoning_effort``, else the configured thinking."""
        if level == "off":
            return None
        if level in REASONING_BUDGETS:
            return ThinkingConfig(budget_tokens=REASONING_BUDGETS[level])
        return self.agent(agent).thinking or self.thinking
