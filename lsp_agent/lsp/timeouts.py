"""How long the server waits for the client's answer to each of its requests.

Nothing the server asks may hang a turn: an editor that never answers (Vim + ALE answers no
server request at all) would leave it ``running`` or ``requires_action`` for good. Asks wait
for a person (``editor.ask_timeout``, default 30 min); every other request — an edit, a
save, a query, a progress token, a shown document — for a program (``editor.request_timeout``,
default 10 s). A request that runs out is cancelled at the client (``$/cancelRequest``) and
raises :class:`ClientTimeout`, which each caller turns into a result the model reads and,
where the user lost something, a ``window/showMessage``.
"""

from __future__ import annotations

from typing import Final

import attrs

__all__ = ["ASKS", "ClientTimeout", "RequestTimeouts"]

ASKS: Final = frozenset(
    {"agent/session/requestPermission", "agent/session/askQuestion", "window/showMessageRequest"}
)
"""The requests a person answers."""


@attrs.frozen
class RequestTimeouts:
    ask: float = 1800.0
    request: float = 10.0

    def of(self, method: str) -> float:
        return self.ask if method in ASKS else self.request


class ClientTimeout(Exception):
    """The client did not answer ``method`` within ``seconds``."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(f"no answer to {method} within {seconds:g} s")
        self.method = method
        self.seconds = seconds

    @property
    def waited(self) -> str:
        """``seconds`` for a person: "10 s", "30 min"."""
        if self.seconds >= 120 and self.seconds % 60 == 0:
            return f"{self.seconds / 60:g} min"
        return f"{self.seconds:g} s"
