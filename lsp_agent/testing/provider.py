"""ScriptedProvider: plays prepared streams to the loop, and fails loudly when off-script."""

from __future__ import annotations

from collections.abc import AsyncIterator, Sequence

from lsp_agent.core.errors import ProviderError
from lsp_agent.core.messages import ModelRequest
from lsp_agent.core.stream_events import Finished, StreamEvent, TextDelta

Step = Sequence[StreamEvent | ProviderError] | ProviderError


class UnexpectedCall(AssertionError):
    """The loop asked the model for more than the script holds."""


class ScriptedProvider:
    """Each call to ``stream`` consumes the next step: a list of events, or an error to raise.

    An error inside a step's list is raised at that point of the stream (a dropped stream).

    Requests without tools (side requests such as titles) get ``side_answer`` and do not
    consume a step. Every request is kept in ``requests`` for assertions.
    """

    def __init__(
        self, steps: Sequence[Step], *, name: str = "scripted", side_answer: str = "Test title"
    ) -> None:
        self._steps = list(steps)
        self._name = name
        self._side_answer = side_answer
        self.requests: list[ModelRequest] = []
        self.side_requests: list[ModelRequest] = []

    @property
    def name(self) -> str:
        return self._name

    @property
    def unconsumed(self) -> int:
        return len(self._steps)

    async def count_tokens(self, request: ModelRequest) -> int | None:
        return None  # scripted models have no token counter: the estimate decides

    async def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        if not request.tools:
            self.side_requests.append(request)
            yield TextDelta(text=self._side_answer)
            yield Finished(reason="end_turn")
            return
        self.requests.append(request)
        if not self._steps:
            raise UnexpectedCall(f"unexpected model call #{len(self.requests)}")
        step = self._steps.pop(0)
        if isinstance(step, ProviderError):
            raise step
        for event in step:
            if isinstance(event, ProviderError):
                raise event  # mid-stream, after the events before it
            yield event
