"""What a bench run collected, figure by figure, before it is written out."""

from __future__ import annotations

from typing import Any

import attrs

from bench.stats import Summary


@attrs.define
class Samples:
    """Raw samples per figure key (milliseconds, MiB, seconds or bytes, as the key says)."""

    values: dict[str, list[float]] = attrs.field(factory=dict)

    def add(self, key: str, value: float) -> None:
        self.values.setdefault(key, []).append(value)

    def summary(self, key: str) -> Summary:
        return Summary.of(self.values.get(key, []))


@attrs.define
class Results:
    """Everything the report shows: samples of ours and opencode's, extras, notes."""

    ours: Samples = attrs.field(factory=Samples)
    opencode: Samples = attrs.field(factory=Samples)
    floors: Samples = attrs.field(factory=Samples)
    extras: dict[str, Any] = attrs.field(factory=dict)
    notes: list[str] = attrs.field(factory=list)
    settings: dict[str, Any] = attrs.field(factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "settings": self.settings,
            "ours": self.ours.values,
            "opencode": self.opencode.values,
            "floors": self.floors.values,
            "extras": self.extras,
            "notes": self.notes,
        }
