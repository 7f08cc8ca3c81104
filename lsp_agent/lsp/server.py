"""``lsp-agent serve``: the language server (pygls 2.x) that hosts the agent.

The protocol class validates every ``agent/*`` message against its model in
``protocol.py`` before a handler sees it: malformed params are answered with ``-32602``
naming the field, and no input — however malformed — leaves a request unanswered or stops
the server: messages are split by ``framing.py`` (a size cap, resynchronisation on a wrong
``Content-Length``), a body that is not JSON is answered ``-32700`` and one that is not a
request ``-32600``, both with ``id: null`` as JSON-RPC 2.0 says. ``features.py`` registers
what the server answers; handlers live in ``handlers.py``, one small function per method.
"""

from __future__ import annotations

import asyncio
import json
import logging
import sys
import threading
import uuid
from collections.abc import Mapping
from concurrent.futures import Executor
from typing import Any, BinaryIO

import attrs
from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.exceptions import JsonRpcException
from pygls.io_ import StdoutWriter
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId

from lsp_agent import __version__
from lsp_agent.lsp.documents import OpenDocuments
from lsp_agent.lsp.errors import RpcError, describe_validation_error
from lsp_agent.lsp.framing import (
    MAX_MESSAGE_BYTES,
    BadHeader,
    Body,
    ByteSource,
    Frame,
    TooLarge,
    read_frames,
)
from lsp_agent.lsp.protocol import (
    COMMAND_TYPES,
    METHODS,
    PROTOCOL_VERSION,
    AgentServerCapabilities,
    ErrorCodes,
    Method,
)
from lsp_agent.lsp.timeouts import ClientTimeout, RequestTimeouts

_log = logging.getLogger(__name__)

PARSE_ERROR = -32700
INVALID_REQUEST = -32600

INCOMING = {name: m for name, m in METHODS.items() if m.direction == "client_to_server"}
OUTGOING_REQUESTS = {
    name for name, m in METHODS.items() if m.direction == "server_to_client" and m.kind == "request"
}


@attrs.frozen
class BadParams:
    """Params that failed validation; the handler wrapper answers ``-32602`` with it."""

    message: str


@attrs.define
class AgentRequestMessage:
    """An incoming ``agent/*`` request, params already validated (or ``BadParams``)."""

    id: MsgId
    method: str
    params: Any
    jsonrpc: str = "2.0"


@attrs.define
class AgentNotificationMessage:
    method: str
    params: Any
    jsonrpc: str = "2.0"


@attrs.define
class RawResponseMessage:
    """A client's answer to one of our ``agent/*`` requests, kept as plain JSON."""

    id: MsgId
    result: Any
    jsonrpc: str = "2.0"


class _Handled(Exception):
    """The message was answered (or dropped) while being structured."""


def validate_params(method: Method, raw: Any) -> Any:
    """The params model for ``raw`` (absent params count as ``{}``), or ``BadParams``."""
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return BadParams("invalid params: params must be an object")
    try:
        return method.params.model_validate(raw)
    except ValidationError as error:
        return BadParams(describe_validation_error(error))
    except (RecursionError, ValueError, TypeError) as error:
        return BadParams(f"invalid params: {error}")


class AgentProtocol(LanguageServerProtocol):
    """LSP plus the typed ``agent/*`` methods, hardened against malformed input.

    pygls structures JSON objects bottom-up while parsing, so a nested object that happens
    to look like a message would be structured too, and a failure there would drop the
    whole message unanswered. Here parsing yields plain dicts, and only the whole message
    is structured, in :meth:`handle_message`.
    """

    def structure_message(self, data: dict[str, Any]) -> Any:
        return data

    def get_result_type(self, method: str) -> type[Any] | None:  # type: ignore[override]
        if method in OUTGOING_REQUESTS:
            return RawResponseMessage
        return super().get_result_type(method)

    def receive_frame(self, frame: Frame) -> None:
        """One frame of the stream: a body is parsed and handled; the rest is logged, and a
        body too large to read is answered (its id is unknown: ``null``)."""
        if isinstance(frame, TooLarge):
            _log.warning(
                "dropped a message of %d bytes (the limit is %d)", frame.length, MAX_MESSAGE_BYTES
            )
            self._answer_unknown(
                INVALID_REQUEST,
                f"message too large: {frame.length} bytes (the limit is {MAX_MESSAGE_BYTES})",
            )
            return
        if isinstance(frame, BadHeader):
            _log.warning("skipped bytes that are not a message header: %r", frame.sample)
            return
        if frame.resynced:
            _log.warning("a message's Content-Length was wrong; reading on from the next header")
        message = _parse(frame)
        if isinstance(message, _NotJson):
            _log.warning("answered a message that is not JSON: %s", message.reason)
            self._answer_unknown(PARSE_ERROR, f"parse error: {message.reason}")
            return
        try:
            self.handle_message(message)
        except Exception as error:  # as pygls' loop does: log it, read on
            _log.exception("unable to handle a message")
            self._server._report_server_error(error, JsonRpcException)

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            what = "a batch (an array)" if isinstance(message, list) else "not a JSON object"
            self._answer_unknown(INVALID_REQUEST, f"invalid request: {what}")
            return
        try:
            structured = self._structure(message)
        except _Handled:
            return
        super().handle_message(structured)

    def _structure(self, data: dict[str, Any]) -> Any:
        method = data.get("method")
        msg_id = data.get("id")
        is_request = "id" in data and isinstance(method, str)
        if not isinstance(msg_id, (str, int)) or isinstance(msg_id, bool):
            msg_id = None
        if "id" in data and msg_id is None and "method" in data:
            self._answer_unknown(
                INVALID_REQUEST, "invalid request: id must be a string or an integer"
            )
            raise _Handled()
        if "method" in data and not isinstance(method, str):
            if msg_id is not None:
                self._answer_error(
                    msg_id, INVALID_REQUEST, "invalid request: method must be a string"
                )
            else:
                self._answer_unknown(INVALID_REQUEST, "invalid request: method must be a string")
            raise _Handled()
        if "method" not in data and "id" not in data:
            self._answer_unknown(INVALID_REQUEST, "invalid request: no method and no id")
            raise _Handled()
        if data.get("jsonrpc") != JsonRPCProtocol.VERSION:
            if is_request and msg_id is not None:
                self._answer_error(msg_id, -32600, 'invalid request: "jsonrpc" must be "2.0"')
            raise _Handled()
        if isinstance(method, str) and method in INCOMING:
            spec = INCOMING[method]
            params = validate_params(spec, data.get("params"))
            if "id" in data:
                if msg_id is None:
                    raise _Handled()
                return AgentRequestMessage(id=msg_id, method=method, params=params)
            return AgentNotificationMessage(method=method, params=params)
        try:
            return JsonRPCProtocol.structure_message(self, data)
        except Exception as error:
            cause = error.__cause__ or error
            if is_request and msg_id is not None:
                self._answer_error(msg_id, ErrorCodes.INVALID_PARAMS, f"invalid params: {cause}")
            elif msg_id is not None and method is None:
                # A malformed answer to one of our requests: fail that request, never hang.
                self._handle_response(
                    msg_id,
                    None,
                    lsp.ResponseError(code=-32603, message=f"malformed response: {cause}"),
                )
            else:
                _log.warning("dropping a malformed notification %r: %s", method, cause)
            raise _Handled() from error

    def _send_handler_result(self, future: Any, *, msg_id: MsgId) -> None:
        """Expected errors (bad params, unknown or busy session) are answered without the
        traceback pygls would log for them."""
        if future.done() and not future.cancelled():
            error = future.exception()
            if isinstance(error, RpcError):
                self._request_futures.pop(msg_id, None)
                self._send_response(msg_id, error=error.to_response_error())
                return
        super()._send_handler_result(future, msg_id=msg_id)

    def _answer_error(self, msg_id: MsgId, code: int, message: str) -> None:
        self._send_response(msg_id, error=lsp.ResponseError(code=code, message=message))

    def _answer_unknown(self, code: int, message: str) -> None:
        """An error for a message whose id cannot be known (JSON-RPC 2.0: ``id: null``)."""
        self._send_data({"jsonrpc": "2.0", "id": None, "error": {"code": code, "message": message}})

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        capabilities = AgentServerCapabilities(
            protocol_version=PROTOCOL_VERSION,
            sessions={"list": True, "load": True, "export": True, "delete": True, "search": True},
            revert=True,
            commands=list(COMMAND_TYPES),
        )
        result.capabilities.experimental = {"agent": capabilities.dump()}
        return result


class AgentServer(LanguageServer):
    """The connection: sends and receives. What the agent does lives in ``host.py``."""

    def __init__(self, env: Mapping[str, str]) -> None:
        super().__init__(
            "lsp-agent",
            __version__,
            text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
            protocol_cls=AgentProtocol,
        )
        self.env = dict(env)
        self.documents = OpenDocuments()
        self.timeouts = RequestTimeouts()
        """How long each request to the client may take; the host sets the configured ones
        (``editor.*_timeout``) once the settings are read."""

    # -- the editor adapter's Client ----------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        # A plain dict serializes without the converter: the hot path of streaming.
        self.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        """The client's answer; :class:`ClientTimeout` when it does not come within
        ``timeouts`` (the request is then cancelled at the client, as on a cancel)."""
        msg_id = str(uuid.uuid4())
        seconds = self.timeouts.of(method)
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        try:
            async with asyncio.timeout(seconds):
                return await asyncio.wrap_future(future)
        except TimeoutError:
            self._forget(msg_id, future)
            raise ClientTimeout(method, seconds) from None
        except asyncio.CancelledError:
            self._forget(msg_id, future)
            raise

    def _forget(self, msg_id: str, future: Any) -> None:
        # Forget it first: the client's late answer is then ignored, not set on a
        # cancelled future.
        self.protocol._request_futures.pop(msg_id, None)
        future.cancel()
        self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))

    def send_progress(self, token: str, value: Any) -> None:
        self.protocol.notify(lsp.PROGRESS, lsp.ProgressParams(token=token, value=value))

    def client_supports(self, *path: str) -> bool:
        """Whether the client's capabilities have a truthy value at ``path``."""
        value: Any = self.client_capabilities
        for name in path:
            value = getattr(value, name, None)
        return bool(value)

    @property
    def supports_change_annotations(self) -> bool:
        return self.client_supports("workspace", "workspace_edit", "change_annotation_support")

    @property
    def supports_apply_edit(self) -> bool:
        """``workspace.applyEdit``: absent means the client cannot take edits (LSP)."""
        return self.client_supports("workspace", "apply_edit")

    @property
    def supports_document_changes(self) -> bool:
        workspace = getattr(self.client_capabilities, "workspace", None)
        edit = getattr(workspace, "workspace_edit", None)
        return bool(getattr(edit, "document_changes", False))

    def report_server_error(self, error: Exception, source: Any) -> None:
        # Errors of requests were answered already; others are only logged (a message box
        # per malformed notification would be worse than useless).
        _log.error("server error (%s): %s", getattr(source, "__name__", source), error)


def serve_stdio(server: AgentServer, on_close: Any) -> None:
    """Serve on stdin/stdout until the client goes away; ``on_close`` is awaited at the end."""

    async def main() -> None:
        server._stop_event = stop = threading.Event()
        source = _BlockingSource(sys.stdin.buffer, server.thread_pool)
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        try:
            await _receive(source, server, stop)
        finally:
            await on_close()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit, BrokenPipeError):
        pass
    finally:
        _shutdown(server)


def serve_tcp(server: AgentServer, host: str, port: int, on_close: Any) -> None:
    """Serve one client over TCP (``--tcp HOST:PORT``), then exit."""

    async def main() -> None:
        done = asyncio.Event()
        server._stop_event = stop = threading.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            server.protocol.set_writer(writer)
            try:
                await _receive(_StreamSource(reader), server, stop)
            finally:
                done.set()

        listener = await asyncio.start_server(connection, host, port)
        addresses = ", ".join(str(s.getsockname()) for s in listener.sockets)
        _log.warning("lsp-agent listening on %s", addresses)
        try:
            async with listener:
                await done.wait()
        finally:
            await on_close()

    try:
        asyncio.run(main())
    except (KeyboardInterrupt, SystemExit, BrokenPipeError):
        pass
    finally:
        _shutdown(server)


async def _receive(source: ByteSource, server: AgentServer, stop: threading.Event) -> None:
    """Hand each frame to the protocol until the stream ends or the server stops."""
    protocol: AgentProtocol = server.protocol  # type: ignore[assignment]
    async for frame in read_frames(source):
        if stop.is_set():
            break
        protocol.receive_frame(frame)
    _log.info("the client's stream ended")


@attrs.frozen
class _NotJson:
    reason: str


def _parse(frame: Body) -> Any:
    """The JSON value of a body, or why it is not one."""
    try:
        text = frame.data.decode("utf-8")
    except UnicodeDecodeError as error:
        return _NotJson(f"the body is not UTF-8 ({error.reason} at byte {error.start})")
    try:
        return json.loads(text)
    except RecursionError:
        return _NotJson("the JSON is nested too deeply")
    except ValueError as error:
        return _NotJson(f"the body is not JSON ({error})")


class _BlockingSource:
    """A ``ByteSource`` over a blocking binary stream (stdin), read in a worker thread."""

    def __init__(self, stream: BinaryIO, executor: Executor) -> None:
        self._stream = stream
        self._executor = executor

    async def read_some(self, limit: int) -> bytes:
        read1 = getattr(self._stream, "read1", self._stream.read)
        data: bytes = await asyncio.get_running_loop().run_in_executor(self._executor, read1, limit)
        return data


class _StreamSource:
    """A ``ByteSource`` over an asyncio stream (a TCP connection)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self._reader = reader

    async def read_some(self, limit: int) -> bytes:
        return await self._reader.read(limit)


def _shutdown(server: AgentServer) -> None:
    stop: Any = server
    stop.shutdown()
