"""The request log: one record per request the server saw, and which wire format it spoke."""

from __future__ import annotations

import dataclasses
from typing import Any, Literal

Provider = Literal["anthropic", "openai"]
"""The wire format a request spoke (``/v1/completions`` is ``openai``, ``turn: "completion"``)."""


@dataclasses.dataclass
class RequestRecord:
    """One logged request. ``turn`` is the script turn index, ``"side"``, ``"completion"``
    (``/v1/completions``: its index in ``completions`` is ``attempt``) or ``None``."""

    seq: int
    method: str
    path: str
    query: str
    headers: dict[str, str]
    body: Any
    body_bytes: int
    provider: Provider | None
    stream: bool
    connection: int
    arrived_monotonic: float
    arrived_wall: float
    turn: int | Literal["side", "completion"] | None = None
    attempt: int | None = None
    kind: str = "pending"
    status: int | None = None
    ended_monotonic: float | None = None
    ended_wall: float | None = None
    events_sent: int = 0
    dropped: bool = False
    stalled: bool = False
    error: str | None = None
    delta_times: list[float] = dataclasses.field(default_factory=list)

    def copy(self) -> RequestRecord:
        """A copy that shares no mutable list with the live record."""
        return dataclasses.replace(self, delta_times=list(self.delta_times))

    def to_json(self) -> dict[str, Any]:
        return dataclasses.asdict(self)
