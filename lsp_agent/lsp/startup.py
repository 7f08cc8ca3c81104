"""The host comes up after ``initialize`` is answered, so an editor is never kept waiting.

Opening the database, recovering dead turns, importing the provider SDK and building the
agent take seconds on a cold machine; an editor that waits that long for ``initialize``
tells its user the server "is not running". So ``initialize`` only checks the client's
options and starts :class:`Startup`; every request then waits for the host (never an error
because it is still starting), and a client that supports work-done progress sees
"lsp-agent: starting…" until it is up. A start that fails answers every later request with
the reason and shows it once (``window/showMessage``). Nothing of the agent is imported
before ``initialize`` is answered: ``features.py`` reaches the host, the handlers and the
commands only from here on.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from lsp_agent.lsp.errors import RpcError
from lsp_agent.lsp.protocol import AgentClientOptions

if TYPE_CHECKING:
    from lsp_agent.lsp.host import AgentHost

_log = logging.getLogger(__name__)

SERVER_NOT_INITIALIZED = -32002
PROGRESS_TOKEN = "lsp-agent/starting"


def agent_options(raw_options: Any) -> AgentClientOptions | None:
    """``initializationOptions.agent``, checked; None for a plain LSP client."""
    if isinstance(raw_options, dict) and "agent" in raw_options:
        return AgentClientOptions.model_validate(raw_options["agent"])
    return None


class Startup:
    """The host being started, then started (or the error that stopped it)."""

    def __init__(self) -> None:
        self._task: asyncio.Task[AgentHost] | None = None

    def begin(self, start: Coroutine[Any, Any, AgentHost]) -> None:
        """Start the host in the background (``initialize`` calls this once)."""
        self._task = asyncio.get_running_loop().create_task(start)

    @property
    def host(self) -> AgentHost | None:
        """The host if it is up now; None while starting, after a failure, or before
        ``initialize``."""
        task = self._task
        if task is None or not task.done() or task.cancelled() or task.exception() is not None:
            return None
        return task.result()

    async def wait(self) -> AgentHost:
        """The host, once started. Raises the JSON-RPC error of a start that failed, or
        "not initialized" before ``initialize``."""
        task = self._task
        if task is None:
            raise RpcError("the server is not initialized", SERVER_NOT_INITIALIZED)
        try:
            return await asyncio.shield(task)
        except asyncio.CancelledError:
            if task.cancelled():
                raise RpcError("the server is shutting down", SERVER_NOT_INITIALIZED) from None
            raise
        except Exception as error:
            raise RpcError(f"lsp-agent failed to start: {_reason(error)}", -32603) from error

    async def settled(self) -> AgentHost | None:
        """The host once the start has ended, or None if it failed (for shutdown)."""
        if self._task is None:
            return None
        try:
            return await asyncio.shield(self._task)
        except Exception:
            return None

    async def show_progress(self, client: Any) -> None:
        """While starting: work-done progress, when the client supports it; a start that
        fails is shown once as an error message."""
        task = self._task
        if task is None:
            return
        token: str | None = None
        if not task.done() and client.client_supports("window", "work_done_progress"):
            try:
                await client.request(
                    lsp.WINDOW_WORK_DONE_PROGRESS_CREATE,
                    lsp.WorkDoneProgressCreateParams(token=PROGRESS_TOKEN),
                )
                token = PROGRESS_TOKEN
                client.send_progress(
                    token, lsp.WorkDoneProgressBegin(title="lsp-agent", message="starting…")
                )
            except Exception as error:
                _log.info("the client refused a progress token: %s", error)
        failure: BaseException | None = None
        try:
            await asyncio.shield(task)
        except asyncio.CancelledError:
            return
        except Exception as error:
            failure = error
        if token is not None:
            done = "ready" if failure is None else "failed to start"
            client.send_progress(token, lsp.WorkDoneProgressEnd(message=done))
        if failure is not None:
            _log.error("lsp-agent failed to start", exc_info=failure)
            message = f"lsp-agent failed to start: {_reason(failure)} (see the server's log)"
            client.notify(
                lsp.WINDOW_SHOW_MESSAGE, {"type": int(lsp.MessageType.Error), "message": message}
            )


def _reason(error: BaseException) -> str:
    """What stopped the start, in the words of the JSON-RPC error it maps to."""
    if isinstance(error, (OSError, RpcError)) or type(error).__module__.startswith("lsp_agent"):
        return str(error)
    return f"{type(error).__name__}: {error}"
