"""The client as the agent sees it: its capabilities and the requests the agent sends it.

Every agent → client message goes through :class:`AcpPeer`: ``session/update``
notifications, ``session/request_permission``, ``fs/*`` and (``terminal.py``) ``terminal/*``.
Params are the SDK's schema models, answers are validated against one, so a malformed
answer is a ``ClientError`` the caller turns into a value, never a crash. No request waits
forever (a client that never answers would hold the turn for good): asks wait
``editor.ask_timeout`` (30 min), the rest ``editor.request_timeout`` (10 s) — except
``terminal/wait_for_exit``, which the command's own timeout bounds — and then fail with a
:class:`ClientTimeout`.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any, Final, Protocol, TypeVar

import attrs
from acp.exceptions import RequestError
from pydantic import BaseModel, ValidationError

from lsp_agent.acp.capabilities import ClientFeatures

_log = logging.getLogger(__name__)

AnswerT = TypeVar("AnswerT", bound=BaseModel)


class ClientError(Exception):
    """The client answered a request with an error, a malformed answer, or went away."""


class ClientTimeout(ClientError):
    """The client did not answer in time."""

    def __init__(self, method: str, seconds: float) -> None:
        super().__init__(f"{method}: no answer within {seconds:g} s")
        self.seconds = seconds


ASKS: Final = frozenset({"session/request_permission", "elicitation/create"})
"""The requests a person answers."""
UNBOUNDED: Final = frozenset({"terminal/wait_for_exit"})
"""Waits the command's own timeout bounds."""


@attrs.frozen
class PeerTimeouts:
    ask: float = 1800.0
    request: float = 10.0

    def of(self, method: str) -> float | None:
        if method in UNBOUNDED:
            return None
        return self.ask if method in ASKS else self.request


class Channel(Protocol):
    """The JSON-RPC connection (``acp.connection.Connection`` implements it)."""

    async def send_request(self, method: str, params: Any = None) -> Any: ...

    async def send_notification(self, method: str, params: Any = None) -> None: ...


def dump(model: BaseModel) -> dict[str, Any]:
    """A schema model as the wire wants it: camelCase aliases, no ``null`` fields."""
    return model.model_dump(mode="json", by_alias=True, exclude_none=True)


class AcpPeer:
    def __init__(self, channel: Channel | None = None) -> None:
        self._channel = channel
        self.features = ClientFeatures()
        """Set by ``initialize`` (``host.py``); read whenever a feature is used."""
        self.timeouts = PeerTimeouts()
        """The configured ones (``editor.*_timeout``) once an agent's settings are read."""

    def connect(self, channel: Channel) -> None:
        """The connection, once it exists (it needs the dispatcher, which needs us)."""
        self._channel = channel

    @property
    def channel(self) -> Channel:
        if self._channel is None:
            raise ClientError("not connected")
        return self._channel

    async def request(self, method: str, params: BaseModel, answer: type[AnswerT]) -> AnswerT:
        """Send ``method`` and validate the answer (``null`` counts as ``{}``).

        Raises :class:`ClientError` (:class:`ClientTimeout` when no answer came in time);
        cancelling the caller abandons the request."""
        seconds = self.timeouts.of(method)
        try:
            async with asyncio.timeout(seconds):
                raw = await self.channel.send_request(method, dump(params))
        except TimeoutError:
            assert seconds is not None
            raise ClientTimeout(method, seconds) from None
        except RequestError as error:
            raise ClientError(f"{method}: {error} ({error.code})") from error
        except ConnectionError as error:
            raise ClientError(f"{method}: the client is gone") from error
        try:
            return answer.model_validate(raw if raw is not None else {})
        except ValidationError as error:
            raise ClientError(f"{method}: malformed answer: {error}") from error

    async def notify(self, method: str, params: BaseModel) -> None:
        """Send a notification; a client that is gone is only logged."""
        try:
            await self.channel.send_notification(method, dump(params))
        except (ConnectionError, ClientError):
            _log.debug("dropped %s: the client is gone", method)
