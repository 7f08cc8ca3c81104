"""A model request answered as the script says: the step's response in the request's wire
format, whole or streamed with the step's faults (delays, drops, stalls, holds, mid-stream
errors, reordered or injected events), or the step's HTTP error."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from typing import Any

from lsp_agent.testing.fake_llm import anthropic_wire, legacy_wire, openai_wire
from lsp_agent.testing.fake_llm.completion import Completion, render_turn
from lsp_agent.testing.fake_llm.error_bodies import error_body, resolve_error, simple_error
from lsp_agent.testing.fake_llm.http_io import (
    LAST_CHUNK,
    Request,
    chunk_frame,
    response_head,
    send_json,
)
from lsp_agent.testing.fake_llm.progress import ScriptLog
from lsp_agent.testing.fake_llm.records import Provider, RequestRecord
from lsp_agent.testing.fake_llm.script import FimAnswer, Turn


class ModelResponses:
    """Writes the responses to model requests; ``stall`` waits out a stalled connection."""

    def __init__(
        self,
        progress: ScriptLog,
        *,
        record_delta_times: bool,
        stall: Callable[[int], Awaitable[None]],
    ) -> None:
        self._progress = progress
        self._record_delta_times = record_delta_times
        self._stall = stall

    async def serve(
        self,
        req: Request,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        body: dict[str, Any],
        keep: bool,
        request_id: str,
    ) -> bool:
        is_side = not body.get("tools")
        taken = self._progress.take_step(record, is_side)
        id_header = ("x-request-id" if provider == "openai" else "request-id", request_id)
        if taken is None:
            served = len(self._progress.script.turns)
            info = simple_error(
                500,
                f"fake LLM script exhausted: all {served} turns were served; "
                f"unexpected request #{record.seq} to {req.path}",
            )
            await send_json(
                writer,
                500,
                error_body(provider, info, request_id),
                close=not keep,
                extra_headers=[("x-should-retry", "false"), id_header],
            )
            self._progress.finish(record, status=500)
            return keep
        if taken == "side":
            script = self._progress.script
            side_text, side_turn = script.side_text, script.side_turn
            turn = side_turn if side_turn is not None else Turn(text=side_text)
            completion = render_turn(turn, body, len(req.body), record.seq)
        else:
            turn = taken.turn
            if turn.delay:
                await asyncio.sleep(turn.delay)
            if turn.is_error:
                return await self._serve_error(writer, record, provider, turn, keep, request_id)
            completion = render_turn(turn, body, len(req.body), record.seq)
        created = int(time.time())
        if not record.stream:
            if turn.drop_after is not None:
                writer.transport.abort()
                self._progress.finish(record, dropped=True)
                return False
            payload = (
                openai_wire.openai_completion(completion, created)
                if provider == "openai"
                else anthropic_wire.anthropic_message(completion)
            )
            await send_json(writer, 200, payload, close=not keep, extra_headers=[id_header])
            self._progress.finish(record, status=200)
            return keep
        # HTTP/1.1 gets a chunked body (the connection stays reusable); an HTTP/1.0
        # client gets a close-delimited body.
        chunked = req.version != "HTTP/1.0"
        return await self._serve_stream(
            writer, record, provider, body, turn, completion, keep and chunked, chunked, id_header
        )

    async def serve_fim(
        self,
        req: Request,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        answer: FimAnswer,
        body: dict[str, Any],
        keep: bool,
    ) -> bool:
        """``/v1/completions``: the script's next ``completions`` answer, whole or streamed."""
        if answer.delay:
            await asyncio.sleep(answer.delay)
        if answer.status is not None:
            info = simple_error(answer.status, f"fake LLM: scripted status {answer.status}")
            await send_json(
                writer, answer.status, error_body("openai", info, "req_fake"), close=not keep
            )
            self._progress.finish(record, status=answer.status)
            return keep
        created = int(time.time())
        if not record.stream:
            payload = legacy_wire.whole(answer, body, len(req.body), record.seq, created)
            await send_json(writer, 200, payload, close=not keep)
            self._progress.finish(record, status=200)
            return keep
        chunked = req.version != "HTTP/1.0"
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("connection", "keep-alive" if keep and chunked else "close"),
        ]
        if chunked:
            headers.append(("transfer-encoding", "chunked"))
        writer.write(response_head(200, headers))
        await writer.drain()
        self._progress.update(record, status=200)
        sent = 0
        for event in legacy_wire.stream_events(answer, body, len(req.body), record.seq, created):
            writer.write(chunk_frame(event) if chunked else event)
            await writer.drain()
            sent += 1
        if chunked:
            writer.write(LAST_CHUNK)
            await writer.drain()
        self._progress.finish(record, events_sent=sent)
        return keep and chunked

    async def _serve_error(
        self,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        turn: Turn,
        keep: bool,
        request_id: str,
    ) -> bool:
        info = resolve_error(turn)
        headers: list[tuple[str, str]] = [
            ("x-request-id" if provider == "openai" else "request-id", request_id)
        ]
        if turn.retry_after is not None:
            headers.append(("retry-after", f"{turn.retry_after:g}"))
        if turn.retry_after_ms is not None:
            headers.append(("retry-after-ms", f"{turn.retry_after_ms:g}"))
        if turn.should_retry is not None:
            headers.append(("x-should-retry", "true" if turn.should_retry else "false"))
        await send_json(
            writer,
            info.status,
            error_body(provider, info, request_id),
            close=not keep,
            extra_headers=headers,
        )
        self._progress.finish(record, status=info.status)
        return keep

    async def _serve_stream(
        self,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider,
        body: dict[str, Any],
        turn: Turn,
        completion: Completion,
        keep: bool,
        chunked: bool,
        id_header: tuple[str, str],
    ) -> bool:
        events: list[bytes]
        is_text: list[bool]  # which events carry an answer-text delta
        if provider == "openai":
            events, is_text = openai_wire.stream_events(completion, body, int(time.time()))
        else:
            events, is_text = anthropic_wire.stream_events(completion)
        try:
            events, is_text = _rearrange(turn, events, is_text)
        except ValueError as err:
            info = simple_error(500, f"fake LLM: {err}")
            await send_json(writer, 500, error_body(provider, info, "req_fake"), close=True)
            self._progress.finish(record, status=500, error=str(err))
            return False
        record_times = self._record_delta_times
        headers = [
            ("content-type", "text/event-stream; charset=utf-8"),
            ("cache-control", "no-cache"),
            ("connection", "keep-alive" if keep else "close"),
            id_header,
        ]
        if chunked:
            headers.append(("transfer-encoding", "chunked"))
        writer.write(response_head(200, headers))
        await writer.drain()
        self._progress.update(record, status=200)
        sent = 0
        error = turn.stream_error
        started = time.monotonic()  # for `paced`: event k is due at started + k * chunk_delay
        held = False
        for position in range(len(events) + 1):
            if turn.drop_after is not None and sent >= turn.drop_after:
                writer.transport.abort()
                self._progress.finish(record, dropped=True, events_sent=sent)
                return False
            if turn.hold_after is not None and sent == turn.hold_after and not held:
                held = True
                await self._progress.hold()
            if turn.stall_after is not None and sent >= turn.stall_after:
                self._progress.update(record, stalled=True)
                await self._stall(record.connection)
                writer.transport.abort()
                self._progress.finish(record, events_sent=sent, error="client disconnected")
                return False
            if error is not None and (position == error.after or position == len(events)):
                wire = openai_wire if provider == "openai" else anthropic_wire
                data = wire.error_event(error)
                writer.write(chunk_frame(data) if chunked else data)
                await writer.drain()
                sent += 1
                break
            if position == len(events):
                break
            if position > 0 and turn.chunk_delay:
                if not turn.paced:
                    await asyncio.sleep(turn.chunk_delay)
                elif (wait := started + position * turn.chunk_delay - time.monotonic()) > 0:
                    await asyncio.sleep(wait)
            writer.write(chunk_frame(events[position]) if chunked else events[position])
            await writer.drain()
            if record_times and is_text[position]:
                self._progress.delta_written(record, time.monotonic())
            sent += 1
            self._progress.update(record, events_sent=sent)
        if chunked:
            writer.write(LAST_CHUNK)
            await writer.drain()
        self._progress.finish(record, events_sent=sent)
        return keep


def _rearrange(
    turn: Turn, events: list[bytes], is_text: list[bool]
) -> tuple[list[bytes], list[bool]]:
    """Apply ``event_order`` (pick, reorder, repeat) and then ``inject`` (raw bytes)."""
    if turn.event_order is not None:
        wrong = [i for i in turn.event_order if not 0 <= i < len(events)]
        if wrong:
            raise ValueError(
                f"event_order indexes {wrong} are out of range: the stream has {len(events)} events"
            )
        events = [events[i] for i in turn.event_order]
        is_text = [is_text[i] for i in turn.event_order]
    # Last first, so each index refers to the stream before any injection (ties keep order).
    for item in reversed(sorted(turn.inject, key=lambda i: i.before)):
        if item.before > len(events):
            raise ValueError(
                f"inject before {item.before} is out of range: the stream has {len(events)} events"
            )
        events.insert(item.before, item.raw.encode())
        is_text.insert(item.before, False)
    return events, is_text
