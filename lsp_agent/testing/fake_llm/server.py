"""The fake server: its socket and connections, routing, the control routes and the public
face tests use; what a model request is answered with is ``responses``', the script's
progress and the log ``progress``'."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
from types import TracebackType
from typing import Any, Self

from lsp_agent.testing.fake_llm.completion import (
    fake_id,
)
from lsp_agent.testing.fake_llm.error_bodies import error_body, simple_error
from lsp_agent.testing.fake_llm.http_io import (
    DEFAULT_MAX_BODY_BYTES,
    DEFAULT_REQUEST_TIMEOUT,
    MAX_HEAD_BYTES,
    HttpError,
    Request,
    read_request,
    send_json,
)
from lsp_agent.testing.fake_llm.progress import ScriptLog
from lsp_agent.testing.fake_llm.records import Provider, RequestRecord
from lsp_agent.testing.fake_llm.responses import ModelResponses
from lsp_agent.testing.fake_llm.script import Script, ScriptError, ScriptLike, parse_script


class FakeLLMServer:
    """A scripted fake Anthropic/OpenAI server on a real loopback socket.

    The request log and the script are guarded by a lock, so ``requests``,
    ``set_script`` and ``wait_for_requests`` may be used from other threads while the
    server runs its own event loop (see ``running_fake_llm``).

    With ``record_delta_times``, each streamed record gets ``delta_times``: the
    ``time.monotonic()`` at which each answer-text delta had been written (after its
    ``drain()``), in order (for latency benchmarks).
    """

    def __init__(
        self,
        script: ScriptLike | None = None,
        *,
        host: str = "127.0.0.1",
        port: int = 0,
        request_timeout: float = DEFAULT_REQUEST_TIMEOUT,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        record_delta_times: bool = False,
    ) -> None:
        self._host = host
        self._requested_port = port
        self._request_timeout = request_timeout
        self._max_body = max_body_bytes
        self._progress = ScriptLog()
        self._responses = ModelResponses(
            self._progress, record_delta_times=record_delta_times, stall=self._stall
        )
        self._server: asyncio.Server | None = None
        self._port: int | None = None
        self._connections: set[asyncio.Task[None]] = set()
        self._readers: dict[int, asyncio.StreamReader] = {}
        self._connection_count = 0
        self.set_script(parse_script(script))

    # ----------------------------------------------------------------- lifecycle

    async def start(self) -> None:
        if self._server is not None:
            raise RuntimeError("fake LLM server already started")
        self._server = await asyncio.start_server(
            self._on_connection, self._host, self._requested_port, limit=MAX_HEAD_BYTES
        )
        sockets = self._server.sockets
        self._port = int(sockets[0].getsockname()[1])

    async def stop(self) -> None:
        server, self._server = self._server, None
        if server is None:
            return
        server.close()
        tasks = list(self._connections)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        await server.wait_closed()

    async def __aenter__(self) -> Self:
        await self.start()
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.stop()

    # ----------------------------------------------------------------- properties

    @property
    def host(self) -> str:
        return self._host

    @property
    def port(self) -> int:
        if self._port is None:
            raise RuntimeError("fake LLM server not started")
        return self._port

    @property
    def base_url(self) -> str:
        return f"http://{self._host}:{self.port}"

    @property
    def anthropic_base_url(self) -> str:
        return self.base_url

    @property
    def openai_base_url(self) -> str:
        return f"{self.base_url}/v1"

    @property
    def script(self) -> Script:
        return self._progress.script

    @property
    def requests(self) -> list[RequestRecord]:
        """A snapshot of the request log (copies; safe to read from any thread)."""
        return self._progress.requests

    def model_bodies(self) -> list[dict[str, Any]]:
        """The bodies of the model requests, in order (side requests such as titles left out)."""
        return [r.body for r in self.requests if r.turn != "side"]

    @property
    def remaining_turns(self) -> int:
        """How many script turns have not been (completely) served yet."""
        return self._progress.remaining_turns

    def log_json(self) -> list[dict[str, Any]]:
        return self._progress.log_json()

    def set_script(self, script: ScriptLike) -> None:
        """Replace the script; serving restarts at its first turn. The log is kept."""
        self._progress.set_script(script)

    def release(self) -> None:
        """Let one ``hold_after`` stream go on: the earliest held (or the next to hold).

        Any thread may call it, before or after the stream reaches its hold.
        """
        self._progress.release()

    def clear_log(self) -> None:
        """Forget logged requests (``seq`` numbers keep increasing)."""
        self._progress.clear()

    def wait_for_requests(
        self, count: int, timeout: float = 10.0, *, finished: bool = True
    ) -> list[RequestRecord]:
        """Block until ``count`` requests are logged (and finished); other threads only.

        Raises ``TimeoutError``. Do not call it on the server's own event loop; use
        ``wait_for_requests_async`` there.
        """
        return self._progress.wait_for(count, timeout, finished=finished)

    async def wait_for_requests_async(
        self,
        count: int,
        timeout: float = 10.0,
        *,
        finished: bool = True,
    ) -> list[RequestRecord]:
        """Like ``wait_for_requests`` but polls without blocking the event loop."""
        return await self._progress.wait_for_async(count, timeout, finished=finished)

    # ----------------------------------------------------------------- connections

    def _on_connection(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        # A plain callback that owns the connection task: asyncio's own wrapper task would
        # log a spurious error when ``stop()`` cancels it.
        task = asyncio.get_running_loop().create_task(self._serve_connection(reader, writer))
        self._connections.add(task)
        task.add_done_callback(self._connection_done)

    def _connection_done(self, task: asyncio.Task[None]) -> None:
        self._connections.discard(task)
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            task.get_loop().call_exception_handler(
                {"message": "fake LLM connection handler failed", "exception": error}
            )

    async def _serve_connection(
        self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter
    ) -> None:
        connection = self._connection_count
        self._connection_count += 1
        sock = writer.get_extra_info("socket")
        if sock is not None:
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        # With a zero high-water mark, drain() waits until the kernel has every byte:
        # each SSE event is flushed as written and end times are accurate.
        writer.transport.set_write_buffer_limits(high=0)
        self._readers[connection] = reader
        try:
            while True:
                try:
                    async with asyncio.timeout(self._request_timeout):
                        req = await read_request(reader, self._max_body, connection)
                except TimeoutError:
                    break
                except HttpError as err:
                    info = simple_error(err.status, err.message)
                    await send_json(
                        writer, err.status, error_body(None, info, "req_fake"), close=True
                    )
                    break
                if req is None:
                    break
                if not await self._dispatch(req, writer):
                    break
        except (ConnectionError, asyncio.IncompleteReadError):
            pass
        finally:
            self._readers.pop(connection, None)
            if writer.transport.is_closing():
                writer.transport.abort()
            else:
                writer.close()
                with contextlib.suppress(Exception):
                    await writer.wait_closed()

    async def _stall(self, connection: int) -> None:
        """Send nothing until the client gives up (closes its end) or the server stops."""
        reader = self._readers.get(connection)
        if reader is None:
            await asyncio.Event().wait()
            return
        with contextlib.suppress(ConnectionError):
            while await reader.read(65536):
                pass

    async def _dispatch(self, req: Request, writer: asyncio.StreamWriter) -> bool:
        """Serve one request; return whether the connection may be reused."""
        keep = not req.wants_close
        if req.path.startswith("/_"):
            return await self._control(req, writer, keep)
        provider: Provider | None
        if req.path.endswith("/completions"):  # chat or legacy (fill in the middle)
            provider = "openai"
        elif req.path.endswith("/messages") or req.path.endswith("/messages/count_tokens"):
            provider = "anthropic"
        else:
            provider = None
        body: Any = None
        parse_error: str | None = None
        if req.body:
            try:
                body = json.loads(req.body)
            except (json.JSONDecodeError, UnicodeDecodeError) as err:
                parse_error = f"request body is not valid JSON: {err}"
        stream = isinstance(body, dict) and body.get("stream") is True
        record = self._progress.new_record(req, provider, body, stream)
        try:
            return await self._serve_logged(req, writer, record, provider, body, parse_error, keep)
        except BaseException as err:
            if not self._progress.finished(record):
                if isinstance(err, ConnectionError):
                    reason = "client disconnected"
                elif isinstance(err, asyncio.CancelledError):
                    reason = "server stopped"
                else:
                    reason = f"fake LLM internal error: {err!r}"
                self._progress.finish(record, error=reason)
            raise

    async def _serve_logged(
        self,
        req: Request,
        writer: asyncio.StreamWriter,
        record: RequestRecord,
        provider: Provider | None,
        body: Any,
        parse_error: str | None,
        keep: bool,
    ) -> bool:
        request_id = fake_id("req_fake", "req", record.seq)
        if provider is None or req.method != "POST":
            status = 404 if provider is None else 405
            info = simple_error(status, f"fake LLM: no route for {req.method} {req.path}")
            await send_json(writer, status, error_body(provider, info, request_id), close=not keep)
            self._progress.finish(record, kind="not_found", status=status)
            return keep
        if parse_error is not None or not isinstance(body, dict):
            info = simple_error(400, parse_error or "request body must be a JSON object")
            await send_json(writer, 400, error_body(provider, info, request_id), close=not keep)
            self._progress.finish(record, kind="bad_request", status=400)
            return keep
        if req.path.endswith("/count_tokens"):
            payload = {"input_tokens": max(1, len(req.body) // 4)}
            await send_json(writer, 200, payload, close=not keep)
            self._progress.finish(record, turn="side", kind="count_tokens", status=200)
            return keep
        if not req.path.endswith("/chat/completions") and provider == "openai":
            answer = self._progress.take_completion(record)
            return await self._responses.serve_fim(req, writer, record, answer, body, keep)
        return await self._responses.serve(req, writer, record, provider, body, keep, request_id)

    async def _control(self, req: Request, writer: asyncio.StreamWriter, keep: bool) -> bool:
        if req.method == "GET" and req.path == "/_health":
            await send_json(writer, 200, {"status": "ok"}, close=not keep)
        elif req.method == "GET" and req.path == "/_log":
            await send_json(writer, 200, self.log_json(), close=not keep)
        elif req.method == "POST" and req.path == "/_script":
            try:
                self.set_script(
                    parse_script(json.loads(req.body or b"null"), source="POST /_script")
                )
            except (ScriptError, json.JSONDecodeError, UnicodeDecodeError) as err:
                await send_json(writer, 400, {"error": str(err)}, close=not keep)
            else:
                turns = len(self.script.turns)
                await send_json(writer, 200, {"ok": True, "turns": turns}, close=not keep)
        else:
            await send_json(
                writer, 404, {"error": f"no control route {req.method} {req.path}"}, close=not keep
            )
        return keep
