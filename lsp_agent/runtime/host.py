"""The runtime a front door holds: the store, one agent per workspace folder, the stored
sessions, the prompts and the turns; and the one order they close in.

A door says how an agent for a folder is made (:class:`AgentPlan`: its inputs, the editor it
talks to, its roots); the runtime builds it with :func:`lsp_agent.app.load_agent` on the
runtime's store the first time a session works in that folder, and keeps it for every later
session there (``one_agent``: one agent for every folder, the language server's multi-root
workspace).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

import attrs

from lsp_agent.app import AgentInputs, App, data_dir, load_agent, open_data_store
from lsp_agent.core.errors import LspAgentError
from lsp_agent.core.interfaces import Editor
from lsp_agent.core.session.service import SessionService
from lsp_agent.core.transcript import SessionInfo
from lsp_agent.core.turn.loop import TurnOutcome
from lsp_agent.core.uris import local_path
from lsp_agent.runtime.prompts import Prompts
from lsp_agent.runtime.sessions import Sessions
from lsp_agent.runtime.turns import TurnScheduler
from lsp_agent.runtime.until import UntilCheck, UntilGoal, UntilRun, run_until
from lsp_agent.storage.db import StorageError
from lsp_agent.storage.event_log import SqliteEventStore

__all__ = ["AgentPlan", "Runtime", "StorageError"]

DRAIN_WAIT = 2.0
"""How long closing gives an agent's side work (titles) to finish."""


@attrs.frozen(kw_only=True)
class AgentPlan:
    """How a door wants the agent of one folder made (see :func:`load_agent`)."""

    inputs: AgentInputs
    editor: Editor
    roots: Callable[[str], Sequence[str]] | None = None
    editor_diagnostics: bool = False
    mcp_servers: bool = True
    ready: Callable[[App], None] | None = None
    """Called once the agent is built (a door adopts its timeouts, watches its MCP servers)."""


Plan = Callable[[str], AgentPlan]
Closing = Callable[[], Awaitable[None]]


class Runtime:
    def __init__(
        self,
        *,
        store: SqliteEventStore,
        env: Mapping[str, str],
        plan: Plan | None = None,
        one_agent: bool = False,
    ) -> None:
        """``plan``: how to make an agent (none: the stored sessions only, a CLI command
        that reads them)."""
        self._store = store
        self._plan = plan
        self._one_agent = one_agent
        self._apps: dict[str, App] = {}
        self._folders: dict[str, str] = {}
        """The folder of each session this runtime created or admitted to (its agent's)."""
        self._loading: dict[str, asyncio.Lock] = {}
        self._closing: list[Closing] = []
        self._goals: dict[str, tuple[UntilRun, Callable[[UntilCheck], None]]] = {}
        """Sessions working until a command passes, their turns run in the background."""
        self.turns = TurnScheduler(run_turn=self._run_turn, has_pending=self._has_pending)
        self.sessions = Sessions(
            store=store, turns=self.turns, spill_root=data_dir(env) / "tool-output"
        )
        self.prompts = Prompts(store=store, turns=self.turns, service_of=self._service_of)

    @classmethod
    async def open(
        cls, env: Mapping[str, str], *, plan: Plan | None = None, one_agent: bool = False
    ) -> Runtime:
        """Open the data store (recovering dead owners' turns) for a new runtime."""
        return cls(store=await open_data_store(env), env=env, plan=plan, one_agent=one_agent)

    # -- the agents ---------------------------------------------------------------------

    async def agent(self, folder: str) -> App:
        """The agent for sessions working in ``folder`` (a real path; built once;
        ``ConfigError`` when it cannot be, tried again next time)."""
        key = "" if self._one_agent else folder
        async with self._loading.setdefault(key, asyncio.Lock()):
            app = self._apps.get(key)
            if app is None:
                if self._plan is None:
                    raise LspAgentError("this command runs no agent")
                plan = self._plan(folder)
                app = await load_agent(
                    plan.inputs,
                    editor=plan.editor,
                    store=self._store,
                    roots=plan.roots,
                    editor_diagnostics=plan.editor_diagnostics,
                    mcp_servers=plan.mcp_servers,
                )
                if plan.ready is not None:
                    plan.ready(app)
                self._apps[key] = app
            return app

    def loaded(self) -> list[App]:
        """The agents built so far."""
        return list(self._apps.values())

    async def agent_of(self, info: SessionInfo) -> App:
        """The agent of a stored session (the one for its folder)."""
        folder = local_path(info.workspace_folder)
        self._folders[info.session_id] = folder
        return await self.agent(folder)

    async def _service_of(self, info: SessionInfo) -> SessionService:
        return (await self.agent_of(info)).sessions

    # -- sessions -----------------------------------------------------------------------

    async def create(self, folder: str, **options: Any) -> str:
        """A new session working in ``folder`` (a real path); ``options``:
        ``SessionService.create``'s ``title``, ``mode``, ``model``."""
        app = await self.agent(folder)
        session_id = await app.sessions.create(workspace_folder=folder, **options)
        self._folders[session_id] = folder
        return session_id

    # -- turns --------------------------------------------------------------------------

    async def _run_turn(self, session_id: str) -> str:
        folder = self._folders.get(session_id)
        if folder is None:  # admitted by an earlier process
            info = await self.sessions.find(session_id)
            if info is None:  # deleted meanwhile
                return "end_turn"
            folder = local_path(info.workspace_folder)
        app = await self.agent(folder)
        outcome = await app.sessions.run_turn(session_id)  # the turn's one read of the row
        goal = self._goals.get(session_id)
        if goal is not None:
            until, report = goal
            after = await self.sessions.find(session_id)
            if after is not None:
                check = await until.after_turn(app, after, outcome.stop_reason)
                report(check)
                if not check.done:
                    return outcome.stop_reason  # its failure is pending: the next turn
            del self._goals[session_id]
        return outcome.stop_reason

    def work_until(
        self,
        info: SessionInfo,
        goal: UntilGoal,
        report: Callable[[UntilCheck], None] = lambda _check: None,
    ) -> None:
        """From the session's next background turn on, work until ``goal``'s command
        passes (runtime/until.py); a new goal replaces one still open."""
        self._goals[info.session_id] = (UntilRun(goal, start_cost=info.usage.cost), report)

    async def run_until(
        self,
        info: SessionInfo,
        goal: UntilGoal,
        report: Callable[[UntilCheck], None],
        **overrides: Any,
    ) -> tuple[TurnOutcome, UntilCheck]:
        """Turns in the foreground (:meth:`run_turn`) until ``goal``'s command passes or a
        bound is reached: the last turn's outcome and the last check."""
        return await run_until(
            await self.agent_of(info),
            info,
            goal,
            run_turn=lambda row: self.run_turn(row, **overrides),
            read=self.sessions.require,
            report=report,
        )

    async def _has_pending(self, session_id: str) -> bool:
        return bool(await self.sessions.pending(session_id))

    async def run_turn(self, info: SessionInfo, **overrides: Any) -> TurnOutcome:
        """Run a turn of ``info``'s session in the foreground, as the session's turn
        (``cancel`` stops it; cancelling the caller cancels it too). ``overrides``:
        ``SessionService.run_turn``'s ``mode``, ``model``, ``max_steps``."""
        app = await self.agent_of(info)
        task = asyncio.ensure_future(app.sessions.run_turn(info.session_id, **overrides))
        try:
            self.turns.claim(info.session_id, task)
        except BaseException:
            task.cancel()
            raise
        return await task

    # -- closing ------------------------------------------------------------------------

    def on_close(self, step: Closing) -> None:
        """Run ``step`` when closing, after the turns stopped and before the agents close
        (a door's own resources: its progress reports, the client's MCP servers)."""
        self._closing.append(step)

    async def aclose(self) -> None:
        """The one shutdown order: stop every turn (each records its end), the door's own
        steps, each agent's side work and MCP servers, and last the store."""
        try:
            await self.turns.aclose()
            for step in self._closing:
                await step()
            for app in self._apps.values():
                await app.sessions.drain(timeout=DRAIN_WAIT)
                if app.mcp is not None:  # the store is the runtime's, the MCP servers the app's
                    await app.mcp.aclose()
        finally:
            await self._store.close()
