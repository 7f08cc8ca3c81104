"""One secret filter for every tool output, before the model, the log, spill files or the
editor see it (contract.md "Environment").

The values of the agent's own key variables and of every environment variable whose name
ends in ``_KEY``, ``_TOKEN``, ``_SECRET`` or ``_PASSWORD`` become ``[redacted:NAME]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

SECRET_SUFFIXES = ("_KEY", "_TOKEN", "_SECRET", "_PASSWORD")
MIN_SECRET_LENGTH = 8
"""Shorter values ("1", "true") are too common in ordinary output to be told apart."""


class SecretFilter:
    def __init__(self, secrets: Mapping[str, str]) -> None:
        """``secrets`` maps a variable name to its value."""
        by_value: dict[str, str] = {}
        for name, value in sorted(secrets.items()):
            if len(value) >= MIN_SECRET_LENGTH:
                by_value.setdefault(value, name)
        # Longest first, so a secret containing another is replaced whole.
        ordered = sorted(by_value, key=len, reverse=True)
        self._names = by_value
        self._pattern = re.compile("|".join(map(re.escape, ordered))) if ordered else None
        self.longest = max((len(v) for v in ordered), default=0)

    @classmethod
    def from_env(cls, env: Mapping[str, str], key_names: Iterable[str] = ()) -> SecretFilter:
        names = set(key_names)
        chosen = {
            name: value
            for name, value in env.items()
            if value and (name in names or name.upper().endswith(SECRET_SUFFIXES))
        }
        return cls(chosen)

    def redact(self, text: str) -> str:
        if self._pattern is None or not text:
            return text
        return self._pattern.sub(lambda m: f"[redacted:{self._names[m.group(0)]}]", text)

    def safe_prefix(self, text: str) -> str:
        """The part of a growing text that can be shown now: redacted, minus a tail that
        could be the start of a secret still arriving."""
        redacted = self.redact(text)
        if self.longest <= 1:
            return redacted
        return redacted[: max(0, len(redacted) - (self.longest - 1))]


NO_SECRETS = SecretFilter({})
