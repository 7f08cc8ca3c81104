"""Every feature the language server registers, in one place, and :func:`serve`.

:func:`build_server` registers, in this order:

- ``initialize``: checks the client's options and starts building the
  :class:`~lsp_agent.lsp.host.AgentHost` (``host.start_host``) in the background
  (``startup.py``): it is answered at once, and every request waits for the host;
- ``initialized``: "starting…" as work-done progress until the host is up;
- ``textDocument/didOpen|didChange|didClose``: the open documents (``documents.py``);
- ``textDocument/inlineCompletion``: ghost text (``completion.py``), advertised only when
  ``completion.enabled`` is set;
- ``workspace/didChangeWorkspaceFolders``: logged (the host reads the folders when needed);
- ``shutdown``: stops the turns;
- every client-to-server ``agent/*`` method of ``protocol.METHODS``: ``handlers.HANDLERS``;
- ``textDocument/codeAction`` and the ``lspAgent.*`` commands of ``protocol.COMMAND_TYPES``:
  ``commands.py``;
- ``window/workDoneProgress/cancel``: a plain client's Cancel button (``plain.py``).

A new method is a model in ``protocol.py`` and a handler in ``handlers.py``; it is
registered here from those tables.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from lsp_agent.lsp.completion import register_completion
from lsp_agent.lsp.errors import RpcError, to_rpc_error
from lsp_agent.lsp.protocol import COMMAND_TYPES, METHODS, Method, Model
from lsp_agent.lsp.server import AgentServer, BadParams, serve_stdio, serve_tcp, validate_params
from lsp_agent.lsp.startup import Startup, agent_options

if TYPE_CHECKING:
    from lsp_agent.lsp.host import AgentHost

_log = logging.getLogger(__name__)


def build_server(env: Mapping[str, str]) -> tuple[AgentServer, Callable[[], Awaitable[None]]]:
    """The server with every feature registered, and the coroutine that closes it."""
    server = AgentServer(env)
    holder = Startup()
    completion = register_completion(server, holder)  # textDocument/inlineCompletion

    @server.feature(lsp.INITIALIZE)
    def initialize(params: lsp.InitializeParams) -> None:
        server.documents.attach(server.workspace)
        completion.decide(params)
        try:
            options = agent_options(params.initialization_options)
        except Exception as error:
            raise to_rpc_error(error, lsp.INITIALIZE) from error

        async def start() -> AgentHost:
            from lsp_agent.lsp.host import start_host  # the agent: after the answer

            host = await start_host(
                client=server,
                env=server.env,
                documents=server.documents,
                folders=lambda: _folder_uris(server),
                options=options,
            )
            completion.attach(host)
            return host

        holder.begin(start())

    @server.feature(lsp.INITIALIZED)
    async def initialized(params: lsp.InitializedParams) -> None:
        await holder.show_progress(server)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(params: lsp.DidOpenTextDocumentParams) -> None:
        server.documents.opened(params.text_document.uri)
        completion.opened(params)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(params: lsp.DidChangeTextDocumentParams) -> None:
        server.documents.changed()
        completion.changed(params)

    @server.feature(lsp.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(params: lsp.DidCloseTextDocumentParams) -> None:
        server.documents.closed(params.text_document.uri)
        completion.closed(params)

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    def folders_changed(params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        _log.info("workspace folders now: %s", _folder_uris(server))

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(*_args: Any) -> None:
        host = await holder.settled()
        if host is not None:
            await host.turns.aclose()

    for name, method in METHODS.items():
        if method.direction != "client_to_server":
            continue
        server.feature(name)(_wrap(name, holder, method.kind == "request"))

    @server.feature(
        lsp.TEXT_DOCUMENT_CODE_ACTION,
        lsp.CodeActionOptions(
            code_action_kinds=[lsp.CodeActionKind.QuickFix, lsp.CodeActionKind.RefactorRewrite]
        ),
    )
    async def code_action(params: lsp.CodeActionParams) -> list[lsp.CodeAction] | None:
        host = await holder.settled()  # asked while starting: answered once it is up
        if host is None or not host.agent_available:
            return None
        from lsp_agent.lsp.commands import code_actions

        return code_actions(host, params)

    for name in COMMAND_TYPES:
        server.command(name)(_command(name, holder))

    @server.feature(lsp.WINDOW_WORK_DONE_PROGRESS_CANCEL)
    async def progress_cancelled(params: lsp.WorkDoneProgressCancelParams) -> None:
        host = holder.host
        if host is not None and host.plain is not None:
            await host.plain.cancelled(params.token)

    closed = False

    async def close() -> None:
        nonlocal closed
        host = await holder.settled()
        if host is not None and not closed:
            closed = True
            await host.aclose()

    return server, close


async def _call(
    name: str, holder: Startup, handler_of: Callable[[], Any], params: Any, *, is_request: bool
) -> Any:
    """Run a handler with validated params once the host is up: bad params, a failed start
    and errors become the JSON-RPC errors of a request, or are logged for a notification
    (nobody to answer). The handler is looked up then (``handler_of``): the handlers'
    modules import the agent, which waits until ``initialize`` is answered."""
    try:
        if isinstance(params, BadParams):
            raise RpcError(params.message, -32602)
        host = await holder.wait()
        try:
            result = await handler_of()(host, params)
        except JsonRpcException:
            raise
        except Exception as error:
            raise to_rpc_error(error, name) from error
    except JsonRpcException as error:
        if is_request:
            raise
        _log.warning("%s: %s", name, error)
        return None
    return result.dump() if isinstance(result, Model) else result


def _wrap(name: str, holder: Startup, is_request: bool) -> Callable[[Any], Awaitable[Any]]:
    def handler() -> Any:
        from lsp_agent.lsp.handlers import HANDLERS

        return HANDLERS[name]

    async def handle(params: Any) -> Any:
        return await _call(name, holder, handler, params, is_request=is_request)

    handle.__name__ = name.replace("/", "_")
    return handle


def _command(name: str, holder: Startup) -> Callable[..., Awaitable[Any]]:
    """A ``workspace/executeCommand`` handler: one argument, validated like params."""
    spec = Method.for_command(COMMAND_TYPES[name])

    def handler() -> Any:
        from lsp_agent.lsp.commands import COMMAND_HANDLERS

        return COMMAND_HANDLERS[name]

    async def run(ls: object, *arguments: object) -> Any:
        # ``ls`` is the server, which pygls passes first; the rest are the arguments.
        if len(arguments) != 1:
            raise RpcError(
                f"invalid params: {name} takes exactly one argument, got {len(arguments)}",
                -32602,
            )
        argument = validate_params(spec, arguments[0])
        return await _call(name, holder, handler, argument, is_request=True)

    run.__name__ = name.replace(".", "_")
    return run


def _folder_uris(server: AgentServer) -> list[str]:
    workspace = server.workspace
    uris = [folder.uri for folder in workspace.folders.values()]
    if not uris and workspace.root_uri:
        uris = [workspace.root_uri]
    return uris


def serve(env: Mapping[str, str], *, tcp: tuple[str, int] | None = None) -> int:
    """Run the server until the client disconnects; the process exit code."""
    server, close = build_server(env)
    if tcp is None:
        serve_stdio(server, close)
    else:
        serve_tcp(server, tcp[0], tcp[1], close)
    return 0
