"""Every ACP method the agent serves: params validated against the SDK's schema model, one
small function each, errors mapped once (``errors.py``).

Requests: ``initialize``, ``authenticate``, ``session/new``, ``session/load``,
``session/list``, ``session/resume``, ``session/close``, ``session/prompt``,
``session/set_mode``, ``session/set_config_option``; the notification ``session/cancel``.
Anything else is ``-32601`` (a notification is dropped, as JSON-RPC says).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable, Mapping
from typing import Any, TypeVar

from acp.exceptions import RequestError
from acp.schema import (
    AgentCapabilities,
    AuthenticateRequest,
    CancelNotification,
    CloseSessionRequest,
    Implementation,
    InitializeRequest,
    InitializeResponse,
    ListSessionsRequest,
    ListSessionsResponse,
    LoadSessionRequest,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionRequest,
    NewSessionResponse,
    PromptCapabilities,
    PromptRequest,
    PromptResponse,
    ResumeSessionRequest,
    ResumeSessionResponse,
    SessionCapabilities,
    SessionCloseCapabilities,
    SessionListCapabilities,
    SessionResumeCapabilities,
    SetSessionConfigOptionResponse,
    SetSessionConfigOptionSelectRequest,
    SetSessionModeRequest,
)
from pydantic import BaseModel, ValidationError

from lsp_agent import __version__
from lsp_agent.acp.auth import auth_methods, authenticate
from lsp_agent.acp.errors import to_request_error
from lsp_agent.acp.host import AcpHost
from lsp_agent.core.errors import LspAgentError

_log = logging.getLogger(__name__)

PROTOCOL_VERSION = 1
ModelT = TypeVar("ModelT", bound=BaseModel)
Handler = Callable[[Any], Awaitable[Any]]


class Dispatcher:
    """The SDK connection's method handler: ``(method, params, is_notification)``."""

    def __init__(self, host: AcpHost) -> None:
        self._host = host
        self._background: set[asyncio.Task[None]] = set()
        self._inflight: set[asyncio.Task[Any]] = set()
        self._requests: Mapping[str, tuple[type[BaseModel], Handler]] = {
            "initialize": (InitializeRequest, self.initialize),
            "authenticate": (AuthenticateRequest, self.authenticate),
            "session/new": (NewSessionRequest, self.new_session),
            "session/load": (LoadSessionRequest, self.load_session),
            "session/list": (ListSessionsRequest, self.list_sessions),
            "session/resume": (ResumeSessionRequest, self.resume_session),
            "session/close": (CloseSessionRequest, self.close_session),
            "session/prompt": (PromptRequest, self.prompt),
            "session/set_mode": (SetSessionModeRequest, self.set_mode),
            "session/set_config_option": (SetSessionConfigOptionSelectRequest, self.set_config),
        }
        self._notifications: Mapping[str, tuple[type[BaseModel], Handler]] = {
            "session/cancel": (CancelNotification, self.cancel),
        }

    async def __call__(self, method: str, params: Any, is_notification: bool) -> Any:
        table = self._notifications if is_notification else self._requests
        entry = table.get(method)
        if entry is None:
            if is_notification:
                _log.debug("ignored the notification %s", method)
                return None
            raise RequestError.method_not_found(method)
        model, handler = entry
        current = asyncio.current_task()
        if current is not None:
            self._inflight.add(current)
        try:
            request = model.model_validate(params if params is not None else {})
            return await handler(request)
        except asyncio.CancelledError:
            raise
        except Exception as error:
            expected = isinstance(error, (ValidationError, RequestError, LspAgentError))
            if expected:
                _log.info("%s failed: %s", method, error)
            else:
                _log.warning("%s failed: %s", method, error, exc_info=True)
            if is_notification:
                return None  # a notification has no answer to carry the error
            raise to_request_error(error) from error
        finally:
            if current is not None:
                self._inflight.discard(current)

    async def drain(self, timeout: float) -> None:
        """At the end of input: let the requests still being served finish and answer
        (running turns are cancelled first, ``host.py``), then cancel what is left, so
        nothing touches the store once it is closed."""
        pending = [*self._inflight, *self._background]
        if not pending:
            return
        _, late = await asyncio.wait(pending, timeout=timeout)
        for task in late:
            task.cancel()
        if late:
            _log.warning("%d request(s) still running at exit were cancelled", len(late))
            await asyncio.wait(late, timeout=timeout)

    # -- methods ---------------------------------------------------------------------------

    async def initialize(self, request: InitializeRequest) -> InitializeResponse:
        self._host.initialize(request.client_capabilities)
        return InitializeResponse(
            protocol_version=PROTOCOL_VERSION,
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(
                    image=True, audio=False, embedded_context=True
                ),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(
                    list=SessionListCapabilities(),
                    resume=SessionResumeCapabilities(),
                    close=SessionCloseCapabilities(),
                ),
            ),
            auth_methods=await asyncio.to_thread(auth_methods, self._host.env),
            agent_info=Implementation(name="lsp-agent", title="lsp-agent", version=__version__),
        )

    async def authenticate(self, request: AuthenticateRequest) -> dict[str, Any]:
        await asyncio.to_thread(authenticate, self._host.env, request.method_id)
        return {}

    async def new_session(self, request: NewSessionRequest) -> NewSessionResponse:
        session_id, setup = await self._host.new_session(
            request.cwd, request.additional_directories, request.mcp_servers
        )
        self._announce(session_id)
        return NewSessionResponse.model_validate(
            {
                "sessionId": session_id,
                "modes": setup.modes.model_dump(by_alias=True),
                "configOptions": setup.config_options,
            }
        )

    async def load_session(self, request: LoadSessionRequest) -> LoadSessionResponse:
        return LoadSessionResponse.model_validate(await self._reopen(request, replay=True))

    async def resume_session(self, request: ResumeSessionRequest) -> ResumeSessionResponse:
        return ResumeSessionResponse.model_validate(await self._reopen(request, replay=False))

    async def _reopen(
        self, request: LoadSessionRequest | ResumeSessionRequest, *, replay: bool
    ) -> dict[str, Any]:
        """A stored session opened again (``replay``: its history sent first), announced."""
        setup = await self._host.load_session(
            request.session_id,
            request.cwd,
            request.additional_directories,
            request.mcp_servers,
            replay=replay,
        )
        self._announce(request.session_id)
        return {
            "modes": setup.modes.model_dump(by_alias=True),
            "configOptions": setup.config_options,
        }

    async def list_sessions(self, request: ListSessionsRequest) -> ListSessionsResponse:
        sessions, cursor = await self._host.list_sessions(request.cwd, request.cursor)
        return ListSessionsResponse(sessions=sessions, next_cursor=cursor)

    async def close_session(self, request: CloseSessionRequest) -> dict[str, Any]:
        await self._host.close_session(request.session_id)
        return {}

    async def prompt(self, request: PromptRequest) -> PromptResponse:
        stop = await self._host.prompt(request.session_id, list(request.prompt))
        return PromptResponse.model_validate({"stopReason": stop})

    async def set_mode(self, request: SetSessionModeRequest) -> dict[str, Any]:
        await self._host.set_config(request.session_id, "mode", request.mode_id)
        return {}

    async def set_config(
        self, request: SetSessionConfigOptionSelectRequest
    ) -> SetSessionConfigOptionResponse:
        options = await self._host.set_config(request.session_id, request.config_id, request.value)
        return SetSessionConfigOptionResponse.model_validate({"configOptions": options})

    async def cancel(self, request: CancelNotification) -> None:
        await self._host.cancel(request.session_id)

    def _announce(self, session_id: str) -> None:
        """The session's commands, sent once its answer is out (``transport.py``)."""
        task = asyncio.create_task(self._host.announce(session_id))
        self._background.add(task)
        task.add_done_callback(self._background.discard)
