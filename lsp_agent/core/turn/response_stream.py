"""One model response, streamed into a new assistant message.

A request that fails before its first event is retried as the :class:`RetryPolicy` says; a
response that breaks off after it started is recorded as interrupted and the same request is
sent once more; a stream that sends nothing for ``stream_idle_timeout`` has failed. Text,
reasoning and tool calls are recorded as they arrive; tools only run once a response is
complete.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Literal

import attrs

from lsp_agent.core import events as ev
from lsp_agent.core.clock import iso_time
from lsp_agent.core.errors import ProviderError
from lsp_agent.core.interfaces import Clock, IdFactory, Provider
from lsp_agent.core.messages import ModelRequest, Usage
from lsp_agent.core.recorder import Recorder
from lsp_agent.core.retry import RetryPolicy
from lsp_agent.core.stream_events import (
    Finished,
    FinishReason,
    ReasoningDelta,
    ReasoningEnded,
    StreamEvent,
    TextDelta,
    ToolCallEnded,
    ToolCallStarted,
    UsageReported,
)
from lsp_agent.core.turn.records import TurnRecords


@attrs.frozen(kw_only=True)
class Response:
    """A complete response: assistant message ``message_id`` and the tool calls it made
    (with our own call ids)."""

    message_id: str
    calls: tuple[ToolCallEnded, ...]
    usage: Usage
    finish: FinishReason


@attrs.define
class _Streaming:
    """A response while it streams."""

    message_id: str
    call_ids: dict[str, str] = attrs.Factory(dict)  # provider's id → ours (unique everywhere)
    part_id: str | None = None
    part_type: Literal["text_delta", "reasoning_delta"] | None = None
    calls: list[ToolCallEnded] = attrs.Factory(list)
    usage: Usage = Usage()
    finish: FinishReason = "end_turn"


class _BrokeOff(Exception):
    """A response stream broke off after it had started (retried once, same request)."""


class ResponseStream:
    """Streams the responses of one turn (which records each of them)."""

    def __init__(
        self, *, recorder: Recorder, records: TurnRecords, ids: IdFactory, clock: Clock
    ) -> None:
        self._rec = recorder
        self._records = records
        self._ids = ids
        self._clock = clock

    async def respond(
        self,
        request: ModelRequest,
        *,
        provider: Provider,
        retry: RetryPolicy,
        model: str,
        step: int,
    ) -> Response:
        """``request``'s response from ``provider``, recorded as a message of ``model``;
        sent once more if it broke off. Raises :class:`ProviderError` when it failed."""
        try:
            return await self._stream(request, provider, retry, model, step, may_retry=True)
        except _BrokeOff:  # the same request once more
            return await self._stream(request, provider, retry, model, step, may_retry=False)

    async def _stream(
        self,
        request: ModelRequest,
        provider: Provider,
        retry: RetryPolicy,
        model: str,
        step: int,
        *,
        may_retry: bool,
    ) -> Response:
        """Stream one response into a new assistant message.

        Raises ``_BrokeOff`` when the stream broke off after it had started and ``may_retry``:
        the partial message is then recorded as interrupted (its text is never sent to the
        model) and the caller sends the same request again. No tool has run at that point.
        """
        state = _Streaming(message_id=self._ids.new("msg"))
        await self._records.message_started(state.message_id, model=model, step=step)
        try:
            async for event in self._with_retry(request, provider, retry):
                await self._on_event(state, event)
            self._check_complete(state, provider.name)
        except ProviderError as error:
            dropped = error.kind == "stream_dropped"
            if dropped and not may_retry:
                error = ProviderError(
                    f"the model's response broke off twice ({error}); the step was abandoned",
                    kind="stream_dropped",
                    provider=error.provider,
                )
            await self._abandon(state, error, retrying=dropped and may_retry)
            if dropped and may_retry:
                raise _BrokeOff from error
            raise error from None
        return Response(
            message_id=state.message_id,
            calls=tuple(state.calls),
            usage=state.usage,
            finish=state.finish,
        )

    def _check_complete(self, state: _Streaming, provider: str) -> None:
        """A response that ended with a tool call still open is malformed: it counts as
        broken off (sent once more), never as a completed message with a dangling call."""
        ended = {call.tool_call_id for call in state.calls}
        open_calls = [
            name
            for call_id, name in self._records.open_calls(state.message_id)
            if call_id not in ended
        ]
        if open_calls:
            raise ProviderError(
                f"the response ended before its {', '.join(open_calls)} call was complete",
                kind="stream_dropped",
                provider=provider,
            )

    async def _abandon(self, state: _Streaming, error: ProviderError, *, retrying: bool) -> None:
        """Close a message whose stream failed; its unfinished tool calls never run."""
        await self._rec.flush()
        for call_id, name in self._records.open_calls(state.message_id):
            note = "the response broke off before this call was complete; it was not run"
            await self._records.tool_update(
                state.message_id, call_id, name, status="cancelled", error=note
            )
        await self._records.message_ended(
            state.message_id, status="interrupted" if retrying else "failed", error=str(error)
        )

    async def _with_retry(
        self, request: ModelRequest, provider: Provider, policy: RetryPolicy
    ) -> AsyncIterator[StreamEvent]:
        attempt = 0
        while True:
            started = False
            try:
                async for event in _idle_bounded(
                    provider.stream(request), policy.stream_idle_timeout, provider=provider.name
                ):
                    started = True
                    yield event
                return
            except ProviderError as error:
                if started:
                    broken = _broken_off(error)
                    if broken is error:
                        raise
                    raise broken from error
                if not policy.should_retry(error, attempt):
                    raise
                delay = policy.delay(error, attempt)
                attempt += 1
                retry_at = iso_time(self._clock.now() + delay)
                await self._rec.emit(
                    ev.StateChanged(
                        state="running",
                        error={"message": str(error), "retryable": True, "retryAt": retry_at},
                    )
                )
                await self._clock.sleep(delay)

    async def _on_event(self, state: _Streaming, event: StreamEvent) -> None:
        if isinstance(event, TextDelta | ReasoningDelta):
            kind: Literal["text_delta", "reasoning_delta"] = (
                "text_delta" if isinstance(event, TextDelta) else "reasoning_delta"
            )
            if state.part_type != kind or state.part_id is None:
                state.part_id, state.part_type = self._ids.new("prt"), kind
            await self._rec.delta(kind, state.message_id, state.part_id, event.text)
        elif isinstance(event, ReasoningEnded):
            part_id = state.part_id if state.part_type == "reasoning_delta" else None
            if part_id is None:
                part_id = self._ids.new("prt")
                await self._rec.delta("reasoning_delta", state.message_id, part_id, "")
            await self._rec.emit(
                ev.ReasoningEnded(
                    message_id=state.message_id,
                    part_id=part_id,
                    signature=event.signature,
                    redacted_data=event.redacted_data,
                )
            )
            state.part_id, state.part_type = None, None
        elif isinstance(event, ToolCallStarted):
            state.part_id, state.part_type = None, None
            call_id = self._call_id(state, event.tool_call_id)
            await self._records.tool_update(
                state.message_id, call_id, event.name, status="pending", input={}
            )
        elif isinstance(event, ToolCallEnded):
            call = attrs.evolve(event, tool_call_id=self._call_id(state, event.tool_call_id))
            state.calls.append(call)
            await self._records.tool_update(
                state.message_id, call.tool_call_id, call.name, status="pending", input=call.input
            )
        elif isinstance(event, UsageReported):
            state.usage = event.usage
        elif isinstance(event, Finished):
            state.finish = event.reason

    def _call_id(self, state: _Streaming, provider_id: str) -> str:
        """Our own id for a tool call: some servers reuse ids like ``call_0`` every step.

        Providers only need tool calls and results to match within a request, so the
        history sends our id back and the provider's is not kept.
        """
        if provider_id not in state.call_ids:
            state.call_ids[provider_id] = self._ids.new("call")
        return state.call_ids[provider_id]


async def _idle_bounded(
    stream: AsyncIterator[StreamEvent], timeout: float, *, provider: str
) -> AsyncIterator[StreamEvent]:
    """``stream``, failing with a clear error when its next event (the first included) takes
    longer than ``timeout``: a stalled server or proxy can never hang the turn."""
    started = False
    try:
        while True:
            deadline = asyncio.timeout(timeout)
            try:
                async with deadline:
                    event = await anext(stream)
            except StopAsyncIteration:
                return
            except TimeoutError:
                if not deadline.expired():
                    raise
                what = "the response stalled" if started else "the model did not answer"
                raise ProviderError(
                    f"{what}: nothing received for {timeout:g} s (retry.stream_idle_timeout)",
                    kind="stream_dropped" if started else "connection",
                    provider=provider,
                ) from None
            started = True
            yield event
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            await aclose()


@attrs.frozen
class IdleBoundedProvider:
    """``inner`` with the stream idle timeout on every stream (the compactor's summary call
    is bounded like the turn's own calls)."""

    inner: Provider
    timeout: float

    @property
    def name(self) -> str:
        return self.inner.name

    def stream(self, request: ModelRequest) -> AsyncIterator[StreamEvent]:
        return _idle_bounded(self.inner.stream(request), self.timeout, provider=self.inner.name)

    async def count_tokens(self, request: ModelRequest) -> int | None:
        return await self.inner.count_tokens(request)


def _broken_off(error: ProviderError) -> ProviderError:
    """A failure after the response had started leaves a partial message: whatever the
    provider called it (an overloaded or server error event mid-stream, a reset), it is
    a broken-off stream, which is sent once more."""
    if error.kind == "stream_dropped" or not error.retryable:
        return error
    return ProviderError(
        f"the response stream broke off: {error}",
        kind="stream_dropped",
        status=error.status,
        provider=error.provider,
    )
