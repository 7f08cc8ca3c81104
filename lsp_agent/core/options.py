"""What the core reads from the configuration, already resolved by the composition root."""

from __future__ import annotations

from collections.abc import Callable

import attrs

from lsp_agent.core.compaction.policy import CompactionPolicy
from lsp_agent.core.messages import ThinkingConfig
from lsp_agent.core.models import ModelInfo
from lsp_agent.core.modes import DEFAULT_MODE
from lsp_agent.core.permission.rules import Rule
from lsp_agent.core.secrets.filter import NO_SECRETS, SecretFilter
from lsp_agent.core.turn.retry import RetryPolicy


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
    secrets: SecretFilter = NO_SECRETS
    compaction: CompactionPolicy = CompactionPolicy()
    compaction_for: Callable[[ModelInfo], CompactionPolicy] | None = None
    """The policy for another model a session switches to (default: ``compaction``)."""

    def compaction_of(self, model: ModelInfo) -> CompactionPolicy:
        if self.compaction_for is None or model == self.model:
            return self.compaction
        return self.compaction_for(model)
