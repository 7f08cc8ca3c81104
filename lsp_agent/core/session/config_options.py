"""A session's options — its mode, its model and its thought level: the choices a client may
pick, and a change.

``ConfigChanges.set`` records a ``config_changed`` event and counts it, so a running turn
re-reads its session only when something changed (one query per step saved) and takes the
change up at its next step. A session on its mode's default model (``agents.<mode>.model``)
follows the new mode's default when the mode changes; a model picked by hand stays. The
thought level (``default``: as configured, ``off``, ``low``, ``medium``, ``high``) sets the
thinking budget of the session's next model calls.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.errors import InvalidConfigValue
from lsp_agent.core.event_writer import EventWriter
from lsp_agent.core.messages import THOUGHT_LEVELS
from lsp_agent.core.models import ModelCatalog, ModelChoice
from lsp_agent.core.modes import CLIENT_MODES, MODES, check_client_mode
from lsp_agent.core.transcript import SessionInfo

CONFIG_IDS = ("mode", "model", "thought_level")

_THOUGHT_NAMES = {
    "default": ("Default", "As configured (thinking, agents.<mode>.reasoning_effort)"),
    "off": ("Off", "No extended thinking"),
    "low": ("Low", "A small thinking budget"),
    "medium": ("Medium", "A medium thinking budget"),
    "high": ("High", "A large thinking budget"),
}


@attrs.frozen(kw_only=True)
class ModeChoice:
    value: str
    name: str
    description: str = ""
    """Empty for a mode shown but not offered (a subagent's session)."""

    def to_json(self) -> dict[str, Any]:
        option: dict[str, Any] = {"value": self.value, "name": self.name}
        if self.description:
            option["description"] = self.description
        return option


@attrs.frozen(kw_only=True)
class ConfigChoices:
    """A session's current mode and model, and what it may switch to."""

    mode: str
    modes: tuple[ModeChoice, ...]
    model: str
    models: tuple[ModelChoice, ...]
    thought_level: str = "default"

    def to_json(self) -> list[dict[str, Any]]:
        """The ``configOptions`` a ``config_changed`` event records (docs/events.md): the
        protocol's shape (protocol.md §1), so the update forwards it as recorded."""
        return [
            {
                "configId": "mode",
                "name": "Mode",
                "category": "mode",
                "type": "select",
                "currentValue": self.mode,
                "options": [choice.to_json() for choice in self.modes],
            },
            {
                "configId": "model",
                "name": "Model",
                "category": "model",
                "type": "select",
                "currentValue": self.model,
                "options": [choice.to_json() for choice in self.models],
            },
            {
                "configId": "thought_level",
                "name": "Thought level",
                "category": "thought_level",
                "type": "select",
                "currentValue": self.thought_level,
                "options": [
                    {"value": level, "name": name, "description": description}
                    for level, (name, description) in _THOUGHT_NAMES.items()
                ],
            },
        ]


def check_model_ref(ref: str) -> None:
    provider, sep, model = ref.partition("/")
    if not sep or not provider or not model:
        raise InvalidConfigValue(
            f"invalid model {ref!r}: expected 'provider/model', e.g. 'anthropic/claude-sonnet-4-5'"
        )


class ConfigChanges:
    def __init__(
        self,
        *,
        catalog: ModelCatalog,
        events: EventWriter,
        default_model: Callable[[str], str] | None = None,
    ) -> None:
        """``default_model``: the model a session in a mode starts with (none: one for all)."""
        self._catalog = catalog
        self._events = events
        self._default_model = default_model
        self._counts: dict[str, int] = {}

    def count(self, session_id: str) -> int:
        """How many changes ``set`` recorded for the session (in this process)."""
        return self._counts.get(session_id, 0)

    def choices(self, mode: str, model: str, thought_level: str = "default") -> ConfigChoices:
        """The client's modes, the catalog's models and the thought levels, each list with
        the current value."""
        modes = [
            ModeChoice(value=name, name=MODES[name].title, description=MODES[name].description)
            for name in CLIENT_MODES
        ]
        if mode not in CLIENT_MODES:  # a subagent's session
            modes.append(ModeChoice(value=mode, name=mode.capitalize()))
        models = self._catalog.offered()
        if model not in {c.ref for c in models}:
            models.append(ModelChoice(ref=model, name=model))
        return ConfigChoices(
            mode=mode,
            modes=tuple(modes),
            model=model,
            models=tuple(models),
            thought_level=thought_level,
        )

    async def set(self, info: SessionInfo, config_id: str, value: str) -> ConfigChoices:
        """Set the session's mode (build, plan), model (a ``provider/model`` the catalog
        resolves) or thought level; the current value again is accepted and records
        nothing. Anything else raises ``InvalidConfigValue``."""
        if config_id not in CONFIG_IDS:
            raise InvalidConfigValue(
                f"configId must be 'mode', 'model' or 'thought_level', not {config_id!r}"
            )
        if not isinstance(value, str):
            raise InvalidConfigValue(f"the value of {config_id} must be a string")
        mode, model, level = info.mode, info.model, info.thought_level
        if config_id == "thought_level":
            if value not in THOUGHT_LEVELS:
                raise InvalidConfigValue(
                    f"thought_level must be one of {', '.join(THOUGHT_LEVELS)}, not {value!r}"
                )
            level = value
        elif config_id == "mode":
            check_client_mode(value)
            mode = value
            model = self._follow_mode(info, value)
        else:
            check_model_ref(value)
            if value != info.model:
                self._catalog.resolve(value)
            model = value
        choices = self.choices(mode, model, level)
        options = (
            ("mode", mode, info.mode),
            ("model", model, info.model),
            ("thought_level", level, info.thought_level),
        )
        changed = [(key, new) for key, new, old in options if new != old]
        for key, new in changed:
            changed_event = ev.ConfigChanged(
                config_id=key, value=new, config_options=choices.to_json()
            )
            await self._events.emit(info.session_id, changed_event)
        if changed:
            self._counts[info.session_id] = self.count(info.session_id) + 1
        return choices

    def _follow_mode(self, info: SessionInfo, mode: str) -> str:
        """The session's model after a switch to ``mode``: the new mode's default if it was
        on the old mode's default and the new one resolves, else the same model."""
        if self._default_model is None or info.model != self._default_model(info.mode):
            return info.model
        model = self._default_model(mode)
        if model != info.model:
            try:
                self._catalog.resolve(model)
            except InvalidConfigValue:
                return info.model
        return model
