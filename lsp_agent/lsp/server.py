"""``lsp-agent serve``: the language server (pygls 2.x) that hosts the agent.

The protocol class validates every ``agent/*`` message against its model in
``protocol.py`` before a handler sees it: malformed params are answered with ``-32602``
naming the field, and no input — however malformed — leaves a request unanswered or stops
the server. Handlers live in ``handlers.py``, one small function per method.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
import uuid
from collections.abc import Mapping
from typing import Any

import attrs
from lsprotocol import types as lsp
from pydantic import ValidationError
from pygls.io_ import StdinAsyncReader, StdoutWriter, run_async
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, lsp_method
from pygls.protocol.json_rpc import JsonRPCProtocol, MsgId

from lsp_agent import __version__
from lsp_agent.lsp.documents import OpenDocuments
from lsp_agent.lsp.errors import RpcError, describe_validation_error
from lsp_agent.lsp.protocol import (
    COMMAND_TYPES,
    METHODS,
    PROTOCOL_VERSION,
    AgentServerCapabilities,
    ErrorCodes,
    Method,
)

_log = logging.getLogger(__name__)

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

    def handle_message(self, message: Any) -> None:
        if not isinstance(message, dict):
            _log.warning("ignoring a message that is not a JSON object")
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

    @lsp_method(lsp.INITIALIZE)
    def lsp_initialize(self, params: lsp.InitializeParams) -> Any:
        result = yield from super().lsp_initialize(params)
        capabilities = AgentServerCapabilities(
            protocol_version=PROTOCOL_VERSION,
            sessions={"list": True, "load": True, "export": True, "delete": True},
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

    # -- the editor adapter's Client ----------------------------------------------------------

    def notify(self, method: str, params: dict[str, Any]) -> None:
        # A plain dict serializes without the converter: the hot path of streaming.
        self.protocol._send_data({"jsonrpc": "2.0", "method": method, "params": params})

    async def request(self, method: str, params: Any) -> Any:
        msg_id = str(uuid.uuid4())
        future = self.protocol.send_request(method, params, msg_id=msg_id)
        try:
            return await asyncio.wrap_future(future)
        except asyncio.CancelledError:
            # Forget it first: the client's late answer is then ignored, not set on a
            # cancelled future.
            self.protocol._request_futures.pop(msg_id, None)
            future.cancel()
            self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise

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
        reader = StdinAsyncReader(sys.stdin.buffer, server.thread_pool)
        server.protocol.set_writer(StdoutWriter(sys.stdout.buffer))
        try:
            await run_async(
                stop_event=stop,
                reader=reader,
                protocol=server.protocol,
                logger=_log,
                error_handler=server.report_server_error,
            )
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
                await run_async(
                    stop_event=stop,
                    reader=reader,
                    protocol=server.protocol,
                    logger=_log,
                    error_handler=server.report_server_error,
                )
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


def _shutdown(server: AgentServer) -> None:
    stop: Any = server
    stop.shutdown()
